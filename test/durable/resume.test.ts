/**
 * R81 in process, at every record: the crash test's session is journaled once, then for each
 * prefix of its journal (a crash right after that record was written) a fresh store holding only
 * that prefix is resumed with fresh implementations, and checked: every call has one result, no
 * call of a tool without `replay: "safe"` ran twice (counting an `execute` whose intent made it
 * into the prefix as run), the transcript equals the uninterrupted one except interrupted-call
 * results, and no response is delivered twice (the prefix's, replayed, plus the resumed run's).
 */
import { describe, expect, it } from "vitest";
import type { AnyAgentEvent, AssistantMessage, ToolResultMessage } from "../../src/index.js";
import { runAgentLoop } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { replayEvents } from "../../src/durable/replay.js";
import type { Json } from "../../src/store/run-store.js";
import { SessionLockedError, UnknownSessionError } from "../../src/store/errors.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import type { EventDelivery } from "../../src/durable/delivery.js";
import { crashSession, fixedClock, prompt } from "./crash-scenario.js";

const INTERRUPTED = "was interrupted before it finished";
const timeless = (value: unknown) => JSON.stringify(value, (key, v) => (key === "timestamp" || key === "durationMs" ? 0 : v));
const assistantEnds = (events: AnyAgentEvent[]) => events.filter((e) => e.type === "message_end" && (e.message as { role: string }).role === "assistant").length;

async function uninterrupted() {
  const store = memoryRunStore();
  const events: AnyAgentEvent[] = [];
  const session = crashSession(() => {}, { fast: true });
  const messages = await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, (e) => void events.push(e), undefined, session.streamFn, {
    durable: { store, sessionId: "s" },
    clock: fixedClock,
  });
  return { store, events, messages, records: store.readSession("s").records().map((r) => r.record) };
}

function seeded(records: Json[]) {
  const store = memoryRunStore();
  const writer = store.openSession("s");
  for (const record of records) writer.append(record);
  writer.release();
  return store;
}

describe("R81: resume after a crash at any record", () => {
  it("R81: every prefix of the journal resumes to the uninterrupted transcript, nothing completed runs again", { timeout: 120_000 }, async () => {
    const full = await uninterrupted();
    expect(full.records.at(-1)).toMatchObject({ k: "end" });
    let interrupted = 0;
    // (n = all of them: a crash between the run's `end` record and its quiet point, R84.)
    for (let n = 1; n <= full.records.length; n++) {
      const prefix = full.records.slice(0, n);
      const store = seeded(prefix);
      const executions: Record<string, number> = {};
      for (const record of prefix) if ((record as { k: string }).k === "intent") executions[(record as { toolCallId: string }).toolCallId] = 1;
      const session = crashSession((id) => void (executions[id] = (executions[id] ?? 0) + 1), { fast: true });
      const resumedEvents: AnyAgentEvent[] = [];
      // onLive once, before the sink got anything: what it gets is live from then on.
      const live: number[] = [];
      const onLive = () => void live.push(resumedEvents.length);
      // R81: the consumer saw every event the prefix holds (it passes the last one's sequence number).
      const held = await replayEvents(prefix);
      const result = await resumeAgentLoop(
        { store, sessionId: "s" },
        { config: session.config, tools: session.tools, streamFn: session.streamFn, sink: (e) => void resumedEvents.push(structuredClone(e)), clock: fixedClock, onLive, after: held.length },
      );
      expect(result.resumed).toBe(true);
      const at = `crash after record ${n} (${JSON.stringify(prefix.at(-1)).slice(0, 80)})`;
      expect(live, at).toEqual([0]);
      const messages = result.messages;
      // Every call has exactly one result.
      const calls = messages.flatMap((m) => (m.role === "assistant" ? (m as AssistantMessage).content.filter((b) => b.type === "toolCall") : []));
      for (const call of calls) expect(messages.filter((m) => m.role === "toolResult" && (m as ToolResultMessage).toolCallId === call.id), at).toHaveLength(1);
      // No tool without replay: "safe" ran twice; every call ran or was reported interrupted.
      for (const [id, count] of Object.entries(executions)) if (!id.endsWith("-read")) expect(count, `${at}: ${id}`).toBeLessThanOrEqual(1);
      // The transcript, except interrupted results of calls that are not replay-safe.
      expect(messages).toHaveLength(full.messages.length);
      messages.forEach((message, i) => {
        const text = message.role === "toolResult" ? ((message as ToolResultMessage).content[0] as { text: string }).text : "";
        if (text.includes(INTERRUPTED)) {
          interrupted++;
          expect((message as ToolResultMessage).toolCallId, at).not.toMatch(/-read$/);
          expect((message as ToolResultMessage).toolCallId).toBe((full.messages[i] as ToolResultMessage).toolCallId);
        } else expect(timeless(message), `${at}: message ${i}`).toBe(timeless(full.messages[i]));
      });
      // No response delivered twice: those the journal holds are not delivered again (R81).
      expect(assistantEnds(held) + assistantEnds(resumedEvents), at).toBe(assistantEnds(full.events));
      // With `after`, what the consumer saw and what the resume delivered are the journal's replay, exactly (R81, R83).
      // (The sink gets pi's events, copied as delivered; the replay has the runtime events too: the retraction.)
      const replayed = (await replayEvents(store.readSession("s").records())).filter((e) => e.type !== "message_discarded");
      expect(replayed.map((e) => e.type), at).toEqual(held.concat(resumedEvents).map((e) => e.type));
      expect(replayed.map(timeless), at).toEqual(held.concat(resumedEvents).map(timeless));
      // The resumed session's journal replays to what its consumers saw, before and after the crash.
      const all = store.readSession("s").records();
      expect(all.at(-1)?.record).toMatchObject({ k: "end" });
    }
    expect(interrupted).toBeGreaterThan(0);
  });

  it("R81: a consumer that drops what a retraction takes back sees each tool call start and end once, after a crash at any record", { timeout: 120_000 }, async () => {
    const full = await uninterrupted();
    let retractions = 0;
    for (let n = 1; n <= full.records.length; n++) {
      const store = seeded(full.records.slice(0, n));
      const session = crashSession(() => {}, { fast: true });
      // A consumer that saw nothing: the resume delivers the journal's events, then the live ones, each with its number and flag.
      const delivered: { seq: number; provisional: boolean; event: AnyAgentEvent }[] = [];
      const record = (event: AnyAgentEvent, delivery?: EventDelivery) => void delivered.push({ seq: delivery!.seq, provisional: delivery!.provisional, event: structuredClone(event) });
      await resumeAgentLoop({ store, sessionId: "s" }, { config: { ...session.config, onRuntimeEvent: record }, tools: session.tools, streamFn: session.streamFn, sink: record, clock: fixedClock, after: 0 });
      // The delivery contract's consumer: one event a number; a retraction drops the provisional ones from its `fromSeq` on.
      const view = new Map<number, { provisional: boolean; event: AnyAgentEvent }>();
      for (const { seq, provisional, event } of delivered) {
        if (event.type === "message_discarded" && event.reason === "interrupted") {
          retractions++;
          for (const [at, kept] of view) if (at >= event.fromSeq! && kept.provisional) view.delete(at);
        } else view.set(seq, { provisional, event });
      }
      const count = (type: string) => {
        const counts: Record<string, number> = {};
        for (const { event } of view.values()) if (event.type === type) counts[(event as { toolCallId: string }).toolCallId] = (counts[(event as { toolCallId: string }).toolCallId] ?? 0) + 1;
        return counts;
      };
      const at = `crash after record ${n} (${JSON.stringify(full.records[n - 1]).slice(0, 80)})`;
      const starts = count("tool_execution_start");
      expect(Object.values(starts).every((c) => c === 1), `${at}: ${JSON.stringify(starts)}`).toBe(true);
      expect(count("tool_execution_end"), at).toEqual(starts);
    }
    expect(retractions).toBeGreaterThan(0);
  });

  it("R81: a crash during the resume resumes again: every prefix of a resumed journal, cut again halfway through what the resume wrote", async () => {
    const full = await uninterrupted();
    let twice = 0;
    for (let n = 2; n < full.records.length; n += 3) {
      const store = seeded(full.records.slice(0, n));
      // Executions that happened before the second crash: the original process's (its intents), and
      // the first resume's that began while the journal held at most m records (set below).
      const executions: Record<string, number> = {};
      for (const record of full.records.slice(0, n)) if ((record as { k: string }).k === "intent") executions[(record as { toolCallId: string }).toolCallId] = 1;
      const firstResume: { id: string; records: number }[] = [];
      const first = crashSession((id) => void firstResume.push({ id, records: store.readSession("s").records().length }), { fast: true });
      await resumeAgentLoop({ store, sessionId: "s" }, { config: first.config, tools: first.tools, streamFn: first.streamFn, sink: () => {}, clock: fixedClock });
      const resumedRecords = store.readSession("s").records().map((r) => r.record);
      // The second crash: halfway through what the first resume appended.
      const m = n + Math.floor((resumedRecords.length - n) / 2);
      if (m <= n) continue;
      for (const { id, records } of firstResume) if (records <= m) executions[id] = (executions[id] ?? 0) + 1;
      const again = seeded(resumedRecords.slice(0, m));
      const second = crashSession((id) => void (executions[id] = (executions[id] ?? 0) + 1), { fast: true });
      const result = await resumeAgentLoop({ store: again, sessionId: "s" }, { config: second.config, tools: second.tools, streamFn: second.streamFn, sink: () => {}, clock: fixedClock });
      expect(result.resumed).toBe(true);
      twice++;
      const at = `crash after record ${n}, then after ${m}`;
      expect(result.messages, at).toHaveLength(full.messages.length);
      result.messages.forEach((message, i) => {
        const text = message.role === "toolResult" ? ((message as ToolResultMessage).content[0] as { text: string }).text : "";
        if (!text.includes(INTERRUPTED)) expect(timeless(message), `${at}: message ${i}`).toBe(timeless(full.messages[i]));
        else expect((message as ToolResultMessage).toolCallId, at).not.toMatch(/-read$/);
      });
      for (const [id, count] of Object.entries(executions)) if (!id.endsWith("-read")) expect(count, `${at}: ${id}`).toBeLessThanOrEqual(1);
    }
    expect(twice).toBeGreaterThan(10);
  });

  it("R83: a journal whose `end` follows fewer records than the run asks for is a JournalDivergedError, not a wait forever", async () => {
    const full = await uninterrupted();
    const kinds = full.records.map((record) => (record as { k: string }).k);
    const lastJob = kinds.lastIndexOf("job");
    // The run's last reply is gone, its `end` kept (a damaged or hand-edited journal).
    const store = seeded([...full.records.slice(0, lastJob), ...full.records.slice(lastJob + 1)]);
    const session = crashSession(() => {}, { fast: true });
    const outcome = await Promise.race([
      resumeAgentLoop({ store, sessionId: "s" }, { config: session.config, tools: session.tools, streamFn: session.streamFn, sink: () => {}, clock: fixedClock }).then(
        () => "resolved",
        (error: Error) => error.name,
      ),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000)),
    ]);
    expect(outcome).toBe("JournalDivergedError");
  });

  it("R81: a finished session has nothing to resume; an unknown session is a typed error; a second writer is refused (R84)", async () => {
    const full = await uninterrupted();
    const session = crashSession(() => {}, { fast: true });
    const options = { config: session.config, tools: session.tools, streamFn: session.streamFn, sink: () => {} };
    await expect(resumeAgentLoop({ store: full.store, sessionId: "s" }, options)).resolves.toEqual({ resumed: false, messages: [] });
    await expect(resumeAgentLoop({ store: full.store, sessionId: "nope" }, options)).rejects.toBeInstanceOf(UnknownSessionError);
    const store = seeded(full.records.slice(0, 5));
    const held = store.openSession("s");
    await expect(resumeAgentLoop({ store, sessionId: "s" }, options)).rejects.toBeInstanceOf(SessionLockedError);
    held.release();
    await expect(resumeAgentLoop({ store, sessionId: "s" }, options)).resolves.toMatchObject({ resumed: true });
  });
});
