/**
 * Regressions the property suite found, each named after the invariant it broke, reduced to the
 * smallest deterministic scenario.
 */
import { describe, expect, it } from "vitest";
import { defaultConvertToLlm, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool } from "../../src/index.js";

describe("regressions", () => {
  // Found by the property suite (sink "macrotask", a parallel batch of two calls, the first one
  // reporting an update at once). Expected: the step worker waits for the sink before every job
  // (steps-worker.ts: "wait until the sink is idle, not just past the delivery pending now";
  // SPEC "Entry points": emit is awaited). Actual (then): both execute jobs awaited the
  // same pending delivery (call B's tool_execution_start); when it settled, A's job started and
  // emitted its update, and B's job started without waiting for it.
  it("emit is awaited: a parallel call does not start executing while another call's update is still being delivered", async () => {
    const log: string[] = [];
    const label = (event: AgentEvent) => `${event.type}${"toolCallId" in event ? ` ${event.toolCallId}` : ""}`;
    // A sink that takes a macrotask per event, as an async UI listener would.
    const sink = (event: AgentEvent) => {
      log.push(`sink got ${label(event)}`);
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          log.push(`sink done ${label(event)}`);
          resolve();
        }),
      );
    };
    const tool = (name: string): AgentTool => ({
      name,
      label: name,
      description: name,
      parameters: { type: "object", properties: {} },
      execute: async (id, _params, _signal, onUpdate) => {
        log.push(`execute ${id}`);
        onUpdate?.({ content: [{ type: "text", text: "progress" }], details: {} });
        return { content: [{ type: "text", text: "ok" }], details: {} };
      },
    });

    await runAgentLoop(
      [{ role: "user", content: "hi", timestamp: 1 }],
      { messages: [], tools: [tool("a"), tool("b")] },
      { model: scriptedModel, convertToLlm: defaultConvertToLlm },
      sink,
      undefined,
      scriptedStreamFn([{ content: [toolCall("a", {}, "A"), toolCall("b", {}, "B")] }, { content: [text("done")] }]),
    );

    const executeB = log.indexOf("execute B");
    const updateA = log.indexOf("sink done tool_execution_update A");
    expect(log.slice(log.indexOf("execute A"), log.indexOf("execute A") + 3)).toEqual([
      "execute A",
      "sink got tool_execution_update A",
      "sink done tool_execution_update A",
    ]);
    expect(updateA).toBeLessThan(executeB);
  });
});
