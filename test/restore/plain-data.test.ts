/**
 * SPEC R13: what enters a run is converted to plain JSON data where it enters, so every snapshot
 * serializes: a tool's `details` with a cycle, a `Map`, a `bigint`, a function, a `Date`, a
 * revoked proxy. (`getPersistedSnapshot()` used to throw `RangeError` on a cyclic `details`.)
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { createAgentRunLogic, defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall, toPlainData, type AgentTool } from "../../src/index.js";

describe("R13: plain data where it enters the run", () => {
  it("R13: a tool's non-JSON details are converted, and every snapshot of the run serializes", async () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const odd: AgentTool = {
      name: "odd",
      label: "odd",
      description: "returns odd details",
      parameters: { type: "object", properties: {} },
      execute: async () => ({
        content: [{ type: "text", text: "ok" }],
        details: { cyclic, map: new Map([["a", 1]]), big: 10n, fn: () => 1, at: new Date(0), gone: proxy, set: new Set([1, 2]) },
      }),
    };
    const logic = createAgentRunLogic({
      streamFn: scriptedStreamFn([{ content: [toolCall("odd")] }, { content: [text("done")] }]),
      tools: [odd],
      config: { model: scriptedModel, convertToLlm: defaultConvertToLlm },
    });
    const run = createActor(logic, { input: { messages: [], prompts: [{ role: "user", content: "go", timestamp: 0 }] } });
    const serialized: string[] = [];
    run.subscribe(() => serialized.push(JSON.stringify(run.getPersistedSnapshot())));
    run.start();
    const added = await toPromise(run);
    expect(serialized.length).toBeGreaterThan(5);
    const result = added.find((message) => (message as { role: string }).role === "toolResult") as { details: unknown };
    expect(result.details).toEqual({
      cyclic: { name: "loop", self: "[Circular]" },
      map: { a: 1 },
      big: "10",
      at: "1970-01-01T00:00:00.000Z",
      gone: "[unreadable]",
      set: [1, 2],
    });
  });

  it("R13: plain JSON comes back as the same object (no copy)", () => {
    const plain = { a: [1, "x", { b: null }], c: true };
    expect(toPlainData(plain)).toBe(plain);
  });
});
