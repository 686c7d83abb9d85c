/**
 * R80, R81 across journal formats. Format 3 (issue 40.2): a steering poll of the Agent's own
 * queues replies `{ messages, followUps: "none" }` when no follow-up waits, and the run skips the
 * follow-up poll (R10); the reply is in the job record, so a replay takes the same path. A format-2
 * journal (every follow-up poll a job record, every poll's reply an array) still resumes, polling
 * as it was written. The fixture was written by the build before format 3 (fb5c1ac) running
 * fixtures/make-agent-journal.mts, the same scenario as `session()` below.
 *
 * Format 4 (issue 40.2): an Agent's run whose steering queue is empty as it starts defers its
 * initial steering poll (R3) to its first job (the input says so); that job's reply may be that
 * steering was queued before it began (`steeringQueued`), and the run then polls. A format-3
 * journal (written by main 452f5ea, fixtures/agent-journal-format-3.json) still resumes, with
 * the initial poll it was written with.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AgentMessage, AgentTool, Clock } from "../../src/index.js";
import { Agent, scriptedModel, scriptedStreamFn, systemClock, text, toolCall } from "../../src/index.js";
import type { Json } from "../../src/store/run-store.js";
import { replayEvents } from "../../src/durable/replay.js";
import { JOURNAL_FORMAT, type JournalRecord } from "../../src/durable/records.js";
import { memoryRunStore } from "../support/memory-run-store.js";

const clock: Clock = { now: () => 1_800_000_000_000, monotonic: () => 0, setTimer: (ms, fire) => systemClock.setTimer(ms, fire) };
const read: AgentTool = {
  name: "read",
  label: "read",
  description: "read",
  parameters: { type: "object", properties: {} },
  // (A crash between its intent and its outcome runs it again: every prefix ends the same.)
  replay: "safe",
  execute: async () => ({ content: [{ type: "text", text: "read ok" }], details: {} }),
};

/** A tool turn, an answer, then (a follow-up was queued before the prompt) one more answer. */
function session(store: ReturnType<typeof memoryRunStore>) {
  const streamFn = scriptedStreamFn((call) => {
    const answered = call.context.messages.filter((m) => m.role === "assistant").length;
    return answered === 0 ? { content: [text("Reading."), toolCall("read", {}, "t0")] } : { content: [text(`Answer ${answered}.`)] };
  });
  return new Agent({ streamFn, initialState: { model: scriptedModel, tools: [read] }, clock, durable: { store, sessionId: "s" } });
}

const timeless = (value: unknown) => JSON.parse(JSON.stringify(value, (key, v) => (key === "timestamp" || key === "durationMs" ? 0 : v)));

/** Each poll's job and the form of its reply, in journal order (and a job not begun because steering was queued, R3). */
function polls(records: readonly unknown[]): string[] {
  return (records as JournalRecord[]).flatMap((record) => {
    if (record.k === "job" && record.reply.ok && record.reply.steeringQueued) return [`${record.job} steeringQueued`];
    if (record.k !== "job" || (record.job !== "getSteeringMessages" && record.job !== "getFollowUpMessages") || !record.reply.ok) return [];
    const output = record.reply.output as unknown;
    const form = Array.isArray(output) ? `[${output.length}]` : JSON.stringify({ ...(output as object), messages: (output as { messages: unknown[] }).messages.length });
    return [`${record.job} ${form}`];
  });
}

/** A fresh Agent resumes a store that holds `records` up to `n` (a crash right after record `n`). */
async function resumedAt(records: Json[], n: number): Promise<Agent | undefined> {
  const prefix = records.slice(0, n);
  if (!prefix.some((record) => (record as { k: string }).k === "run")) return undefined;
  const crashed = memoryRunStore();
  const writer = crashed.openSession("s");
  prefix.forEach((record) => writer.append(record));
  writer.release();
  const agent = session(crashed);
  expect(await agent.resume({ after: (await replayEvents(prefix)).length }), `crash after record ${n}`).toBe(true);
  await agent.waitForIdle();
  return agent;
}

/**
 * A crash after each record from `from` on: every one that holds the run resumes to `messages` with
 * empty queues. Returns how many resumed.
 */
async function resumesAtEveryRecord(records: Json[], messages: AgentMessage[], from = 1): Promise<number> {
  let resumed = 0;
  for (let n = from; n < records.length; n++) {
    const agent = await resumedAt(records, n);
    if (!agent) continue;
    expect(timeless(agent.state.messages), `crash after record ${n}`).toEqual(timeless(messages));
    expect(agent.hasQueuedMessages(), `crash after record ${n}`).toBe(false);
    resumed++;
  }
  return resumed;
}

describe("R81: journals of this format and the one before resume", () => {
  it("R10, R81: a format-2 Agent journal (a follow-up poll after every steering poll that ends the inner loop) resumes at every record to the same transcript", async () => {
    const fixture = JSON.parse(readFileSync(new URL("./fixtures/agent-journal-format-2.json", import.meta.url), "utf8")) as { records: Json[]; messages: AgentMessage[] };
    const { records } = fixture;
    expect((records.find((record) => (record as { k: string }).k === "run") as { v: number }).v).toBe(2);
    expect(polls(records)).toEqual([
      "getSteeringMessages [0]",
      "getSteeringMessages [0]",
      "getSteeringMessages [0]",
      "getSteeringMessages [0]",
      "getFollowUpMessages [1]",
      "getSteeringMessages [0]",
      "getFollowUpMessages [0]",
    ]);
    expect(await resumesAtEveryRecord(records, fixture.messages)).toBe(records.length - 2);
  });

  it("R3, R81: a format-3 Agent journal (an initial steering poll in every run) resumes at every record to the same transcript", async () => {
    const fixture = JSON.parse(readFileSync(new URL("./fixtures/agent-journal-format-3.json", import.meta.url), "utf8")) as { records: Json[]; messages: AgentMessage[] };
    const { records } = fixture;
    expect((records.find((record) => (record as { k: string }).k === "run") as { v: number }).v).toBe(3);
    expect(polls(records)).toEqual([
      "getSteeringMessages [0]",
      "getSteeringMessages [0]",
      "getSteeringMessages [0]",
      "getSteeringMessages [0]",
      "getFollowUpMessages [1]",
      'getSteeringMessages {"messages":0,"followUps":"none"}',
    ]);
    expect(await resumesAtEveryRecord(records, fixture.messages)).toBe(records.length - 2);
  });

  it("R3, R4a, R10, R80, R81: this build writes format 4: the initial steering poll is deferred (the queue was empty), a steering poll says what it left in the queues, and the journal resumes at every record", async () => {
    const store = memoryRunStore();
    const agent = session(store);
    agent.followUp({ role: "user", content: "and then?", timestamp: clock.now() });
    await agent.prompt({ role: "user", content: "go", timestamp: clock.now() });
    const records = store.readSession("s").records().map((r) => r.record);
    expect(JOURNAL_FORMAT).toBe(4);
    const run = records.find((record) => (record as { k: string }).k === "run") as { v: number; input: { defersInitialSteeringPoll?: boolean } };
    expect(run.v).toBe(4);
    expect(run.input.defersInitialSteeringPoll).toBe(true);
    // No initial poll (R3 deferred); each poll that took nothing says the steering queue stayed
    // empty (R4a: the tool turn's re-poll is skipped); the last one also says no follow-up waits (R10).
    expect(polls(records)).toEqual([
      'getSteeringMessages {"messages":0,"steering":"none"}',
      'getSteeringMessages {"messages":0,"steering":"none"}',
      "getFollowUpMessages [1]",
      'getSteeringMessages {"messages":0,"followUps":"none","steering":"none"}',
    ]);
    const full = agent.state.messages;
    expect(full.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant", "user", "assistant"]);
    for (let n = 1; n < records.length; n++) {
      const resumed = await resumedAt(records, n);
      if (resumed) expect(timeless(resumed.state.messages), `crash after record ${n}`).toEqual(timeless(full));
    }
  });

  it("R3, R80, R81: steering a listener queued at agent_start: the run's first job replies that steering was queued (journaled), the initial poll takes it, and the journal resumes at every record", async () => {
    const store = memoryRunStore();
    const agent = session(store);
    let steered = false;
    agent.subscribe((event) => {
      if (event.type !== "agent_start" || steered) return;
      steered = true;
      agent.steer({ role: "user", content: "read first", timestamp: clock.now() });
    });
    await agent.prompt({ role: "user", content: "go", timestamp: clock.now() });
    const records = store.readSession("s").records().map((r) => r.record);
    expect(polls(records)).toEqual([
      "convertToLlm steeringQueued",
      'getSteeringMessages {"messages":1,"followUps":"none"}',
      'getSteeringMessages {"messages":0,"followUps":"none","steering":"none"}',
      'getSteeringMessages {"messages":0,"followUps":"none","steering":"none"}',
    ]);
    const full = agent.state.messages;
    // The steering message goes with the prompt, before the first request (as the reference's R3 poll takes it).
    expect(full.map((m) => (m.role === "user" ? `user ${(m as { content: string }).content}` : m.role))).toEqual(["system", "user go", "user read first", "assistant", "toolResult", "assistant"]);
    // (A crash before the steer's own `queue` record is a run in which nobody steered.)
    const steeredAt = records.findIndex((record) => (record as { k: string }).k === "queue") + 1;
    expect(steeredAt).toBeGreaterThan(1);
    expect(await resumesAtEveryRecord(records, full, steeredAt)).toBe(records.length - steeredAt);
  });
});
