/**
 * R80, R81 through the Agent: `durable: { store, sessionId }` journals every run and saves the
 * idle session (R13's persisted snapshot) when a run ends; `agent.resume()` in a fresh Agent
 * takes the stored session back and continues a run the journal holds unfinished. Crashes are
 * simulated by a fresh store holding a prefix of the journal (a crash right after that record).
 */
import { describe, expect, it } from "vitest";
import type { AgentMessage, AnyAgentEvent, ToolResultMessage } from "../../src/index.js";
import { Agent, scriptedModel } from "../../src/index.js";
import type { Json } from "../../src/store/run-store.js";
import { memoryRunStore } from "../support/memory-run-store.js";
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
  it("R80, R81: a durable Agent's session resumes at every record of its journal, in a fresh Agent", async () => {
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
      expect(await second.agent.resume()).toBe(true);
      const at = `crash after record ${n}`;
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
      const journaled = records.slice(runStart, n).filter((r) => kind(r) === "job" && (r as { job: string }).job === "streamResponse").length;
      const responses = n < quiet!.atSeq ? 6 : 1;
      expect(assistantEnds(second.events) + journaled, at).toBe(responses);
      // The resumed run ended: the session's quiet point is saved again, nothing is left to resume.
      expect(crashed.readSession("s").snapshot()?.atSeq, at).toBe(crashed.readSession("s").records().length);
      expect(await second.agent.resume()).toBe(false);
    }
    expect(interrupted).toBeGreaterThan(0);
  });
});
