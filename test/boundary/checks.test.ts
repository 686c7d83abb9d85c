/** Issue 15: the boundary's pure checks, one describe per concern. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import {
  AgentInputError,
  HookResultError,
  ToolResultError,
  boundJson,
  boundList,
  boundText,
  checkAfterToolCallResult,
  checkApiKey,
  checkBeforeToolCallResult,
  checkTransformedMessages,
  checkMessage,
  checkMessages,
  checkModel,
  checkPolledMessages,
  checkRequestUpdate,
  checkSignal,
  checkToolResult,
  checkTools,
  checkToolSchema,
  checkTurnDecision,
  checkTurnUpdate,
  isSecretKeyName,
  utf8Bytes,
} from "../../src/boundary/index.js";
import * as root from "../../src/index.js";
import { scriptedModel } from "../../src/index.js";

const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
// Not enumerable, so test titles can print it; the checks read it anyway.
const throwingGetter = () => Object.defineProperty({}, "content", { enumerable: false, get: () => { throw new Error("boom"); } });

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("issue 15: typed errors are exported from the package root", () => {
  it("AgentInputError, HookResultError and ToolResultError are TypeErrors with their fields", () => {
    expect(root.AgentInputError).toBe(AgentInputError);
    expect(root.HookResultError).toBe(HookResultError);
    expect(root.ToolResultError).toBe(ToolResultError);
    const error = new AgentInputError("signal", "bad");
    expect(error).toBeInstanceOf(TypeError);
    expect({ name: error.name, field: error.field }).toEqual({ name: "AgentInputError", field: "signal" });
  });
});

describe("issue 15 item 9: checkSignal", () => {
  it("accepts undefined and real signals (aborted or not)", () => {
    expect(checkSignal(undefined)).toBeUndefined();
    const controller = new AbortController();
    expect(checkSignal(controller.signal)).toBe(controller.signal);
    expect(checkSignal(AbortSignal.abort())).toBeInstanceOf(AbortSignal);
  });
  it.each([
    ["{aborted: true}", () => ({ aborted: true }), "an object"],
    ["{aborted: false}", () => ({ aborted: false }), "an object"],
    ["a string", () => "stop", 'a string ("stop")'],
    ["null", () => null, "null"],
    ["a revoked proxy", revoked, "a revoked proxy"],
  ])("refuses %s with an AgentInputError naming the argument", (_name, value, got) => {
    const error = thrown(() => checkSignal(value(), "signal"));
    expect(error).toBeInstanceOf(AgentInputError);
    expect(error).toMatchObject({ field: "signal", message: `signal must be an AbortSignal (e.g. new AbortController().signal), got ${got}` });
  });
});

describe("issue 15 item 13: checkMessage / checkMessages", () => {
  it("accepts the four roles and app-defined roles", () => {
    const messages = [
      { role: "user", content: "hi", timestamp: 1 },
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: 1 },
      { role: "system", content: "be brief", timestamp: 1 },
      { role: "assistant", content: [{ type: "text", text: "ok" }, { type: "toolCall", id: "1", name: "t", arguments: {} }], timestamp: 1 },
      { role: "toolResult", toolCallId: "1", toolName: "t", content: [{ type: "text", text: "done" }], isError: false, timestamp: 1 },
      { role: "note", anything: 42 },
    ];
    expect(checkMessages(messages, "prompts")).toBe(messages);
  });
  it.each([
    [() => 5, "prompt", "prompt must be a message object with a role, got a number (5)"],
    [() => "abc", "prompt", 'prompt must be a message object with a role, got a string ("abc")'],
    [() => ({ content: "x" }), "m", "m.role must be a non-empty string, got undefined"],
    [() => ({ role: "user", content: 42 }), "m", "m.content must be a string or an array of content blocks, got a number (42)"],
    [() => ({ role: "user", content: [{ type: "text", text: 42 }] }), "m", "m.content[0].text must be a string, got a number (42)"],
    [() => ({ role: "user", content: [{ type: "toolCall" }] }), "m", 'm.content[0].type must be "text" or "image", got a string ("toolCall")'],
    [() => ({ role: "toolResult", toolCallId: "1", toolName: "t", content: null }), "m", "m.content must be an array of content blocks, got null"],
    [throwingGetter, "m", "m.role must be a non-empty string, got undefined"],
    [revoked, "m", "m must be a message object with a role, got a revoked proxy"],
  ])("refuses case %#, naming the field", (value, field, message) => {
    const error = thrown(() => checkMessage(value(), field));
    expect(error).toBeInstanceOf(AgentInputError);
    expect(error.message).toBe(message);
  });
  it("names the index of the bad message in a list", () => {
    expect(thrown(() => checkMessages([{ role: "user", content: "ok" }, 5], "prompts"))).toMatchObject({ field: "prompts[1]" });
    expect(thrown(() => checkMessages("abc", "prompts")).message).toBe('prompts must be an array of messages, got a string ("abc")');
  });
});

describe("issue 15 item 8: checkModel", () => {
  it("accepts a full descriptor", () => expect(checkModel(scriptedModel)).toBe(scriptedModel));
  it.each([
    [null, "model", "model must be a model descriptor object ({id, api, provider, cost, …}), got null"],
    ["gpt", "model", 'model must be a model descriptor object ({id, api, provider, cost, …}), got a string ("gpt")'],
    [{ ...scriptedModel, cost: undefined }, "model.cost", "model.cost must be an object, got undefined (prices per million tokens: {input, output, cacheRead, cacheWrite})"],
    [{ ...scriptedModel, cost: { ...scriptedModel.cost, output: "1" } }, "model.cost.output", 'model.cost.output must be a finite number, got a string ("1")'],
    [{ ...scriptedModel, id: 7 }, "model.id", "model.id must be a string, got a number (7)"],
  ])("refuses case %#", (value, field, message) => {
    expect(thrown(() => checkModel(value))).toMatchObject({ name: "AgentInputError", field, message });
  });
});

describe("issue 15 item 13: checkTools / checkToolSchema", () => {
  const tool = { name: "t", label: "t", description: "", parameters: { type: "object" }, execute: async () => ({ content: [], details: {} }) };
  it("accepts undefined, JSON Schema and zod tools, and shared (acyclic) subschemas", () => {
    const shared = { type: "string" };
    expect(checkTools(undefined)).toBeUndefined();
    expect(checkTools([tool, { ...tool, parameters: z.object({ a: z.string() }) }, { ...tool, parameters: { type: "object", properties: { a: shared, b: shared } } }])).toHaveLength(3);
  });
  it("refuses a string, a non-tool item, a missing execute", () => {
    expect(thrown(() => checkTools("x", "context.tools")).message).toBe('context.tools must be an array of tools, got a string ("x")');
    expect(thrown(() => checkTools([tool, 5], "context.tools"))).toMatchObject({ field: "context.tools[1]" });
    expect(thrown(() => checkTools([{ ...tool, execute: undefined }], "tools")).message).toBe("tools[0].execute must be a function, got undefined");
  });
  it("refuses a cyclic JSON Schema, naming where the cycle closes", () => {
    const schema: Record<string, unknown> = { type: "object", properties: {} };
    (schema.properties as Record<string, unknown>).self = schema;
    const error = thrown(() => checkToolSchema(schema, "parameters"));
    expect(error).toBeInstanceOf(AgentInputError);
    expect(error).toMatchObject({ field: "parameters.properties.self" });
    expect(error.message).toContain("a cycle");
  });
  it("refuses a zod 3 schema by name (its own bound methods were named as the problem) and an array", () => {
    const error = thrown(() => checkTools([{ ...tool, parameters: z3.object({ path: z3.string() }) }], "context.tools"));
    expect(error).toBeInstanceOf(AgentInputError);
    expect(error.message).toBe('context.tools[0].parameters is a zod 3 schema: tools take zod 4 schemas (`import { z } from "zod"`, zod 4) or JSON Schema');
    expect(thrown(() => checkToolSchema([{ type: "string" }], "parameters")).message).toMatch(/^parameters must be a JSON Schema object or a zod schema, got an array/);
  });
  it("handles a schema 10,000 levels deep without overflowing", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10_000; i++) schema = { type: "array", items: schema };
    expect(() => checkToolSchema(schema)).not.toThrow();
  });
});

describe("issue 15 item 10: checkToolResult", () => {
  it("R22: accepts a result without content, or with null content (an untyped JS tool's), as the reference does", () => {
    for (const result of [{ details: { a: 1 } }, { content: null, details: {} }]) expect(checkToolResult("t", result)).toBe(result);
  });
  it("accepts text and image content with any details", () => {
    const result = { content: [{ type: "text", text: "ok" }, { type: "image", data: "AA", mimeType: "image/png" }], details: revoked() };
    expect(checkToolResult("t", result)).toBe(result);
  });
  it.each([
    [() => ({ content: [{ type: "text", text: 42 }] }), "content[0].text", "Tool read returned an invalid result: content[0].text must be a string, got a number (42)"],
    [() => ({ content: "x" }), "content", 'Tool read returned an invalid result: content must be an array of content blocks, got a string ("x")'],
    [() => undefined, "", "Tool read returned an invalid result: the result must be an object { content: [...], details }, got undefined"],
    [() => ({ content: [], isError: "yes" }), "isError", 'Tool read returned an invalid result: isError must be a boolean, got a string ("yes")'],
    [throwingGetter, "content", "Tool read returned an invalid result: content could not be read (its getter threw)"],
  ])("refuses case %#, naming the field", (value, field, message) => {
    expect(thrown(() => checkToolResult("read", value()))).toMatchObject({ name: "ToolResultError", tool: "read", field, message });
  });
});

describe("issue 15 items 10, 13: hook results", () => {
  it("absent results pass", () => {
    for (const check of [checkTurnUpdate, checkRequestUpdate, checkTurnDecision, checkBeforeToolCallResult, checkAfterToolCallResult]) {
      expect(check(undefined)).toBeUndefined();
    }
    expect(checkPolledMessages("getSteeringMessages", undefined)).toEqual([]);
    expect(checkApiKey(undefined)).toBeUndefined();
    expect(checkApiKey("k")).toBe("k");
  });
  it('getSteeringMessages resolving "abc" or non-messages', () => {
    expect(thrown(() => checkPolledMessages("getSteeringMessages", "abc"))).toMatchObject({
      name: "HookResultError",
      hook: "getSteeringMessages",
      message: 'getSteeringMessages returned an invalid result: the result must be an array of messages, got a string ("abc")',
    });
    expect(thrown(() => checkPolledMessages("getFollowUpMessages", [5]))).toMatchObject({ hook: "getFollowUpMessages", field: "[0]" });
  });
  it.each([
    ["prepareRequest", () => checkRequestUpdate({ model: "gpt" }), "model", 'prepareRequest returned an invalid result: model must be a model descriptor object ({id, api, provider, cost, …}), got a string ("gpt")'],
    ["prepareRequest", () => checkRequestUpdate({ thinkingLevel: "huge" }), "thinkingLevel", 'prepareRequest returned an invalid result: thinkingLevel must be one of off, minimal, low, medium, high, xhigh, max, got a string ("huge")'],
    ["prepareNextTurn", () => checkTurnUpdate({ context: { messages: "x" } }), "context.messages", 'prepareNextTurn returned an invalid result: context.messages must be an array of messages, got a string ("x")'],
    ["prepareNextTurn", () => checkTurnUpdate({ context: { messages: [], tools: "x" } }), "context.tools", 'prepareNextTurn returned an invalid result: context.tools must be an array of tools, got a string ("x")'],
    ["prepareNextTurn", () => checkTurnUpdate({ messages: [5] }), "messages[0]", "prepareNextTurn returned an invalid result: messages[0] must be a message object with a role, got a number (5)"],
    ["prepareNextTurn", () => checkTurnUpdate(7), "result", "prepareNextTurn returned an invalid result: the result must be an object or undefined, got a number (7)"],
    ["finishTurn", () => checkTurnDecision({ action: "stop" }), "action", 'finishTurn returned an invalid result: action must be "end" or "continue", got a string ("stop")'],
    ["beforeToolCall", () => checkBeforeToolCallResult({ block: "yes" }), "block", 'beforeToolCall returned an invalid result: block must be a boolean, got a string ("yes")'],
    ["afterToolCall", () => checkAfterToolCallResult({ content: "x" }), "content", 'afterToolCall returned an invalid result: content must be an array of content blocks, got a string ("x")'],
    ["transformContext", () => checkTransformedMessages("abc"), "result", 'transformContext returned an invalid result: the result must be an array of messages, got a string ("abc")'],
    ["transformContext", () => checkTransformedMessages(undefined), "result", "transformContext returned an invalid result: the result must be an array of messages, got undefined"],
    ["getApiKey", () => checkApiKey({ key: "sk-ant-secret" }), "result", "getApiKey returned an invalid result: the result must be a string or undefined, got object"],
  ])("%s: a malformed result names the hook and the field (case %#)", (hook, run, field, message) => {
    expect(thrown(run)).toMatchObject({ name: "HookResultError", hook, field, message });
  });
});

describe("issue 15 item 12: bounded text", () => {
  it("boundText keeps short texts and cuts long ones with the bytes omitted", () => {
    expect(boundText("short", 100)).toBe("short");
    const cut = boundText("é".repeat(10_000), 100);
    expect(cut.length).toBeLessThanOrEqual(100);
    expect(cut).toMatch(/ … \[\d+ bytes omitted\]$/);
    const kept = cut.replace(/ … \[\d+ bytes omitted\]$/, "");
    expect(Number(/\[(\d+) bytes/.exec(cut)![1])).toBe(utf8Bytes("é".repeat(10_000 - kept.length)));
  });
  it("boundList renders only what it shows", () => {
    let rendered = 0;
    const text = boundList(Array.from({ length: 1_000_000 }, (_, i) => i), 3, (n) => (rendered++, String(n)));
    expect({ text, rendered }).toEqual({ text: "0, 1, 2, … 999997 more", rendered: 3 });
  });
  it("boundJson cuts long strings and arrays before serializing, and never throws", () => {
    const text = boundJson({ a: "x".repeat(50_000_000), list: Array.from({ length: 1_000 }, (_, i) => i) }, 4_000);
    expect(text.length).toBeLessThanOrEqual(4_000);
    expect(text).toContain("… 950 more");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(boundJson(cyclic)).toBe("[object Object]");
    expect(boundJson(revoked())).toBe("[unprintable value]");
  });
});

describe("issue 15 item 7: secret key names", () => {
  it.each(["token", "access_token", "x-auth-token", "Cookie", "set-cookie", "private_key", "ANTHROPIC_API_KEY", "apiKey", "x-api-key", "Authorization", "client_secret", "password", "aws_secret_access_key"])(
    "%s is a secret key name",
    (key) => expect(isSecretKeyName(key)).toBe(true),
  );
  it.each(["maxTokens", "totalTokens", "name", "content", "thinkingSignature", "sessionId", "details", "data"])("%s is not", (key) =>
    expect(isSecretKeyName(key)).toBe(false),
  );
});

describe("R70: maxConcurrentTools is checked where the loop settings enter", () => {
  it("R70: a limit that is not a whole number ≥ 1 is an AgentInputError naming the field", async () => {
    const { checkLoopSettings } = await import("../../src/boundary/run-arguments.js");
    for (const bad of [0, 1.5, -1, "3", Number.NaN]) {
      expect(() => checkLoopSettings({ maxConcurrentTools: bad as never }, "config.")).toThrow(expect.objectContaining({ name: "AgentInputError", field: "config.maxConcurrentTools" }));
    }
    expect(() => checkLoopSettings({ maxConcurrentTools: 3 }, "config.")).not.toThrow();
  });
});
