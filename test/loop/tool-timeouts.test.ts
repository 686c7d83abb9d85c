/**
 * SPEC R65: per-tool `timeoutMs` and the loop's `toolTimeoutMs`, counted from the call's
 * execution, on the injected clock: at the timeout the call settles at once with `Tool NAME timed
 * out after N ms` (no afterToolCall), its own signal aborts, and its late outcome is dropped;
 * after a restore the timer resumes with the time that was left.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { createAgentRunLogic, defaultConvertToLlm, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool, type Clock } from "../../src/index.js";
import { baseConfig, user } from "./helpers.js";
import { manualClock } from "../support/manual-clock.js";


const settledTicks = () => new Promise((resolve) => setTimeout(resolve, 0));

function hanging(name: string, extra: Partial<AgentTool> = {}) {
  const seen: { signal?: AbortSignal } = {};
  let finish!: () => void;
  const tool: AgentTool = {
    name,
    label: name,
    description: name,
    parameters: { type: "object", properties: {} },
    // Ignores its signal: only the timeout can end it.
    execute: (_id, _params, signal) => {
      seen.signal = signal;
      return new Promise((resolve) => (finish = () => resolve({ content: [{ type: "text", text: "late" }], details: {} })));
    },
    ...extra,
  };
  return { tool, seen, finishLate: () => finish() };
}

describe("R65: tool timeouts", () => {
  it("R65: a tool that ignores its signal settles at its timeout with the timed-out result; afterToolCall is not called; the late outcome is dropped", async () => {
    const { clock, advance, timers } = manualClock();
    const slow = hanging("slow", { timeoutMs: 500 });
    const events: AgentEvent[] = [];
    let afterCalls = 0;
    const run = runAgentLoop(
      [user("go")],
      { messages: [], tools: [slow.tool] },
      baseConfig({ afterToolCall: async () => (afterCalls++, undefined) }),
      (event) => void events.push(event),
      undefined,
      scriptedStreamFn([{ content: [toolCall("slow", {}, "s1")] }, { content: [text("done")] }]),
      { clock },
    );
    while (timers.length === 0) await settledTicks();
    expect(timers[0].ms).toBe(500);
    advance(499);
    await settledTicks();
    expect(events.some((event) => event.type === "tool_execution_end")).toBe(false);
    advance(1);
    const messages = await run;
    const end = events.find((event) => event.type === "tool_execution_end");
    expect(end).toMatchObject({ toolCallId: "s1", isError: true, result: { content: [{ type: "text", text: "Tool slow timed out after 500 ms" }] } });
    expect(slow.seen.signal?.aborted).toBe(true);
    expect(afterCalls).toBe(0);
    slow.finishLate();
    await settledTicks();
    expect(events.filter((event) => event.type === "tool_execution_end")).toHaveLength(1);
    expect((messages.at(-1) as { content: { text: string }[] }).content[0].text).toBe("done");
  });

  it("R65: the loop's toolTimeoutMs applies to every call; a tool's own timeoutMs wins", async () => {
    const { clock, advance, timers } = manualClock();
    const a = hanging("a");
    const b = hanging("b", { timeoutMs: 100 });
    const events: AgentEvent[] = [];
    const run = runAgentLoop(
      [user("go")],
      { messages: [], tools: [a.tool, b.tool] },
      baseConfig({ toolTimeoutMs: 300 }),
      (event) => void events.push(event),
      undefined,
      scriptedStreamFn([{ content: [toolCall("a", {}, "a1"), toolCall("b", {}, "b1")] }, { content: [text("done")] }]),
      { clock },
    );
    while (timers.length < 2) await settledTicks();
    expect(timers.map((timer) => timer.ms).sort((x, y) => x - y)).toEqual([100, 300]);
    advance(100);
    await settledTicks();
    advance(200);
    await run;
    const ends = events.filter((event) => event.type === "tool_execution_end") as Extract<AgentEvent, { type: "tool_execution_end" }>[];
    expect(ends.map((event) => [event.toolCallId, (event.result.content[0] as { text: string }).text])).toEqual([
      ["b1", "Tool b timed out after 100 ms"],
      ["a1", "Tool a timed out after 300 ms"],
    ]);
  });

  it("R65, R13: a run persisted while a call waits for its timeout resumes the wait with the time that was left", async () => {
    const first = manualClock();
    const tools = () => [{ ...hanging("slow", { timeoutMs: 1_000, replay: "safe" }).tool }];
    const options = (clock: Clock) => ({
      streamFn: scriptedStreamFn((request) =>
        request.context.messages.some((message) => message.role === "toolResult") ? { content: [text("done")] } : { content: [toolCall("slow", {}, "s1")] },
      ),
      tools: tools(),
      config: { model: scriptedModel, convertToLlm: defaultConvertToLlm },
      clock,
    });
    const run = createActor(createAgentRunLogic(options(first.clock)), { input: { messages: [], prompts: [user("go")] } });
    run.start();
    while (first.timers.length === 0) await settledTicks();
    first.advance(400);
    const saved = JSON.stringify(run.getPersistedSnapshot());
    run.stop();

    const second = manualClock(1_400);
    const restored = createActor(createAgentRunLogic(options(second.clock)), { snapshot: JSON.parse(saved), input: { messages: [] } });
    restored.start();
    while (second.timers.length === 0) await settledTicks();
    expect(second.timers[0].ms).toBe(600);
    second.advance(600);
    const added = await toPromise(restored);
    const result = added.find((message) => (message as { role: string }).role === "toolResult") as { content: { text: string }[] };
    expect(result.content[0].text).toBe("Tool slow timed out after 1000 ms");
  });
});
