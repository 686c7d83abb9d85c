/**
 * SPEC R70–R73: tools that start while the model still streams (`streamingToolExecution: true`).
 * Every scenario runs on the injected clock: the scripted model pauses between blocks on it and
 * each tool takes scripted time, so the log's times are exact (`t=<ms> <event>`, deltas left out).
 */
import { describe, expect, it } from "vitest";
import { Agent, emptyUsage, pause, PushAssistantStream, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import type { AgentEvent, AgentLoopConfig, AgentTool, AssistantMessage, BeforeToolCallContext, StreamFn, ToolCall } from "../../src/index.js";
import { timedRun, timedTool, withFinalCalls, type ManualClock } from "./streaming-tools.helpers.js";
import { baseConfig, project, structureProblems, tool, user } from "./helpers.js";
import { truncatedCallResult } from "../../src/loop/tool-results.js";

const head = ["t=0 agent_start", "t=0 turn_start", "t=0 message_start:system", "t=0 message_end:system", "t=0 message_start:user(go)", "t=0 message_end:user(go)"];
const finalAnswer = (t: number) => [`t=${t} turn_start`, `t=${t} message_start:assistant(stop)`, `t=${t} message_end:assistant(stop)`, `t=${t} turn_end:assistant(stop)+0`];
const answer = { content: [text("final")] };

function endOf(events: AgentEvent[], id: string) {
  const end = events.find((event) => event.type === "tool_execution_end" && event.toolCallId === id);
  return end?.type === "tool_execution_end" ? (end.result.content[0] as { text: string }).text : undefined;
}
const resultTexts = (output: unknown[]) =>
  (output as { role: string; toolCallId?: string; content?: { text?: string }[] }[]).filter((m) => m.role === "toolResult").map((m) => `${m.toolCallId}:${m.content?.[0]?.text}`);

describe("R70: calls start while the response streams", () => {
  it("R70: eager start: each safe call starts at its toolcall_end; results after the assistant message_end, in source order (R71)", async () => {
    const { log, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), pause(500), toolCall("read", {}, "b"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300)],
    );
    expect(log).toEqual([
      ...head,
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=300 tool_end:read",
      "t=500 tool_start:read",
      "t=800 tool_end:read",
      "t=1000 message_end:assistant(toolUse)",
      "t=1000 message_start:toolResult(read)",
      "t=1000 message_end:toolResult(read)",
      "t=1000 message_start:toolResult(read)",
      "t=1000 message_end:toolResult(read)",
      "t=1000 turn_end:assistant(toolUse)+2",
      ...finalAnswer(1000),
      "t=1000 agent_end:6",
    ]);
    expect(resultTexts(output)).toEqual(["a:read done", "b:read done"]);
  });

  it("R70: off (the default): the same response runs its calls after message_end, as pi does", async () => {
    const { log } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), pause(500), toolCall("read", {}, "b"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300)],
      {},
      { streaming: false },
    );
    expect(log.slice(6, 10)).toEqual(["t=0 message_start:assistant(stop)", "t=1000 message_end:assistant(toolUse)", "t=1000 tool_start:read", "t=1000 tool_start:read"]);
  });

  it("R70: the unsafe barrier: an unsafe call waits for the running ones, runs alone, and every later call waits behind it", async () => {
    const { log, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), pause(100), toolCall("write", {}, "w"), pause(100), toolCall("read", {}, "b"), pause(800), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300), timedTool(clock, "write", 300, { isConcurrencySafe: undefined })],
    );
    expect(log).toEqual([
      ...head,
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      // write (ready at 100) waits for read a; read b (ready at 200) waits behind write.
      "t=300 tool_end:read",
      "t=300 tool_start:write",
      "t=600 tool_end:write",
      "t=600 tool_start:read",
      "t=900 tool_end:read",
      "t=1000 message_end:assistant(toolUse)",
      "t=1000 message_start:toolResult(read)",
      "t=1000 message_end:toolResult(read)",
      "t=1000 message_start:toolResult(write)",
      "t=1000 message_end:toolResult(write)",
      "t=1000 message_start:toolResult(read)",
      "t=1000 message_end:toolResult(read)",
      "t=1000 turn_end:assistant(toolUse)+3",
      ...finalAnswer(1000),
      "t=1000 agent_end:7",
    ]);
    expect(resultTexts(output)).toEqual(["a:read done", "w:write done", "b:read done"]);
  });

  it("R70: isConcurrencySafe sees the validated arguments; executionMode sequential is never safe", async () => {
    const seen: unknown[] = [];
    const { log } = await timedRun(
      [{ content: [toolCall("read", { n: "2" }, "a"), toolCall("seq", {}, "s"), toolCall("read", { n: 3 }, "b"), pause(1000), text("done")] }, answer],
      (clock) => [
        timedTool(clock, "read", 300, {
          parameters: { type: "object", properties: { n: { type: "number" } } },
          isConcurrencySafe: (args: { n: number }) => (seen.push(args), true),
        }),
        timedTool(clock, "seq", 300, { executionMode: "sequential" }),
      ],
    );
    // R21's coercion: "2" became 2 before the check.
    expect(seen).toEqual([{ n: 2 }, { n: 3 }]);
    expect(log.filter((line) => line.includes("tool_"))).toEqual([
      "t=0 tool_start:read",
      "t=300 tool_end:read",
      "t=300 tool_start:seq",
      "t=600 tool_end:seq",
      "t=600 tool_start:read",
      "t=900 tool_end:read",
    ]);
  });

  it("R70: the concurrency limit: with maxConcurrentTools 2 the third call waits for a slot", async () => {
    const { log } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), toolCall("read", {}, "b"), toolCall("read", {}, "c"), pause(1000), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300)],
      { maxConcurrentTools: 2 },
    );
    expect(log.filter((line) => line.includes("tool_"))).toEqual([
      "t=0 tool_start:read",
      "t=0 tool_start:read",
      "t=300 tool_end:read",
      "t=300 tool_start:read",
      "t=300 tool_end:read",
      "t=600 tool_end:read",
    ]);
  });

  it("R70: calls not yet started when the response ends start then, in source order", async () => {
    const { log, output } = await timedRun(
      [{ content: [toolCall("write", {}, "w1"), toolCall("write", {}, "w2"), pause(100), text("done")] }, answer],
      (clock) => [timedTool(clock, "write", 300, { isConcurrencySafe: undefined })],
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:write",
      "t=100 message_end:assistant(toolUse)",
      "t=300 tool_end:write",
      "t=300 tool_start:write",
      "t=600 tool_end:write",
      "t=600 message_start:toolResult(write)",
      "t=600 message_end:toolResult(write)",
      "t=600 message_start:toolResult(write)",
      "t=600 message_end:toolResult(write)",
      "t=600 turn_end:assistant(toolUse)+2",
      ...finalAnswer(600),
      "t=600 agent_end:6",
    ]);
    expect(resultTexts(output)).toEqual(["w1:write done", "w2:write done"]);
  });

  it("R70: beforeToolCall during the stream is told streaming: true and gets a copy of the partial message; a block ends the call at once", async () => {
    const calls: { id: string; streaming?: boolean; content: string[] }[] = [];
    const beforeToolCall = async (context: BeforeToolCallContext) => {
      calls.push({ id: context.toolCall.id, streaming: context.streaming, content: context.assistantMessage.content.map((block) => block.type) });
      return context.toolCall.name === "write" ? { block: true, reason: "read-only session" } : undefined;
    };
    const { log, events } = await timedRun(
      [{ content: [text("Let me look."), toolCall("read", {}, "a"), pause(200), toolCall("write", {}, "w"), pause(500), toolCall("read", {}, "late")] }, answer],
      (clock) => [timedTool(clock, "read", 300), timedTool(clock, "write", 300)],
      { beforeToolCall },
    );
    expect(calls).toEqual([
      { id: "a", streaming: true, content: ["text", "toolCall"] },
      { id: "w", streaming: true, content: ["text", "toolCall", "toolCall"] },
      // The last call's toolcall_end is the response's last event: it started after the end.
      { id: "late", streaming: true, content: ["text", "toolCall", "toolCall", "toolCall"] },
    ]);
    expect(log.filter((line) => line.includes("tool_") || line.includes("assistant(toolUse)"))).toEqual([
      "t=0 tool_start:read",
      "t=200 tool_start:write",
      "t=200 tool_end:write!",
      "t=300 tool_end:read",
      // The last toolcall_end is the stream's last content event: its check comes back after the
      // message_end went out but before the run took the response, so it still starts as streamed.
      "t=700 message_end:assistant(toolUse)",
      "t=700 tool_start:read",
      "t=1000 tool_end:read",
      "t=1000 turn_end:assistant(toolUse)+3",
    ]);
    expect(endOf(events, "w")).toBe("read-only session");
  });

  it("R70: a slow beforeToolCall holds its call while the response goes on streaming", async () => {
    let clockRef: ManualClock | undefined;
    const beforeToolCall = () => new Promise<undefined>((resolve) => clockRef!.clock.setTimer(400, () => resolve(undefined)));
    const { log } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), pause(200), text("still streaming"), pause(600), text("done")] }, answer],
      (clock) => ((clockRef = clock), [timedTool(clock, "read", 300)]),
      { beforeToolCall },
    );
    expect(log.filter((line) => line.includes("tool_") || line.includes("assistant(toolUse)"))).toEqual([
      "t=0 tool_start:read",
      // 400 ms in beforeToolCall, then 300 in execute, all before the response ends at 800.
      "t=700 tool_end:read",
      "t=800 message_end:assistant(toolUse)",
      "t=800 turn_end:assistant(toolUse)+1",
    ]);
  });
});

describe("R72: a response that does not end well", () => {
  it("R72: an error response: the running call's tool_execution_end carries Operation aborted; a finished call keeps its end; no result message", async () => {
    const { log, events, output } = await timedRun(
      [{ failure: "connection", afterContent: true, content: [toolCall("read", {}, "fast"), toolCall("read", {}, "slow"), pause(500)] }, answer],
      (clock) => [timedTool(clock, "read", 300)],
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=0 tool_start:read",
      "t=300 tool_end:read",
      "t=300 tool_end:read",
      "t=500 message_end:assistant(error)",
      "t=500 turn_end:assistant(error)+0",
      "t=500 agent_end:3",
    ]);
    expect(resultTexts(output)).toEqual([]);
    expect(endOf(events, "fast")).toBe("read done");
  });

  it("R72: an error response while a call runs: its end is Operation aborted and its signal aborted", async () => {
    const aborted: string[] = [];
    const { log, events, output } = await timedRun(
      [{ failure: "connection", afterContent: true, content: [toolCall("slow", {}, "s"), pause(500)] }, answer],
      (clock) => [
        tool(
          "slow",
          (_id, _args, signal) =>
            new Promise((_resolve, reject) => {
              clock.clock.setTimer(5000, () => reject(new Error("never")));
              signal?.addEventListener("abort", () => (aborted.push("s"), reject(new Error("stopped"))));
            }),
          { isConcurrencySafe: () => true },
        ),
      ],
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:slow",
      "t=500 message_end:assistant(error)",
      "t=500 tool_end:slow!",
      "t=500 turn_end:assistant(error)+0",
      "t=500 agent_end:3",
    ]);
    expect(endOf(events, "s")).toBe("Operation aborted");
    expect(aborted).toEqual(["s"]);
    expect(resultTexts(output)).toEqual([]);
  });

  it("R72: abort mid-stream with calls running: each started call ends Operation aborted, the response is aborted, no result message", async () => {
    const { log, events, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), toolCall("write", {}, "w"), pause(1000), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 800), timedTool(clock, "write", 800, { isConcurrencySafe: undefined })],
      {},
      { act: (t, controller) => t === 300 && controller.abort() },
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      // write waits for read: not started, so no events at all.
      "t=300 message_end:assistant(aborted)",
      "t=300 tool_end:read!",
      "t=300 turn_end:assistant(aborted)+0",
      "t=300 agent_end:3",
    ]);
    expect(endOf(events, "a")).toBe("Operation aborted");
    expect(resultTexts(output)).toEqual([]);
  });

  it("R72: a length response: calls not started get R28's events; a started call is aborted with R28's text (no second start); a finished one keeps its result", async () => {
    const { log, events, output } = await timedRun(
      [{ stopReason: "length", content: [toolCall("read", {}, "done1"), toolCall("slowread", {}, "run1"), toolCall("write", {}, "w"), pause(500)] }, answer],
      (clock) => [timedTool(clock, "read", 100), timedTool(clock, "slowread", 1000), timedTool(clock, "write", 100, { isConcurrencySafe: undefined })],
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=0 tool_start:slowread",
      "t=100 tool_end:read",
      "t=500 message_end:assistant(length)",
      "t=500 message_start:toolResult(read)",
      "t=500 message_end:toolResult(read)",
      "t=500 tool_end:slowread!",
      "t=500 message_start:toolResult(slowread!)",
      "t=500 message_end:toolResult(slowread!)",
      "t=500 tool_start:write",
      "t=500 tool_end:write!",
      "t=500 message_start:toolResult(write!)",
      "t=500 message_end:toolResult(write!)",
      "t=500 turn_end:assistant(length)+3",
      ...finalAnswer(500),
      "t=500 agent_end:7",
    ]);
    const r28 = (name: string) => (truncatedCallResult({ type: "toolCall", id: "", name, arguments: {} }).content[0] as { text: string }).text;
    expect(endOf(events, "run1")).toBe(r28("slowread"));
    expect(endOf(events, "w")).toBe(r28("write"));
    expect(resultTexts(output).slice(1)).toEqual([`run1:${r28("slowread")}`, `w:${r28("write")}`]);
    expect(resultTexts(output)[0]).toBe("done1:read done");
  });
});

describe("R70–R72: a final message that differs from what streamed (calls matched by id)", () => {
  const startsOf = (events: AgentEvent[]) => events.flatMap((event) => (event.type === "tool_execution_start" ? [event.toolCallId] : []));
  const newCall = (id: string, name: string): ToolCall => ({ type: "toolCall", id, name, arguments: {} });
  const byId = (calls: ToolCall[], id: string) => calls.find((call) => call.id === id)!;

  it("R71: the final message lists the streamed calls in another order: each keeps its one execution; results follow the final message's order", async () => {
    const { log, events, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), toolCall("grep", {}, "b"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300), timedTool(clock, "grep", 100)],
      {},
      { finalCalls: (calls) => [byId(calls, "b"), byId(calls, "a")] },
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=0 tool_start:grep",
      "t=100 tool_end:grep",
      "t=300 tool_end:read",
      "t=500 message_end:assistant(toolUse)",
      "t=500 message_start:toolResult(grep)",
      "t=500 message_end:toolResult(grep)",
      "t=500 message_start:toolResult(read)",
      "t=500 message_end:toolResult(read)",
      "t=500 turn_end:assistant(toolUse)+2",
      ...finalAnswer(500),
      "t=500 agent_end:6",
    ]);
    expect(startsOf(events)).toEqual(["a", "b"]);
    expect(resultTexts(output)).toEqual(["b:grep done", "a:read done"]);
  });

  it("R72: a streamed call the final message replaces is aborted (Operation aborted, no result message); the new call runs after the response ends", async () => {
    const { log, events, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), toolCall("grep", {}, "b"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300), timedTool(clock, "grep", 1000), timedTool(clock, "write", 100)],
      {},
      { finalCalls: (calls) => [byId(calls, "a"), newCall("c", "write")] },
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=0 tool_start:grep",
      "t=300 tool_end:read",
      "t=500 message_end:assistant(toolUse)",
      "t=500 tool_end:grep!",
      "t=500 tool_start:write",
      "t=600 tool_end:write",
      "t=600 message_start:toolResult(read)",
      "t=600 message_end:toolResult(read)",
      "t=600 message_start:toolResult(write)",
      "t=600 message_end:toolResult(write)",
      "t=600 turn_end:assistant(toolUse)+2",
      ...finalAnswer(600),
      "t=600 agent_end:6",
    ]);
    expect(endOf(events, "b")).toBe("Operation aborted");
    expect(startsOf(events)).toEqual(["a", "b", "c"]);
    expect(resultTexts(output)).toEqual(["a:read done", "c:write done"]);
  });

  it("R72: streamed calls the final message drops (it keeps another): a running one ends Operation aborted, a finished one keeps its end; neither gets a result message", async () => {
    const { log, events, output } = await timedRun(
      [{ content: [toolCall("grep", {}, "a"), toolCall("read", {}, "b"), toolCall("write", {}, "c"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "grep", 100), timedTool(clock, "read", 1000), timedTool(clock, "write", 200)],
      {},
      { finalCalls: (calls) => [byId(calls, "c")] },
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:grep",
      "t=0 tool_start:read",
      "t=0 tool_start:write",
      "t=100 tool_end:grep",
      "t=200 tool_end:write",
      "t=500 message_end:assistant(toolUse)",
      "t=500 tool_end:read!",
      "t=500 message_start:toolResult(write)",
      "t=500 message_end:toolResult(write)",
      "t=500 turn_end:assistant(toolUse)+1",
      ...finalAnswer(500),
      "t=500 agent_end:5",
    ]);
    expect(endOf(events, "a")).toBe("grep done");
    expect(endOf(events, "b")).toBe("Operation aborted");
    expect(resultTexts(output)).toEqual(["c:write done"]);
  });

  /**
   * Streams calls a (`read`) and b (`grep`, 1 s), the final message lists only a, and the run is
   * aborted at t=600 with a 200 ms grace that something outlives: b ends `Operation aborted`, only
   * a gets a result message, the run ends aborted.
   */
  async function abandonedAfterDrop(read: (clock: ManualClock) => AgentTool, config: Partial<AgentLoopConfig> = {}) {
    const { events, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), toolCall("grep", {}, "b"), pause(500), text("done")] }, answer],
      (clock) => [read(clock), timedTool(clock, "grep", 1000)],
      { abortGraceMs: 200, ...config },
      { finalCalls: (calls) => [byId(calls, "a")], act: (t, controller) => t === 600 && controller.abort() },
    );
    expect(endOf(events, "b")).toBe("Operation aborted");
    const results = (output as { role: string; toolCallId?: string }[]).filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
    expect(results).toEqual(["a"]);
    expect((output[output.length - 1] as AssistantMessage).stopReason).toBe("aborted");
  }

  it("R67, R72: a run abandoned after the final message dropped a call answers only the calls that message lists (no orphaned result)", async () => {
    // `read` ignores its signal, so the abort grace runs out while it still runs.
    await abandonedAfterDrop((clock) => tool("read", () => new Promise((resolve) => clock.clock.setTimer(5_000, () => resolve({ content: [{ type: "text", text: "late" }], details: {} }))), { isConcurrencySafe: () => true }));
  });

  it("R67, R72: a finishTurn abandoned after the final message dropped a call: the dropped call gets no result message", async () => {
    await abandonedAfterDrop((clock) => timedTool(clock, "read", 100), { finishTurn: () => new Promise(() => {}) });
  });

  it("R55, R72: an Agent listener that throws after the final message dropped a call: the failure answers only the listed calls", async () => {
    const slow = (name: string, ms: number) =>
      tool(name, (_id, _args, signal) => new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ content: [{ type: "text", text: `${name} done` }], details: {} }), ms);
        signal?.addEventListener("abort", () => (clearTimeout(timer), resolve({ content: [{ type: "text", text: `${name} stopped` }], details: {} })), { once: true });
      }), { isConcurrencySafe: () => true });
    const streamFn = withFinalCalls(scriptedStreamFn([{ content: [toolCall("read", {}, "a"), toolCall("grep", {}, "b"), text("done")] }, answer]), (calls) => [byId(calls, "a")]);
    const agent = new Agent({ initialState: { model: scriptedModel, tools: [slow("read", 30), slow("grep", 5_000)] }, streamFn, streamingToolExecution: true });
    const events: AgentEvent[] = [];
    agent.subscribe((event) => {
      events.push(event);
      // b's `Operation aborted` end (the final message dropped it): the listener fails the run (R55).
      if (event.type === "tool_execution_end" && event.toolCallId === "b") throw new Error("listener bug");
    });
    await agent.prompt("go");
    const results = agent.state.messages.filter((m) => m.role === "toolResult").map((m) => (m as { toolCallId: string }).toolCallId);
    expect(endOf(events, "b")).toBe("Operation aborted");
    expect(results).not.toContain("b");
    expect(structureProblems(events)).toEqual([]);
  });

  it("R72: the final message lists a streamed call's id as another tool: a replacement (the streamed one aborted, the listed one runs and is answered)", async () => {
    const { events, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 1000), timedTool(clock, "write", 100)],
      {},
      { finalCalls: () => [newCall("a", "write")] },
    );
    const ends = events.flatMap((event) => (event.type === "tool_execution_end" ? [`${event.toolName}:${(event.result.content[0] as { text: string }).text}`] : []));
    expect(ends).toEqual(["read:Operation aborted", "write:write done"]);
    expect(resultTexts(output)).toEqual(["a:write done"]);
    expect((output as { role: string; toolName?: string }[]).filter((m) => m.role === "toolResult").map((m) => m.toolName)).toEqual(["write"]);
  });

  it("R72: a length response whose final message reorders its calls: each call's R28 result or kept result goes to its own id, in the final message's order", async () => {
    const { events, output } = await timedRun(
      [{ stopReason: "length", content: [toolCall("read", {}, "a"), toolCall("slowread", {}, "b"), pause(500)] }, answer],
      (clock) => [timedTool(clock, "read", 100), timedTool(clock, "slowread", 1000)],
      {},
      { finalCalls: (calls) => [byId(calls, "b"), byId(calls, "a")] },
    );
    const r28 = (truncatedCallResult({ type: "toolCall", id: "", name: "slowread", arguments: {} }).content[0] as { text: string }).text;
    expect(startsOf(events)).toEqual(["a", "b"]);
    expect(endOf(events, "b")).toBe(r28);
    expect(resultTexts(output)).toEqual([`b:${r28}`, "a:read done"]);
  });
});

describe("R73 in streaming mode", () => {
  it("R73: a failing call that cancels its siblings during the stream: running ones are cancelled, later ones are not run; the turn goes on", async () => {
    const failing = (clock: ManualClock): AgentTool =>
      tool("deploy", () => new Promise((_resolve, reject) => clock.clock.setTimer(200, () => reject(new Error("deploy failed")))), {
        cancelSiblingsOnError: true,
        isConcurrencySafe: () => true,
      });
    const { log, events, output } = await timedRun(
      [{ content: [toolCall("read", {}, "a"), toolCall("deploy", {}, "d"), pause(400), toolCall("read", {}, "late"), pause(200), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 1000), failing(clock)],
    );
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=0 tool_start:deploy",
      "t=200 tool_end:deploy!",
      "t=200 tool_end:read!",
      // Ready after the failure: not run.
      "t=400 tool_start:read",
      "t=400 tool_end:read!",
      "t=600 message_end:assistant(toolUse)",
      "t=600 message_start:toolResult(read!)",
      "t=600 message_end:toolResult(read!)",
      "t=600 message_start:toolResult(deploy!)",
      "t=600 message_end:toolResult(deploy!)",
      "t=600 message_start:toolResult(read!)",
      "t=600 message_end:toolResult(read!)",
      "t=600 turn_end:assistant(toolUse)+3",
      ...finalAnswer(600),
      "t=600 agent_end:7",
    ]);
    expect(resultTexts(output)).toEqual(["a:Cancelled: sibling tool call deploy failed", "d:deploy failed", "late:Cancelled: sibling tool call deploy failed"]);
    expect(endOf(events, "a")).toBe("Cancelled: sibling tool call deploy failed");
  });
});

describe("R70 with retries and recovery (R60–R62)", () => {
  const runtimeLine = (event: { type: string }) => `runtime:${event.type}`;

  it("R60: a withheld failure is retried before any call starts; the retried response's calls start mid-stream", async () => {
    const runtime: string[] = [];
    const { log } = await timedRun(
      [{ failure: "overloaded" }, { content: [toolCall("read", {}, "a"), pause(500), text("done")] }, answer],
      (clock) => [timedTool(clock, "read", 300)],
      { retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 }, onRuntimeEvent: (event) => void runtime.push(runtimeLine(event)) },
    );
    expect(runtime).toEqual(["runtime:retry_scheduled"]);
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=300 tool_end:read",
      "t=500 message_end:assistant(toolUse)",
      "t=500 message_start:toolResult(read)",
      "t=500 message_end:toolResult(read)",
      "t=500 turn_end:assistant(toolUse)+1",
      ...finalAnswer(500),
      "t=500 agent_end:5",
    ]);
  });

  it("R60, R72: a failure after a call started is not retried: the call ends Operation aborted, no result message", async () => {
    const runtime: string[] = [];
    const { log, events } = await timedRun(
      [{ failure: "overloaded", afterContent: true, content: [toolCall("read", {}, "a"), pause(500)] }, answer],
      (clock) => [timedTool(clock, "read", 1000)],
      { retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 }, onRuntimeEvent: (event) => void runtime.push(runtimeLine(event)) },
    );
    expect(runtime).toEqual([]);
    expect(log.slice(6)).toEqual([
      "t=0 message_start:assistant(stop)",
      "t=0 tool_start:read",
      "t=500 message_end:assistant(error)",
      "t=500 tool_end:read!",
      "t=500 turn_end:assistant(error)+0",
      "t=500 agent_end:3",
    ]);
    expect(endOf(events, "a")).toBe("Operation aborted");
  });

  it("R61: a truncated response with started calls is never discarded: it keeps R28's results (its recovery); a provider that drops a reported call from its final message gets it aborted before message_discarded", async () => {
    const log: string[] = [];
    let request = 0;
    const partial = (content: AssistantMessage["content"]): AssistantMessage => ({
      role: "assistant",
      content,
      api: "scripted",
      provider: "scripted",
      model: "scripted",
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: 1,
    });
    // Reports a call, then ends truncated with no call in its final message (a provider defect).
    const streamFn: StreamFn = () => {
      const stream = new PushAssistantStream();
      const call = { type: "toolCall" as const, id: "a", name: "read", arguments: {} };
      if (request++ === 0) {
        stream.push({ type: "start", partial: partial([]) });
        stream.push({ type: "toolcall_start", contentIndex: 0, partial: partial([call]) });
        stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: partial([call]) });
        void Promise.resolve().then(() => stream.push({ type: "done", reason: "length", message: { ...partial([{ type: "text", text: "cut" }]), stopReason: "length", usage: { ...emptyUsage(), output: 100 } } }));
      } else stream.push({ type: "done", reason: "stop", message: partial([{ type: "text", text: "whole answer" }]) });
      return stream;
    };
    const never = tool("read", () => new Promise(() => {}), { isConcurrencySafe: () => true });
    await runAgentLoop(
      [user("go")],
      { messages: [], tools: [never] },
      baseConfig({ streamingToolExecution: true, outputLimit: { escalatedMaxTokens: 64_000 }, maxTokens: 1000, onRuntimeEvent: (event) => void log.push(runtimeLine(event)) }),
      (event) => void (event.type !== "message_update" && log.push(project(event))),
      undefined,
      streamFn,
    );
    expect(log.slice(6)).toEqual([
      "message_start:assistant(stop)",
      // (The call's check came back after the stream's last event: it started before the run took the response.)
      "message_end:assistant(length)",
      "tool_start:read",
      "tool_end:read!",
      "runtime:message_discarded",
      "runtime:output_limit_escalated",
      "message_start:assistant(stop)",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:3",
    ]);
  });
});
