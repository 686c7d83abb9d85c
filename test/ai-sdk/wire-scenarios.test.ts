/**
 * `fromAiSdkModel` through real AI SDK providers (`@ai-sdk/openai` Responses and Chat Completions,
 * `@ai-sdk/google`) against a local server speaking each provider's streaming wire: the scenario
 * list of the Anthropic wire tests (test/anthropic/), whole event sequences asserted, the server
 * counting requests (the AI SDK's `doStream` never retries: one request per call, whatever failed).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fromAiSdkModel } from "../../src/providers/ai-sdk/index.js";
import type { AssistantMessageEvent, Message, StreamOptions } from "../../src/types.js";
import { finalOf, project } from "../anthropic/helpers.js";
import { collect } from "../anthropic/helpers.js";
import { jsonError, resetAfter, sseFrames, stallAfter, startWireServer, type WireServer } from "../support/wire-server.js";
import { WIRE_API_KEY, WIRES, type Wire } from "./wires.js";

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterEach(() => server.clear());
afterAll(() => server.close());

const READ_TOOL = { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };
const context = (): { messages: Message[] } => ({
  messages: [
    { role: "system", content: "You are terse.", timestamp: 1, toolsAdded: [READ_TOOL] },
    { role: "user", content: "Hello", timestamp: 2 },
  ],
});

/** Usage priced with the wire's model (table prices): `input` excludes cached tokens. */
function priced(stream: ReturnType<typeof fromAiSdkModel>, input: number, output: number, cacheRead = 0) {
  const { cost } = stream.model;
  const c = { input: (input * cost.input) / 1e6, output: (output * cost.output) / 1e6, cacheRead: (cacheRead * cost.cacheRead) / 1e6, cacheWrite: 0 };
  return { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead, cost: { ...c, total: c.input + c.output + c.cacheRead } };
}

async function play(wire: Wire, options: StreamOptions = {}, onEvent?: (event: AssistantMessageEvent) => void, idleTimeoutMs?: number) {
  const streamFn = fromAiSdkModel(wire.model(server.url), idleTimeoutMs === undefined ? {} : { idleTimeoutMs });
  const stream = streamFn(streamFn.model, context(), options);
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    onEvent?.(event);
  }
  const final = await stream.result();
  // The key is in the provider object and the request headers, never in what the caller sees.
  expect(JSON.stringify(events)).not.toContain(WIRE_API_KEY);
  expect(JSON.stringify(final)).not.toContain(WIRE_API_KEY);
  return { events, final, streamFn, projected: events.map(project) };
}

const fieldsOf = (wire: Wire) => ({
  role: "assistant",
  api: wire.name === "google" ? "ai-sdk:google.generative-ai" : wire.name === "openai-chat" ? "ai-sdk:openai.chat" : "ai-sdk:openai.responses",
  provider: wire.name === "google" ? "google" : "openai",
  model: wire.modelId,
});

describe.each(WIRES.map((wire) => [wire.name, wire] as const))("AI SDK wire %s", (_name, wire) => {
  it("text: streams the deltas, ends done/stop with usage priced from the table; one request, to the wire's path, carrying the key", async () => {
    server.script(sseFrames(wire.text(["Hel", "lo, wörld"], { input: 12, output: 7, cached: 4 })));
    const { projected, events, streamFn } = await play(wire);
    expect(projected).toEqual([
      ["start"],
      ["text_start", 0],
      ["text_delta", 0, "Hel"],
      ["text_delta", 0, "lo, wörld"],
      ["text_end", 0, "Hello, wörld"],
      ["done", "stop"],
    ]);
    expect(finalOf(events)).toEqual({
      ...fieldsOf(wire),
      // Responses names its output items; the id is kept to be echoed on the next request.
      content: [{ type: "text", text: "Hello, wörld", ...(wire.name === "openai-responses" ? { textSignature: 'ai-sdk:{"openai":{"itemId":"msg_wire_1"}}' } : {}) }],
      usage: priced(streamFn, 12, 7, 4),
      stopReason: "stop",
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].url).toMatch(wire.path);
    const headers = server.requests[0].headers;
    expect(headers.authorization ?? headers["x-goog-api-key"]).toContain(WIRE_API_KEY);
  });

  if (wire.reasoning) {
    const reasoning = wire.reasoning;
    it("reasoning: a thinking block, then the text; the provider's metadata (OpenAI's encrypted reasoning, Gemini's thought signature) kept on its block", async () => {
      server.script(sseFrames(reasoning(["Let me ", "think."], ["Done."])));
      const { projected, final } = await play(wire, { reasoning: "medium" });
      expect(projected).toEqual([
        ["start"],
        ["thinking_start", 0],
        ["thinking_delta", 0, "Let me "],
        ["thinking_delta", 0, "think."],
        ["thinking_end", 0, "Let me think."],
        ["text_start", 1],
        ["text_delta", 1, "Done."],
        ["text_end", 1, "Done."],
        ["done", "stop"],
      ]);
      const [thinking, text] = final.content;
      if (wire.name === "google") expect(text.type === "text" && text.textSignature).toBe('ai-sdk:{"google":{"thoughtSignature":"sig_wire_g1"}}');
      else expect(thinking.type === "thinking" && thinking.thinkingSignature).toMatch(/^ai-sdk:\{"openai":\{.*"reasoningEncryptedContent":"enc_wire_1"/);
    });
  }

  it(`parallel tool calls${wire.argumentDeltas ? " with argument deltas" : " (sent whole on this wire)"}: two calls, each ended with its parsed arguments, done/toolUse`, async () => {
    const calls = [
      { id: "call_a", name: "read", chunks: ['{"pa', 'th":"a.t', 'xt"}'] },
      { id: "call_b", name: "read", chunks: ['{"path"', ':"b.txt"}'] },
    ];
    server.script(sseFrames(wire.toolCalls(calls)));
    const { projected } = await play(wire);
    const id = (i: number) => (wire.name === "google" ? `gcall_${i + 1}` : calls[i].id);
    const end = (i: number, path: string) => ["toolcall_end", i, { type: "toolCall", id: id(i), name: "read", arguments: { path } }];
    const deltas = (i: number) => (wire.argumentDeltas ? calls[i].chunks : [calls[i].chunks.join("")]).map((d) => ["toolcall_delta", i, d]);
    // When a call ends is the provider package's choice: Responses closes each call on its
    // output_item.done, Gemini sends each whole, the Chat Completions tracker closes them at the end.
    const expected =
      wire.name === "openai-chat"
        ? [["start"], ["toolcall_start", 0], ...deltas(0), ["toolcall_start", 1], ...deltas(1), end(0, "a.txt"), end(1, "b.txt"), ["done", "toolUse"]]
        : [["start"], ["toolcall_start", 0], ...deltas(0), end(0, "a.txt"), ["toolcall_start", 1], ...deltas(1), end(1, "b.txt"), ["done", "toolUse"]];
    expect(projected).toEqual(expected);
  });

  it("the request: system prompt, the declared tool, the conversation, and maxOutputTokens from the model", async () => {
    server.script(sseFrames(wire.text(["ok"])));
    const { streamFn } = await play(wire);
    const body = JSON.stringify(server.requests[0].body);
    for (const needle of ["You are terse.", "Read a file", "Hello", String(streamFn.model.maxTokens)]) expect(body).toContain(needle);
  });

  it("R61: an output-limited reply ends done/length", async () => {
    server.script(sseFrames(wire.truncatedByLength("The answer is")));
    const { projected, final } = await play(wire, { maxTokens: 3 });
    expect(projected).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "The answer is"], ["text_end", 0, "The answer is"], ["done", "length"]]);
    expect(final.stopReason).toBe("length");
    expect(JSON.stringify(server.requests[0].body)).toMatch(/"(max_output_tokens|max_tokens|max_completion_tokens|maxOutputTokens)":3\b/);
  });

  it("R60: a 429 with a requested wait is one error event, retryable rate_limited with afterMs; one request (no retry below the loop)", async () => {
    server.script(wire.rateLimited(2), sseFrames(wire.text(["never sent"])));
    const { projected, final } = await play(wire);
    expect(projected).toEqual([["error", "error"]]);
    expect(final.retry).toEqual({ retryable: true, kind: "rate_limited", afterMs: 2000 });
    expect(final.errorMessage).toMatch(/429.*\(retry after 2000 ms\)$/);
    expect(final.contextOverflow).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it.each([500, 503] as const)("R60: a %i is a retryable server_error; one request", async (status) => {
    server.script(wire.serverError(status));
    const { projected, final } = await play(wire);
    expect(projected).toEqual([["error", "error"]]);
    expect(final.retry).toEqual({ retryable: true, kind: "server_error" });
    expect(final.errorMessage).toContain(String(status));
    expect(server.requests).toHaveLength(1);
  });

  it("R60: an overloaded model is a retryable overloaded failure; one request", async () => {
    server.script(wire.overloaded());
    const { projected, final } = await play(wire);
    expect(projected).toEqual([["error", "error"]]);
    expect(final.retry).toEqual({ retryable: true, kind: "overloaded" });
    expect(server.requests).toHaveLength(1);
  });

  it("R62: a context-too-long error is contextOverflow, not retryable", async () => {
    server.script(wire.contextTooLong());
    const { projected, final } = await play(wire);
    expect(projected).toEqual([["error", "error"]]);
    expect(final).toMatchObject({ stopReason: "error", contextOverflow: true, retry: { retryable: false } });
    expect(server.requests).toHaveLength(1);
  });

  it("a connection dropped mid-stream keeps the partial text; the failure is a connection error, not retryable once content arrived", async () => {
    server.script(resetAfter(wire.partialText("Half an ans")));
    const { projected, final } = await play(wire);
    expect(projected).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "Half an ans"], ["error", "error"]]);
    expect(final.content).toEqual([{ type: "text", text: "Half an ans" }]);
    expect(final.retry).toEqual({ retryable: false, kind: "connection" });
    expect(final.errorMessage).toMatch(/stream interrupted/);
  });

  it("abort while streaming settles at once as aborted, keeping the text received so far", async () => {
    server.script(stallAfter(wire.partialText("Partial")));
    const controller = new AbortController();
    let abortedAt = 0;
    const { projected, final } = await play(wire, { signal: controller.signal }, (event) => {
      if (event.type === "text_delta") {
        abortedAt = performance.now();
        controller.abort();
      }
    });
    expect(performance.now() - abortedAt).toBeLessThan(1000);
    expect(projected).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "Partial"], ["error", "aborted"]]);
    expect(final).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted", content: [{ type: "text", text: "Partial" }] });
    expect(final.retry).toBeUndefined();
  });

  it("R60: a stream that goes silent is abandoned after idleTimeoutMs as a stall: retryable before any content, not after", async () => {
    server.script(stallAfter([]), stallAfter(wire.partialText("Partial")));
    const silent = await play(wire, {}, undefined, 150);
    expect(silent.projected).toEqual([["error", "error"]]);
    expect(silent.final).toMatchObject({ errorMessage: "stream stalled: no data for 150 ms", retry: { retryable: true, kind: "stall" } });
    const cut = await play(wire, {}, undefined, 150);
    expect(cut.projected).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "Partial"], ["error", "error"]]);
    expect(cut.final.retry).toEqual({ retryable: false, kind: "stall" });
  });

  it("a pre-aborted signal is one aborted event and no request", async () => {
    const controller = new AbortController();
    controller.abort();
    const { projected } = await play(wire, { signal: controller.signal });
    expect(projected).toEqual([["error", "aborted"]]);
    expect(server.requests).toHaveLength(0);
  });

  it("an error body that echoes the key is redacted when the key is named in secrets", async () => {
    const message = `Incorrect API key provided: ${WIRE_API_KEY}`;
    server.script(
      jsonError(
        401,
        wire.name === "google"
          ? { error: { code: 401, message, status: "UNAUTHENTICATED" } }
          : { error: { message, type: "invalid_request_error", param: null, code: "invalid_api_key" } },
      ),
    );
    const streamFn = fromAiSdkModel(wire.model(server.url), { secrets: [WIRE_API_KEY] });
    const events = await collect(streamFn(streamFn.model, context(), {}));
    expect(JSON.stringify(events)).not.toContain(WIRE_API_KEY);
    const final = events.at(-1);
    expect(final?.type === "error" && final.error.errorMessage).toMatch(/401.*\[redacted\]/);
    expect(final?.type === "error" && final.error.retry).toEqual({ retryable: false });
  });
});
