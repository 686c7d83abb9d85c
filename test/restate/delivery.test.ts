/**
 * Issue 33 on Restate (SPEC R81 amended, R90): the session object's numbered event log follows the
 * embedded store's delivery contract. The same scripted session, run embedded and on Restate, gives
 * every event the same sequence number and the same provisional flag; a worker killed while a
 * response streams (its first calls already in the log) is replaced, and the resumed invocation
 * retracts the partial message (`message_discarded`, reason `interrupted`, `fromSeq` at its first
 * event) before the re-requested answer, which the model words differently. A consumer polling
 * `events {after}` across the kill gets each number once and, dropping what the retraction names,
 * never a message spliced from two answers. The same session embedded, its process killed at the
 * same point and resumed with `after`, gives the same (seq, type, provisional, fromSeq) list: the
 * retracted events keep their numbers and the retraction takes the next one, on both.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage, AnyAgentEvent } from "../../src/types.js";
import { runAgentLoop } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { startLocalRestateServer, type LocalRestateServer } from "../../src/restate/local-server.js";
import { readSessionJournal } from "../../src/restate/journal-client.js";
import { replayRun } from "../../src/durable/replay.js";
import { freePort, startWorker } from "./support.js";
import { sessionScript } from "./fixtures/session-script.js";

let server: LocalRestateServer;
const root = mkdtempSync(join(tmpdir(), "xstate-agent-restate-delivery-"));

beforeAll(async () => {
  server = await startLocalRestateServer({ retryIntervalMs: 50 });
}, 30_000);
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.ingressUrl}/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
};

interface LogEntry {
  id: number;
  event: AnyAgentEvent;
  provisional: boolean;
}

const readLog = async (key: string, after = 0) => ((await call(`agentSession/${key}/events`, { after, limit: 100_000 })) as { events: LogEntry[] }).events;

/** What the numbering test compares: (seq, event type, provisional). */
const numbered = (seq: number, event: AnyAgentEvent, provisional: boolean) => `${seq} ${event.type}${provisional ? " provisional" : ""}`;

describe("issue 33 on Restate: the event log is numbered as the embedded store numbers it (R81, R90)", () => {
  // (Parallel batches, not calls streamed while the response streams (R70): there, where a call's
  // events fall among its response's deltas depends on timing, embedded and on Restate alike.)
  const env: Record<string, string> = {};
  {
    it("R81, R90: the same two-prompt session (5 turns of parallel batches, then one answer) embedded and on Restate: equal (seq, type, provisional) sequences", async () => {
      const key = "numbering";
      // Embedded: a durable session in the memory store, each event's delivery from the sink.
      const script = sessionScript(env);
      const store = createMemoryStore();
      const embedded: string[] = [];
      const sink = (event: AnyAgentEvent, delivery?: { seq: number; provisional: boolean }) => void embedded.push(numbered(delivery!.seq, event, delivery!.provisional));
      const durable = { store, sessionId: key };
      const user = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
      const first = await runAgentLoop([user(key)], { messages: [], tools: script.tools }, script.config, sink as never, undefined, script.streamFn, { durable });
      await runAgentLoop([user("again")], { messages: first, tools: script.tools }, script.config, sink as never, undefined, script.streamFn, { durable });

      const worker = await startWorker(await freePort(), env);
      try {
        await server.registerDeployment(`http://127.0.0.1:${worker.port}`);
        await call(`agentSession/${key}/prompt`, { text: key });
        await call(`agentSession/${key}/prompt`, { text: "again" });
        // (The log is read through the object's handlers: a worker serves them.)
        const log = await readLog(key);
        const onRestate = log.map((entry) => numbered(entry.id, entry.event, entry.provisional));
        expect(onRestate).toEqual(embedded);
        // Provisional events are there to compare: a response's start and deltas.
        expect(onRestate.filter((line) => line.endsWith("provisional")).length).toBeGreaterThan(10);
        // R83: the journal replays offline to the same numbers (the second run's first event follows the first run's last).
        const runs = await replayRun(await readSessionJournal(server.ingressUrl, key));
        expect(runs.map((run) => [run.firstSeq, run.events.length])).toEqual([
          [1, runs[0].events.length],
          [runs[0].events.length + 1, log.length - runs[0].events.length],
        ]);
      } finally {
        await worker.kill();
      }
    }, 60_000);
  }
});

/** What the parity with a crash compares: (seq, type, provisional, fromSeq). */
const numberedAll = (seq: number, event: AnyAgentEvent, provisional: boolean) => `${numbered(seq, event, provisional)}${event.type === "message_discarded" ? ` from ${(event as { fromSeq?: number }).fromSeq}` : ""}`;

/**
 * The Restate retraction test's session embedded (memory store): the first process delivers up to
 * `crashAt`, where the store is copied (the crash: a new process finds it so) and the run dropped;
 * a resume on the copy with `after: crashAt` delivers the rest. Returns both processes' deliveries.
 */
async function embeddedCrash(key: string, crashAt: number): Promise<string[]> {
  // (A shorter pause than the workers': every call's tool still ends within it.)
  const script = sessionScript({ STREAMING: "1", STREAM_PAUSE_MS: "300", STREAM_END_PAUSE_MS: "400", REQUESTS: join(root, "embedded-requests.txt") });
  const store = createMemoryStore();
  const copy = createMemoryStore();
  const got: string[] = [];
  const controller = new AbortController();
  let crashed = false;
  const first = (event: AnyAgentEvent, delivery?: { seq: number; provisional: boolean }) => {
    if (crashed) return;
    got.push(numberedAll(delivery!.seq, event, delivery!.provisional));
    if (delivery!.seq !== crashAt) return;
    // Nothing is delivered before it is in a record: the store now holds what a restarted process would find.
    crashed = true;
    const writer = copy.openSession(key);
    for (const { record } of store.readSession(key).records()) writer.append(record);
    writer.release();
    controller.abort();
  };
  const user: AgentMessage = { role: "user", content: [{ type: "text", text: key }], timestamp: 0 };
  await runAgentLoop([user], { messages: [], tools: script.tools }, script.config, first as never, controller.signal, script.streamFn, { durable: { store, sessionId: key } }).catch(() => []);
  expect(crashed).toBe(true);
  const resumed = (event: AnyAgentEvent, delivery?: { seq: number; provisional: boolean }) => void got.push(numberedAll(delivery!.seq, event, delivery!.provisional));
  const result = await resumeAgentLoop({ store: copy, sessionId: key }, { config: { ...script.config, onRuntimeEvent: resumed as never }, tools: script.tools, streamFn: script.streamFn, sink: resumed as never, after: crashAt });
  expect(result.resumed).toBe(true);
  return got;
}

/** The text of an assistant message so far (its text blocks). */
const textOf = (event: AnyAgentEvent): string => {
  const message = (event as { message?: { role?: string; content?: unknown } }).message;
  return Array.isArray(message?.content) ? message.content.map((block: { type: string; text?: string }) => (block.type === "text" ? block.text : "")).join("") : "";
};

describe("issue 33 on Restate: a worker killed mid-response (R81, R90)", () => {
  it("R81, R90: the resumed invocation retracts the partial message before the re-requested answer; a consumer of `events {after}` gets each event once and no spliced message", async () => {
    const key = "retract";
    // Calls streamed, the response pausing 1.5 s between its calls: the kill lands inside a response
    // whose start, text and first call are in the log.
    const env = { STREAMING: "1", STREAM_PAUSE_MS: "1500", STREAM_END_PAUSE_MS: "1500", REQUESTS: join(root, "requests.txt") };
    const port = await freePort();
    const first = await startWorker(port, env);
    await server.registerDeployment(`http://127.0.0.1:${port}`);
    // The consumer: polls `events {after}` with the last number it got, from before the prompt to the end.
    const consumed: LogEntry[] = [];
    let polling = true;
    const consumer = (async () => {
      while (polling) {
        const page = await readLog(key, consumed.at(-1)?.id ?? 0).catch(() => []);
        consumed.push(...page);
        if (page.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      consumed.push(...(await readLog(key, consumed.at(-1)?.id ?? 0)));
    })();
    const reply = call(`agentSession/${key}/prompt`, { text: key }, { "idempotency-key": key });
    // Kill once turn 1's response is streaming: its `message_start` and its first call in the log, its `message_end` not.
    const isAssistant = (entry: LogEntry, type: string) => entry.event.type === type && (entry.event as { message: { role: string } }).message.role === "assistant";
    const turnOneStart = () => consumed.filter((entry) => isAssistant(entry, "message_start"))[1];
    const streaming = () =>
      turnOneStart() !== undefined && consumed.some((entry) => entry.event.type === "tool_execution_start" && (entry.event as { toolCallId: string }).toolCallId === `${key}:t1-0`) && consumed.filter((entry) => isAssistant(entry, "message_end")).length < 2;
    while (!streaming()) await new Promise((resolve) => setTimeout(resolve, 10));
    const partial = consumed.filter((entry) => entry.id >= turnOneStart().id);
    await first.kill();
    const second = await startWorker(port, env);
    try {
      const response = (await reply) as { messages: AgentMessage[]; lastEventId: number };
      polling = false;
      await consumer;

      // Each number once, in order, across the kill.
      expect(consumed.map((entry) => entry.id)).toEqual(Array.from({ length: response.lastEventId }, (_, i) => i + 1));
      // What the consumer saw of the interrupted response before the kill: provisional, from the first answer.
      const startSeq = partial[0].id;
      expect(partial.filter((entry) => entry.event.type.startsWith("message_")).every((entry) => entry.provisional)).toBe(true);
      expect(textOf(partial.filter((entry) => entry.event.type === "message_update").at(-1)!.event)).toBe("Turn 1.");

      // One retraction, pointing back at that response's first event, before the second answer starts.
      const retractions = consumed.filter((entry) => entry.event.type === "message_discarded");
      expect(retractions.map((entry) => entry.event)).toEqual([{ type: "message_discarded", reason: "interrupted", fromSeq: startSeq }]);
      const retractedAt = retractions[0].id;
      // Two answers started before it (turn 0's, and turn 1's first), five after (turn 1's second, then turns 2–5).
      const starts = consumed.filter((entry) => isAssistant(entry, "message_start")).map((entry) => entry.id < retractedAt);
      expect(starts).toEqual([true, true, false, false, false, false, false]);

      // The consumer applies the contract: drop the provisional events from `fromSeq` up to the retraction.
      const kept = consumed.filter((entry) => !(entry.provisional && entry.id >= startSeq && entry.id < retractedAt) && entry.event.type !== "message_discarded");
      // Every assistant message is one answer: its start and updates are prefixes of its end.
      const messages: { start: string; updates: string[]; end: string | undefined }[] = [];
      for (const { event } of kept) {
        if (!event.type.startsWith("message_") || (event as { message: { role: string } }).message.role !== "assistant") continue;
        if (event.type === "message_start") messages.push({ start: textOf(event), updates: [], end: undefined });
        else if (event.type === "message_update") messages.at(-1)!.updates.push(textOf(event));
        else messages.at(-1)!.end = textOf(event);
      }
      expect(messages.map((message) => message.end)).toEqual(["Turn 0.", "Turn 1. (asked again 1)", "Turn 2.", "Turn 3.", "Turn 4.", "all done"]);
      for (const message of messages) for (const text of [message.start, ...message.updates]) expect(message.end!.startsWith(text), `${text} / ${message.end}`).toBe(true);
      // The transcript has the second answer.
      expect(response.messages.filter((message) => message.role === "assistant").map((message) => textOf({ type: "message_end", message } as never))).toEqual(messages.map((message) => message.end));
      // No tool ran twice across the two workers.
      const executed = [...first.executed, ...second.executed];
      expect(executed.length).toBe(new Set(executed).size);

      // R83: the journal both workers wrote replays offline to the log, the retraction where it was, flags included.
      const runs = await replayRun(await readSessionJournal(server.ingressUrl, key));
      expect(runs.flatMap((run) => run.events).map((event) => JSON.stringify(event))).toEqual(consumed.map((entry) => JSON.stringify(entry.event)));
      expect(runs.flatMap((run) => run.provisional)).toEqual(consumed.map((entry) => entry.provisional));

      // The same session embedded, its process "killed" at the same point: right after it delivered
      // the event before the retraction's number (the store as it was then is what a new process
      // finds), resumed with that `after`. Equal (seq, type, provisional, fromSeq) lists.
      const embedded = await embeddedCrash(key, retractedAt - 1);
      expect(embedded).toEqual(consumed.map((entry) => numberedAll(entry.id, entry.event, entry.provisional)));
    } finally {
      polling = false;
      await second.kill();
    }
  }, 120_000);
});
