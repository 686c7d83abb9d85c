/**
 * Issue 16, "merge config.identity over DEFAULT_AGENT_IDENTITY on every request": what the stream
 * function receives from the loop and from an Agent. The Agent merges in its loop config
 * (src/agent/loop-config.ts); the loop functions once the request path (src/actors/run-deps.ts)
 * computes its options with src/loop/stream-options.ts `streamOptionsOf`.
 */
import { describe, expect, it } from "vitest";
import { Agent, DEFAULT_AGENT_IDENTITY, defaultConvertToLlm, runAgentLoop } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/testing/index.js";

const tools = [
  {
    name: "noop",
    label: "noop",
    description: "Does nothing",
    parameters: { type: "object", properties: {} },
    execute: async () => ({ content: [], details: {} }),
  },
];

describe("issue 16: every request carries the merged identity", () => {
  it("runAgentLoop without identity sends DEFAULT_AGENT_IDENTITY on each request; with one, it goes over the default", async () => {
    const plain = scriptedStreamFn([{ content: [toolCall("noop")] }, { content: [text("done")] }]);
    await runAgentLoop([{ role: "user", content: "go", timestamp: 1 }], { messages: [], tools }, { model: scriptedModel, convertToLlm: defaultConvertToLlm }, () => {}, undefined, plain);
    expect(plain.calls.map((call) => call.options.identity)).toEqual([DEFAULT_AGENT_IDENTITY, DEFAULT_AGENT_IDENTITY]);

    const own = scriptedStreamFn([{ content: [text("done")] }]);
    const config = { model: scriptedModel, convertToLlm: defaultConvertToLlm, identity: { userAgent: "short" as const } };
    await runAgentLoop([{ role: "user", content: "go", timestamp: 1 }], { messages: [] }, config, () => {}, undefined, own);
    expect(own.calls[0].options.identity).toEqual({ ...DEFAULT_AGENT_IDENTITY, userAgent: "short" });
  });

  it("an Agent's identity option goes over the default", async () => {
    const streamFn = scriptedStreamFn([{ content: [text("done")] }]);
    const agent = new Agent({ streamFn, identity: { userAgent: { custom: "my-app/1" } }, initialState: { model: scriptedModel } });
    await agent.prompt("hi");
    expect(streamFn.calls[0].options.identity).toEqual({ ...DEFAULT_AGENT_IDENTITY, userAgent: { custom: "my-app/1" } });
  });
});
