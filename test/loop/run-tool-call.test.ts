/**
 * runToolCall (SPEC "Entry points"): one call through the same pipeline as a model-issued call
 * (R21–R26), with no events and no messages; it never rejects.
 */
import { describe, expect, it } from "vitest";
import { runToolCall, type AgentToolResult, type JsonObject, type ToolCall } from "../../src/index.js";
import { assistantMessage, ok, tool } from "./helpers.js";

const call = (name: string, args: JsonObject = {}): ToolCall => ({ type: "toolCall", id: "c1", name, arguments: args });
const textOf = (result: AgentToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const schema = { type: "object", properties: { count: { type: "number" } }, required: ["count"] };

describe("runToolCall", () => {
  const base = { assistantMessage: assistantMessage([], "toolUse"), context: { messages: [] } };

  it("R22: runs the tool with validated (coerced) arguments and forwards updates", async () => {
    const updates: unknown[] = [];
    const echo = tool(
      "echo",
      async (_id, params: { count: number }, _signal, onUpdate) => {
        onUpdate?.(ok("half"));
        return ok(`count=${params.count}`);
      },
      { parameters: schema },
    );
    const outcome = await runToolCall(call("echo", { count: "3" }), { ...base, tools: [echo], onUpdate: (u) => void updates.push(u) });
    expect(outcome.isError).toBe(false);
    expect(textOf(outcome.result)).toBe("count=3");
    expect(updates).toEqual([ok("half")]);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("R21: an unknown tool, invalid arguments, a block and an aborted signal are error results, never rejections", async () => {
    const counter = tool("counter", async () => ok("ran"), { parameters: schema });
    const aborted = new AbortController();
    aborted.abort();
    const outcomes = await Promise.all([
      runToolCall(call("missing"), { ...base, tools: [counter] }),
      runToolCall(call("counter", { count: "many" }), { ...base, tools: [counter] }),
      runToolCall(call("counter", { count: 1 }), { ...base, tools: [counter], beforeToolCall: async () => ({ block: true, reason: "no" }) }),
      runToolCall(call("counter", { count: 1 }), { ...base, tools: [counter], signal: aborted.signal }),
    ]);
    expect(outcomes.map((o) => [o.isError, textOf(o.result).split("\n")[0], o.durationMs])).toEqual([
      [true, "Tool missing not found", undefined],
      [true, 'Validation failed for tool "counter":', undefined],
      [true, "no", undefined],
      [true, "Operation aborted", undefined],
    ]);
  });

  it("R22, R23: a throwing tool is an error result; afterToolCall overrides field by field", async () => {
    const broken = tool("broken", async () => {
      throw new Error("disk full");
    });
    const thrown = await runToolCall(call("broken"), { ...base, tools: [broken] });
    expect([thrown.isError, textOf(thrown.result)]).toEqual([true, "disk full"]);

    const fine = tool("fine", async () => ok("raw", { details: { a: 1 } }));
    const overridden = await runToolCall(call("fine"), {
      ...base,
      tools: [fine],
      afterToolCall: async () => ({ content: [{ type: "text", text: "redacted" }], isError: true }),
    });
    expect([overridden.isError, textOf(overridden.result), overridden.result.details]).toEqual([true, "redacted", { a: 1 }]);
  });
});
