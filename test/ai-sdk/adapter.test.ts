/**
 * `fromAiSdkModel` over in-memory language models of the v4 spec (no HTTP): the part mapping
 * corners no wire fixture reaches, the request mapping, the model facts and bad input.
 */
import { describe, expect, it } from "vitest";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { AI_SDK_MODELS, buildAiSdkRequest, fromAiSdkModel, UnknownAiSdkModelError, type AiSdkLanguageModel } from "../../src/providers/ai-sdk/index.js";
import type { AssistantMessage, Message, StreamOptions } from "../../src/types.js";
import { collect, project } from "../anthropic/helpers.js";

/** `reasoning: "off"` as an untyped caller may send it (the loop never does: absent means off). */
const UNTYPED_OFF = { reasoning: "off" } as unknown as StreamOptions;

const FACTS = { facts: { contextWindow: 1000, maxTokens: 100 } };
const usage = { inputTokens: { total: 3, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 2, text: undefined, reasoning: undefined } };
const finish = (unified: "stop" | "length" | "tool-calls" | "content-filter" | "interrupted" | "other", raw?: string): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified, raw },
  usage,
});

/** A model whose doStream answers with `parts` (or throws `error`), recording each call's options. */
function memoryModel(parts: LanguageModelV4StreamPart[] | (() => never), provider = "memory.chat", modelId = "m1") {
  const calls: LanguageModelV4CallOptions[] = [];
  const model: AiSdkLanguageModel = {
    specificationVersion: "v4",
    provider,
    modelId,
    doStream: async (options) => {
      calls.push(options);
      if (typeof parts === "function") parts();
      const list = parts as LanguageModelV4StreamPart[];
      return { stream: new ReadableStream({ start: (controller) => (list.forEach((part) => controller.enqueue(part)), controller.close()) }) };
    },
  };
  return { model, calls };
}

const ctx = (...messages: Message[]) => ({ messages: messages.length ? messages : [{ role: "user" as const, content: "hi", timestamp: 1 }] });

async function run(parts: LanguageModelV4StreamPart[] | (() => never), options = {}) {
  const { model, calls } = memoryModel(parts);
  const streamFn = fromAiSdkModel(model, FACTS);
  const events = await collect(streamFn(streamFn.model, ctx(), options));
  const last = events.at(-1)!;
  return { projected: events.map(project), final: last.type === "done" ? last.message : last.type === "error" ? last.error : undefined, calls };
}

describe("fromAiSdkModel: stream parts", () => {
  it("R70: each toolcall_end comes when its call closes, before the parts after it (a call sent whole gets one delta); provider-executed calls are left out", async () => {
    const { projected } = await run([
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "r1" },
      { type: "tool-input-start", id: "c1", toolName: "read" },
      { type: "tool-input-delta", id: "c1", delta: '{"path":' },
      { type: "tool-input-delta", id: "c1", delta: '"a"}' },
      { type: "tool-input-end", id: "c1" },
      { type: "tool-call", toolCallId: "c1", toolName: "read", input: '{"path":"a"}' },
      { type: "tool-call", toolCallId: "ws1", toolName: "web_search", input: "{}", providerExecuted: true },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "later" },
      { type: "tool-call", toolCallId: "c2", toolName: "stat", input: '{"path":"b"}' },
      { type: "text-end", id: "t" },
      finish("tool-calls"),
    ]);
    expect(projected).toEqual([
      ["start"],
      ["toolcall_start", 0],
      ["toolcall_delta", 0, '{"path":'],
      ["toolcall_delta", 0, '"a"}'],
      ["toolcall_end", 0, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } }],
      ["text_start", 1],
      ["text_delta", 1, "later"],
      ["toolcall_start", 2],
      ["toolcall_delta", 2, '{"path":"b"}'],
      ["toolcall_end", 2, { type: "toolCall", id: "c2", name: "stat", arguments: { path: "b" } }],
      ["text_end", 1, "later"],
      ["done", "toolUse"],
    ]);
  });

  it("R21: invalid tool JSON becomes arguments {} with an argumentsError quoting it", async () => {
    const { final } = await run([{ type: "tool-call", toolCallId: "c1", toolName: "read", input: "{not json" }, finish("tool-calls")]);
    const call = final!.content[0];
    expect(call).toMatchObject({ type: "toolCall", arguments: {} });
    expect(call.type === "toolCall" && call.argumentsError).toMatch(/^Tool arguments are not valid JSON .*Raw arguments: \{not json$/);
  });

  it("finish reasons: stop with tool calls is toolUse, other is stop, content-filter an error, interrupted a retryable truncation", async () => {
    expect((await run([{ type: "tool-call", toolCallId: "c", toolName: "t", input: "{}" }, finish("stop", "STOP")])).projected.at(-1)).toEqual(["done", "toolUse"]);
    expect((await run([{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "x" }, finish("other")])).final).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "x" }] });
    expect((await run([finish("content-filter", "SAFETY")])).final).toMatchObject({
      stopReason: "error",
      errorMessage: "The provider's content filter stopped the response (finish reason: SAFETY)",
      retry: { retryable: false },
    });
    expect((await run([finish("interrupted")])).final).toMatchObject({ stopReason: "error", retry: { retryable: true, kind: "connection" } });
  });

  it("the first finish ends the response: parts after it, a second finish among them, are ignored", async () => {
    const text = (id: string, delta: string): LanguageModelV4StreamPart[] => [{ type: "text-start", id }, { type: "text-delta", id, delta }, { type: "text-end", id }];
    const after = await run([...text("t", "before"), finish("stop"), { type: "text-delta", id: "t", delta: " AFTER" }, ...text("t2", "after finish")]);
    expect(after.final).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "before" }] });
    expect(after.projected.filter(([type]) => type === "text_delta")).toHaveLength(1);
    const twice = await run([{ type: "tool-call", toolCallId: "c", toolName: "t", input: "{}" }, finish("tool-calls"), finish("length")]);
    expect(twice.final).toMatchObject({ stopReason: "toolUse" });
  });

  it("an unreadable finish reason is an error that says so; a bare unified string (the older specs' shape) is read", async () => {
    const withReason = (finishReason: unknown) => run([{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "x" }, { type: "finish", finishReason, usage } as LanguageModelV4StreamPart]);
    expect((await withReason(42)).final).toMatchObject({ stopReason: "error", errorMessage: "The response's finish part has no readable finish reason (got 42)", retry: { retryable: false } });
    expect((await withReason(undefined)).final).toMatchObject({ stopReason: "error", errorMessage: "The response's finish part has no readable finish reason (got undefined)" });
    expect((await withReason({ raw: "weird" })).final).toMatchObject({ stopReason: "error", errorMessage: 'The response\'s finish part has no readable finish reason (got {"raw":"weird"})' });
    expect((await withReason("stop")).final).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "x" }] });
  });

  it("a body that ends without finish is a truncated response; an error part is classified from its text", async () => {
    expect((await run([{ type: "response-metadata" }])).final).toMatchObject({
      stopReason: "error",
      errorMessage: "memory stream ended before its finish part (response truncated)",
      retry: { retryable: true, kind: "connection" },
    });
    const overloaded = await run([{ type: "error", error: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }]);
    expect(overloaded.projected).toEqual([["error", "error"]]);
    expect(overloaded.final).toMatchObject({ retry: { retryable: true, kind: "overloaded" } });
    expect(overloaded.final!.errorMessage).toBe('memory stream error: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
  });

  it("never throws: a doStream that throws a plain error is one error event, not retryable", async () => {
    const { projected, final } = await run(() => {
      throw new TypeError("boom");
    });
    expect(projected).toEqual([["error", "error"]]);
    expect(final).toMatchObject({ stopReason: "error", errorMessage: "memory request failed: boom", retry: { retryable: false } });
  });

  it("call options: maxOutputTokens (the call's, else the model's), reasoning only for a reasoning model and not off, temperature, toolChoice, headers without nulls", async () => {
    const { model, calls } = memoryModel([finish("stop")]);
    const reasoning = fromAiSdkModel(model, { facts: { contextWindow: 1000, maxTokens: 100, reasoning: true }, providerOptions: { memory: { x: 1 } } });
    await collect(reasoning(reasoning.model, ctx({ role: "system", content: "", timestamp: 0, toolsAdded: [{ name: "t", description: "d", parameters: {} }] }, { role: "user", content: "hi", timestamp: 1 }), {
      reasoning: "high",
      temperature: 0.2,
      toolChoice: "none",
      headers: { "x-a": "1", "x-b": null },
    }));
    await collect(reasoning(reasoning.model, ctx(), { ...UNTYPED_OFF, maxTokens: 7 }));
    const plain = fromAiSdkModel(model, FACTS);
    await collect(plain(plain.model, ctx(), { reasoning: "high" }));
    const [first, second, third] = calls.map(({ abortSignal: _s, prompt: _p, ...rest }) => rest);
    expect(first).toEqual({
      maxOutputTokens: 100,
      tools: [{ type: "function", name: "t", description: "d", inputSchema: { type: "object" } }],
      toolChoice: { type: "none" },
      temperature: 0.2,
      reasoning: "high",
      headers: { "x-a": "1", "x-b": undefined },
      providerOptions: { memory: { x: 1 } },
    });
    expect(second).toEqual({ maxOutputTokens: 7, providerOptions: { memory: { x: 1 } } });
    expect(third).toEqual({ maxOutputTokens: 100 });
  });
});

describe("fromAiSdkModel: model facts", () => {
  it("a known model gets the table's facts (a dated snapshot its alias's); facts override field by field; cost is priced from them", async () => {
    const gpt = fromAiSdkModel(memoryModel([], "openai.responses", "gpt-4o-2024-08-06").model);
    expect(gpt.model).toMatchObject({ id: "gpt-4o-2024-08-06", name: "GPT-4o", provider: "openai", api: "ai-sdk:openai.responses", contextWindow: 128_000, maxTokens: 16_384 });
    expect(gpt.model.cost).toEqual(AI_SDK_MODELS["openai:gpt-4o"]!.cost);
    const claude = fromAiSdkModel(memoryModel([], "anthropic.messages", "claude-haiku-4-5").model, { facts: { maxTokens: 1000 } });
    expect(claude.model).toMatchObject({ provider: "anthropic", contextWindow: 200_000, maxTokens: 1000, cost: { input: 1, output: 5 } });

    const { model } = memoryModel([{ type: "text-start", id: "t" }, { type: "text-end", id: "t" }, { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage: { inputTokens: { total: 1_000_000, noCache: undefined, cacheRead: 200_000, cacheWrite: undefined }, outputTokens: { total: 1_000_000, text: undefined, reasoning: undefined } } }], "google.generative-ai", "gemini-2.5-flash");
    const gemini = fromAiSdkModel(model);
    const events = await collect(gemini(gemini.model, ctx(), {}));
    const final = (events.at(-1) as { message: AssistantMessage }).message;
    // 800k uncached input at $0.30, 200k cached at $0.03, 1M output at $2.50.
    expect(final.usage).toMatchObject({ input: 800_000, cacheRead: 200_000, output: 1_000_000, totalTokens: 2_000_000 });
    expect(final.usage.cost.total).toBeCloseTo(0.24 + 0.006 + 2.5, 10);
  });

  it("an unknown model without facts throws UnknownAiSdkModelError at once; a non-v4 object a TypeError", () => {
    expect(() => fromAiSdkModel(memoryModel([], "ollama.chat", "llama3.2").model)).toThrow(UnknownAiSdkModelError);
    expect(() => fromAiSdkModel(memoryModel([], "ollama.chat", "llama3.2").model)).toThrow(/Unknown model "llama3\.2" \(ollama\.chat\).*facts: \{ contextWindow, maxTokens/);
    const v3 = { ...memoryModel([]).model, specificationVersion: "v3" } as unknown as AiSdkLanguageModel;
    expect(() => fromAiSdkModel(v3, FACTS)).toThrow(new TypeError("fromAiSdkModel needs a language model of the AI SDK's v4 specification (ai@7 providers); got specification v3"));
  });
});

describe("buildAiSdkRequest", () => {
  const assistant = (content: AssistantMessage["content"], api = "ai-sdk:memory.chat", stopReason: AssistantMessage["stopReason"] = "toolUse"): AssistantMessage => ({
    role: "assistant",
    content,
    api,
    provider: "memory",
    model: "m1",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason,
    timestamp: 1,
  });

  it("R30: replays system messages into one system prompt and the tool list; groups tool results; answers a call without a result; drops a result without its call; echoes provider metadata only to its own API", () => {
    const request = buildAiSdkRequest(
      [
        { role: "system", content: "Be brief.", timestamp: 0, toolsAdded: [{ name: "read", description: "Read", parameters: { type: "object", properties: {} } }] },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: 1 },
        assistant([
          { type: "thinking", thinking: "hmm", thinkingSignature: 'ai-sdk:{"memory":{"sig":"s1"}}' },
          { type: "text", text: "Reading.", textSignature: 'ai-sdk:{"memory":{"id":"t1"}}' },
          { type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } },
          { type: "toolCall", id: "c2", name: "read", arguments: { path: "b" } },
        ]),
        { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "A" }], isError: false, timestamp: 2 },
        { role: "toolResult", toolCallId: "zz", toolName: "read", content: [{ type: "text", text: "stray" }], isError: false, timestamp: 2 },
        { role: "system", content: "", sections: { mode: "plan" }, timestamp: 3 },
        assistant([{ type: "thinking", thinking: "other", thinkingSignature: "opaque" }, { type: "text", text: "From elsewhere" }], "anthropic-messages", "stop"),
        assistant([], "ai-sdk:memory.chat", "error"),
        { role: "user", content: "next", timestamp: 4 },
      ],
      "ai-sdk:memory.chat",
    );
    expect(request.tools).toEqual([{ type: "function", name: "read", description: "Read", inputSchema: { type: "object", properties: {} } }]);
    expect(request.prompt).toEqual([
      { role: "system", content: "Be brief.\n\nplan" },
      { role: "user", content: [{ type: "text", text: "look" }, { type: "file", mediaType: "image/png", data: { type: "data", data: "AAAA" } }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hmm", providerOptions: { memory: { sig: "s1" } } },
          { type: "text", text: "Reading.", providerOptions: { memory: { id: "t1" } } },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } },
          { type: "tool-call", toolCallId: "c2", toolName: "read", input: { path: "b" } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "A" } },
          { type: "tool-result", toolCallId: "c2", toolName: "read", output: { type: "error-text", value: "No result provided" } },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "From elsewhere" }] },
      { role: "user", content: [{ type: "text", text: "next" }] },
    ]);
  });

  it("a tool result with images keeps its parts in order; an error one keeps its flag as a leading note (the spec's content output has none)", () => {
    const image = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };
    const content = [{ type: "text" as const, text: "Render failed: see the partial frame" }, image, { type: "text" as const, text: "(frame 3 of 10)" }];
    const output = (isError: boolean) => {
      const request = buildAiSdkRequest(
        [
          { role: "user", content: "go", timestamp: 0 },
          assistant([{ type: "toolCall", id: "c1", name: "render", arguments: {} }]),
          { role: "toolResult", toolCallId: "c1", toolName: "render", content, isError, timestamp: 1 },
        ],
        "ai-sdk:memory.chat",
      );
      const tool = request.prompt.at(-1) as { content: { output: unknown }[] };
      return tool.content[0]!.output;
    };
    const parts = [
      { type: "text", text: "Render failed: see the partial frame" },
      { type: "file", mediaType: "image/png", data: { type: "data", data: "iVBORw0KGgo=" } },
      { type: "text", text: "(frame 3 of 10)" },
    ];
    expect(output(false)).toEqual({ type: "content", value: parts });
    expect(output(true)).toEqual({ type: "content", value: [{ type: "text", text: "(The tool reported an error.)" }, ...parts] });
  });
});
