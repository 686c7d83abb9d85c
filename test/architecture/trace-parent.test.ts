/**
 * The trace recorder attributes each tool-call actor to the run that spawned it from the
 * inspection events alone (the `xstate.init` event's `sourceRef`), not from XState's `_parent`:
 * with two runs inspected at once, a call of the first run is recorded under run 1 even though
 * run 2 started after it (the recorder's latest run).
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { createAgentRunLogic, defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool } from "../../src/index.js";
import { createTraceRecorder } from "../../src/trace/index.js";

const echo: AgentTool = {
  name: "a",
  label: "a",
  description: "a",
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: "a done" }], details: {} }),
};

describe("trace recorder: a tool call's run", () => {
  it("comes from the inspection event that started the call, with two runs in flight", async () => {
    const lines: string[] = [];
    const recorder = createTraceRecorder({ write: (line) => lines.push(line), now: () => 0 });
    const config = { model: scriptedModel, convertToLlm: defaultConvertToLlm };
    const withTool = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [toolCall("a")] }, { content: [text("one")] }]), tools: [echo], config });
    const textOnly = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [text("two")] }]), tools: [echo], config });
    const first = createActor(withTool, { input: { prompts: [{ role: "user", content: "go", timestamp: 1 }], messages: [] }, inspect: recorder.inspect });
    const second = createActor(textOnly, { input: { prompts: [{ role: "user", content: "go", timestamp: 1 }], messages: [] }, inspect: recorder.inspect });
    first.start();
    second.start();
    await Promise.all([toPromise(first), toPromise(second)]);
    const states = lines.map((line) => JSON.parse(line)).filter((record) => record.type === "state");
    const runOf = (actor: string) => [...new Set(states.filter((record) => record.actor === actor).map((record) => record.run))];
    expect(runOf("run")).toEqual([1, 2]);
    expect(runOf("tool:0")).toEqual([1]);
  });
});
