/**
 * R80, R81 through the Agent: `durable: { store, sessionId }` journals every run and saves the
 * idle session (R13's persisted snapshot) when a run ends; `agent.resume()` in a fresh Agent
 * takes the stored session back and continues a run the journal holds unfinished. Crashes are
 * simulated by a fresh store holding a prefix of the journal (a crash right after that record).
 */
import { describe, expect, it, vi } from "vitest";
import type { AgentMessage, AnyAgentEvent, ToolResultMessage } from "../../src/index.js";
import { Agent, scriptedModel } from "../../src/index.js";
import type { Json } from "../../src/store/run-store.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { replayEvents } from "../../src/durable/replay.js";
import { crashSession, fixedClock } from "./crash-scenario.js";

const timeless = (value: unknown) => JSON.stringify(value, (key, v) => (key === "timestamp" || key === "durationMs" ? 0 : v));
const assistantEnds = (events: AnyAgentEvent[]) => events.filter((e) => e.type === "message_end" && (e.message as { role: string }).role === "assistant").length;

function agent(store: ReturnType<typeof memoryRunStore>, count: (id: string) => void = () => {}) {
  const session = crashSession(count, { fast: true });
  const events: AnyAgentEvent[] = [];
  const instance = new Agent({
    streamFn: session.streamFn,
    initialState: { model: scriptedModel, tools: session.tools, systemPrompt: "be brief" },
    clock: fixedClock,
    durable: { store, sessionId: "s" },
  });
  instance.subscribe((event) => void events.push(event));
  return { agent: instance, events };
}

describe("R81: an Agent resumes its stored session", () => {
  it("R80, R81: a durable Agent's session resumes at every record of its journal, in a fresh Agent", { timeout: 120_000 }, async () => {
    const store = memoryRunStore();
    const first = agent(store);
    await first.agent.prompt("go");
    const afterFirst = store.readSession("s");
    const quiet = afterFirst.snapshot();
    expect(quiet?.snapshot).toMatchObject({ kind: "agent" });
    expect(quiet?.atSeq).toBe(afterFirst.records().length);
    const fullFirst = first.agent.state.messages.slice();
    // A second run (one response), after the first run's quiet point.
    await first.agent.prompt("more");
    const full = first.agent.state.messages.slice();
    expect(full.length).toBeGreaterThan(fullFirst.length);
    const records = store.readSession("s").records().map((r) => r.record);
    const kind = (record: unknown) => (record as { k: string }).k;
    let interrupted = 0;
    for (let n = 1; n < records.length; n++) {
      const crashed = memoryRunStore();
      const writer = crashed.openSession("s");
      records.slice(0, n).forEach((record: Json) => writer.append(record));
      if (quiet!.atSeq <= n) writer.saveSnapshot(quiet!.snapshot, quiet!.atSeq);
      writer.release();
      const runStart = records.slice(0, n).map(kind).lastIndexOf("run");
      if (records.slice(runStart, n).some((record) => kind(record) === "end")) continue;
      const executions: Record<string, number> = {};
      for (const record of records.slice(runStart, n)) if (kind(record) === "intent") executions[(record as { toolCallId: string }).toolCallId] = 1;
      const second = agent(crashed, (id) => void (executions[id] = (executions[id] ?? 0) + 1));
      // R81: onLive once, when the journal ran out: no listener had an event of the resumed run yet.
      const live: number[] = [];
      // R81: the listeners saw every event the prefix holds (they pass the last one's sequence number).
      const after = (await replayEvents(records.slice(0, n))).length;
      expect(await second.agent.resume({ after, onLive: () => void live.push(second.events.length) })).toBe(true);
      const at = `crash after record ${n}`;
      expect(live, at).toEqual([0]);
      const expected = n < quiet!.atSeq ? fullFirst : full;
      const messages = second.agent.state.messages;
      expect(messages, at).toHaveLength(expected.length);
      messages.forEach((message: AgentMessage, i: number) => {
        const text = message.role === "toolResult" ? ((message as ToolResultMessage).content[0] as { text: string }).text : "";
        if (text.includes("was interrupted before it finished")) {
          interrupted++;
          expect((message as ToolResultMessage).toolCallId, at).not.toMatch(/-read$/);
        } else expect(timeless(message), `${at}: message ${i}`).toBe(timeless(expected[i]));
      });
      for (const [id, count] of Object.entries(executions)) if (!id.endsWith("-read")) expect(count, `${at}: ${id}`).toBeLessThanOrEqual(1);
      // Listeners get the events from the resume on: never a response the journal already held.
      const journaled = records.slice(runStart, n).filter((r) => kind(r) === "response").length;
      const responses = n < quiet!.atSeq ? 6 : 1;
      expect(assistantEnds(second.events) + journaled, at).toBe(responses);
      // The resumed run ended: the session's quiet point is saved again, nothing is left to resume.
      expect(crashed.readSession("s").snapshot()?.atSeq, at).toBe(crashed.readSession("s").records().length);
      expect(await second.agent.resume({ onLive: () => void live.push(-1) })).toBe(false);
      expect(live, `${at}: no unfinished run, no onLive`).toEqual([0]);
    }
    expect(interrupted).toBeGreaterThan(0);
  });

  it("R84: a crash between a run's end record and its quiet point loses nothing: the run is finished from its journal", async () => {
    const store = memoryRunStore();
    const first = agent(store);
    await first.agent.prompt("go");
    const quiet = store.readSession("s").snapshot()!;
    const fullFirst = first.agent.state.messages.slice();
    await first.agent.prompt("more");
    const full = first.agent.state.messages.slice();
    const records = store.readSession("s").records().map((r) => r.record);
    const kind = (record: unknown) => (record as { k: string }).k;
    // Each run's `end` is the last record the crashed process wrote: the first run's with no quiet
    // point at all, the second's with the first run's.
    const ends = records.flatMap((record, i) => (kind(record) === "end" ? [i + 1] : []));
    expect(ends).toEqual([quiet.atSeq, records.length]);
    for (const [n, expected] of [
      [ends[0], fullFirst],
      [ends[1], full],
    ] as const) {
      const at = `crash after record ${n}, the end of a run`;
      const crashed = memoryRunStore();
      const writer = crashed.openSession("s");
      records.slice(0, n).forEach((record: Json) => writer.append(record));
      if (quiet.atSeq < n) writer.saveSnapshot(quiet.snapshot, quiet.atSeq);
      writer.release();
      const executions: string[] = [];
      const second = agent(crashed, (id) => void executions.push(id));
      const live: number[] = [];
      const after = (await replayEvents(records.slice(0, n))).length;
      expect(await second.agent.resume({ after, onLive: () => void live.push(second.events.length) }), at).toBe(true);
      expect(second.agent.state.messages.map(timeless), at).toEqual(expected.map(timeless));
      // Nothing ran again, no event was delivered twice, and the run's journal was not extended.
      expect(executions, at).toEqual([]);
      expect(second.events, at).toEqual([]);
      expect(live, at).toEqual([0]);
      const stored = crashed.readSession("s");
      expect(stored.records(), at).toHaveLength(n);
      // Its quiet point is saved now: a later resume finds nothing to finish, and the transcript holds the run once.
      expect(stored.snapshot()?.atSeq, at).toBe(n);
      second.agent.release();
      const third = agent(crashed);
      expect(await third.agent.resume(), at).toBe(false);
      expect(third.agent.state.messages.map(timeless), at).toEqual(expected.map(timeless));
    }
  });

  it("R81: an onLive that throws is reported once and the resumed run goes on to the same end", async () => {
    const store = memoryRunStore();
    const first = agent(store);
    await first.agent.prompt("go");
    const full = first.agent.state.messages.slice();
    const records = store.readSession("s").records().map((r) => r.record);
    // A crash halfway through the run: its first half is replayed, the rest runs live.
    const crashed = memoryRunStore();
    const writer = crashed.openSession("s");
    records.slice(0, Math.floor(records.length / 2)).forEach((record: Json) => writer.append(record));
    writer.release();
    const second = agent(crashed);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect(
        await second.agent.resume({
          onLive: () => {
            throw new Error("app bug");
          },
        }),
      ).toBe(true);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toContain("app bug");
    } finally {
      warn.mockRestore();
    }
    expect(second.agent.state.messages.map((message) => message.role)).toEqual(full.map((message) => message.role));
    expect(second.agent.state.errorMessage).toBeUndefined();
    expect(second.events.length).toBeGreaterThan(0);
  });
});

describe("R80, R83: a durable Agent's journal", () => {
  it("R80, R83: an Agent's runs, one aborted with agent.abort(), replay to the events its listeners got", async () => {
    const store = memoryRunStore();
    const waits = {
      name: "waits",
      label: "waits",
      description: "waits for the abort",
      parameters: { type: "object", properties: {} },
      execute: (_id: string, _params: unknown, signal?: AbortSignal) =>
        new Promise<{ content: { type: "text"; text: string }[]; details: object }>((resolve) => signal?.addEventListener("abort", () => resolve({ content: [{ type: "text", text: "stopped" }], details: {} }), { once: true })),
    };
    const { scriptedStreamFn, text, toolCall } = await import("../../src/index.js");
    const instance = new Agent({
      streamFn: scriptedStreamFn([{ content: [toolCall("waits", {}, "w")] }, { content: [text("after abort")] }, { content: [text("second run")] }]),
      initialState: { model: scriptedModel, tools: [waits as never] },
      clock: fixedClock,
      durable: { store, sessionId: "a" },
    });
    const heard: string[] = [];
    instance.subscribe((event) => {
      heard.push(JSON.stringify(event));
      if (event.type === "tool_execution_start") setTimeout(() => instance.abort(), 0);
    });
    await instance.prompt("first");
    await instance.prompt("second");
    const records = store.readSession("a").records();
    expect(records.filter((r) => (r.record as { k: string }).k === "input")).toHaveLength(1);
    const { replayEvents } = await import("../../src/durable/replay.js");
    expect((await replayEvents(records)).map((event) => JSON.stringify(event))).toEqual(heard);
  });
});
