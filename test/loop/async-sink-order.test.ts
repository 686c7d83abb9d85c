/**
 * SPEC R15 and R21 with an async sink: a call's preparation (`prepareArguments`, validation) runs
 * in an actor, after its `tool_execution_start` reached the sink, in both modes; and an abort that
 * arrives while the sink handles a parallel batch's starts gives the calls not yet prepared
 * immediate `Operation aborted` results, ended at once, before the calls prepared earlier.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool } from "../../src/index.js";
import { baseConfig, ok, user } from "./helpers.js";

/** A tool that notes its preparation and execution in the shared log. */
function noted(log: string[], name: string, extra: Partial<AgentTool> = {}): AgentTool {
  return {
    name,
    label: name,
    description: name,
    parameters: { type: "object", properties: { n: { type: "number" } } },
    prepareArguments: (args) => {
      log.push(`prepare ${(args as { n: number }).n}`);
      return args as { n: number };
    },
    execute: async (_id, params: { n: number }, signal) => {
      log.push(`execute ${params.n}${signal?.aborted ? " (aborted)" : ""}`);
      return ok(`done ${params.n}`);
    },
    ...extra,
  };
}

/** A sink that takes a macrotask for every event, and notes the tool events. */
function slowSink(log: string[], onEvent?: (event: AgentEvent) => void) {
  return async (event: AgentEvent) => {
    if (event.type === "tool_execution_start") log.push(`start ${(event.args as { n: number }).n}`);
    if (event.type === "tool_execution_end") log.push(`end ${event.toolCallId}${event.isError ? ` (${(event.result.content[0] as { text: string }).text})` : ""}`);
    onEvent?.(event);
    await new Promise((resolve) => setTimeout(resolve, 1));
  };
}

const threeCalls = () =>
  scriptedStreamFn([
    { content: [toolCall("t", { n: 1 }, "c1"), toolCall("t", { n: 2 }, "c2"), toolCall("t", { n: 3 }, "c3")] },
    { content: [text("done")] },
  ]);

describe("R15, R21: preparation after the start reached an async sink", () => {
  it("R21: parallel: each call is started, then prepared, one by one; execution after every preparation", async () => {
    const log: string[] = [];
    await runAgentLoop([user("go")], { messages: [], tools: [noted(log, "t")] }, baseConfig(), slowSink(log), undefined, threeCalls());
    expect(log.slice(0, 7)).toEqual(["start 1", "prepare 1", "start 2", "prepare 2", "start 3", "prepare 3", "execute 1"]);
    expect(log.filter((entry) => entry.startsWith("execute"))).toEqual(["execute 1", "execute 2", "execute 3"]);
  });

  it("R21, R24: sequential: start, prepare, execute, end, one call after the other", async () => {
    const log: string[] = [];
    await runAgentLoop([user("go")], { messages: [], tools: [noted(log, "t", { executionMode: "sequential" })] }, baseConfig(), slowSink(log), undefined, threeCalls());
    expect(log).toEqual(["start 1", "prepare 1", "execute 1", "end c1", "start 2", "prepare 2", "execute 2", "end c2", "start 3", "prepare 3", "execute 3", "end c3"]);
  });

  it("R21, R29: an abort while the sink handles the second start: calls 2 and 3 end aborted at once, before call 1", async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const sink = slowSink(log, (event) => {
      if (event.type === "tool_execution_start" && event.toolCallId === "c2") controller.abort();
    });
    const messages = await runAgentLoop([user("go")], { messages: [], tools: [noted(log, "t")] }, baseConfig(), sink, controller.signal, threeCalls());
    expect(log).toEqual([
      "start 1",
      "prepare 1",
      "start 2",
      "end c2 (Operation aborted)",
      "start 3",
      "end c3 (Operation aborted)",
      // Call 1 was prepared before the abort but had not started executing (R29).
      "end c1 (Operation aborted)",
    ]);
    // Every call has its one result, in source order; the next request answers aborted (R6).
    const results = messages.filter((message) => (message as { role: string }).role === "toolResult") as { toolCallId: string }[];
    expect(results.map((message) => message.toolCallId)).toEqual(["c1", "c2", "c3"]);
  });
});
