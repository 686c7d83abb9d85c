import { describe, expect, it } from "vitest";
import { initialRunContext } from "../../machines/run/helpers.js";
import { runInput } from "../../src/api/run-input.js";
import { ToolRegistry } from "../../src/loop/tool-registry.js";

const model = { id: "m", name: "m", api: "a", provider: "p", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1, maxTokens: 1 };

describe("the run context's size", () => {
  // Every `assign` copies the context (`Object.assign({}, context, update)`); on V8 (Node 20 and 24)
  // a copy with 20 or more keys is a dictionary-mode object: the 20th key (R100's, beside the host
  // key) cost bench (a) +7–14 % instructions a run (bench/README.md, "The 20th key").
  it("keeps fewer than 20 top-level keys, and every copy of it fast", () => {
    const context = initialRunContext({ ...runInput({ prompts: [], messages: [], tools: new ToolRegistry([]), config: { model } as never, startedAt: 0 }), host: "h" });
    expect(Object.keys(context).length).toBeLessThan(20);
  });
});
