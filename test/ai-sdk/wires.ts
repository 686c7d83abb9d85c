/**
 * Three provider wires for the AI SDK adapter's tests, each with the same scenario vocabulary, in
 * the shapes the real APIs send (OpenAI's streaming events and error bodies, Gemini's
 * `streamGenerateContent?alt=sse` chunks and google.rpc error bodies):
 * - `openai-responses`: `@ai-sdk/openai`'s `openai.responses(id)` (POST /v1/responses)
 * - `openai-chat`: `@ai-sdk/openai`'s `openai.chat(id)` (POST /v1/chat/completions)
 * - `google`: `@ai-sdk/google` (POST /v1beta/models/{id}:streamGenerateContent?alt=sse)
 */
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { jsonError, type Frame, type WireResponse } from "../support/wire-server.js";

/** A recognisable fake key: tests assert it never appears in events, messages or traces. */
export const WIRE_API_KEY = "sk-wire-test-SECRET-0123456789";

export interface Usage {
  input: number;
  output: number;
  cached?: number;
}

export interface CallSpec {
  id: string;
  name: string;
  /** The argument text as the wire splits it (Gemini sends it whole: joined). */
  chunks: string[];
}

export interface Wire {
  name: "openai-responses" | "openai-chat" | "google";
  modelId: string;
  /** The path every request of this wire goes to. */
  path: RegExp;
  model(baseUrl: string): LanguageModelV4;
  text(chunks: string[], usage?: Usage): Frame[];
  /** Reasoning then text; undefined where the wire streams no reasoning (OpenAI Chat Completions). */
  reasoning?(thinking: string[], text: string[], usage?: Usage): Frame[];
  toolCalls(calls: CallSpec[], usage?: Usage, leadingText?: string): Frame[];
  /** A reply cut by the output limit (finish reason length / MAX_TOKENS). */
  truncatedByLength(text: string, usage?: Usage): Frame[];
  /** The first frames of a text reply, for a connection dropped mid-stream. */
  partialText(text: string): Frame[];
  rateLimited(retryAfterSeconds: number): WireResponse;
  serverError(status: 500 | 503): WireResponse;
  overloaded(): WireResponse;
  contextTooLong(): WireResponse;
  /** Whether tool arguments arrive in several deltas on this wire (Gemini's API sends whole calls). */
  argumentDeltas: boolean;
}

const DEFAULT_USAGE: Usage = { input: 10, output: 5 };

// ---------------------------------------------------------------------------------------------
// OpenAI (shared error bodies)
// ---------------------------------------------------------------------------------------------

const openaiError = (message: string, type: string, code: string | null, param: string | null = null) => ({
  error: { message, type, param, code },
});

const openaiErrors = {
  rateLimited: (seconds: number) =>
    jsonError(429, openaiError("Rate limit reached for requests per min (RPM). Please try again in 1s.", "requests", "rate_limit_exceeded"), {
      "retry-after": String(seconds),
      "x-request-id": "req_wire_1",
    }),
  serverError: (status: 500 | 503) =>
    jsonError(
      status,
      status === 500
        ? openaiError("The server had an error while processing your request. Sorry about that!", "server_error", null)
        : openaiError("Service Unavailable: the service is temporarily unable to handle the request.", "server_error", null),
    ),
  overloaded: () => jsonError(503, openaiError("The engine is currently overloaded, please try again later.", "server_error", "engine_overloaded")),
  contextTooLong: () =>
    jsonError(
      400,
      openaiError(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
        "messages",
      ),
    ),
};

// ---------------------------------------------------------------------------------------------
// OpenAI Responses API
// ---------------------------------------------------------------------------------------------

function responsesFrames(): { frames: Frame[]; seq: () => number } {
  let n = 0;
  return { frames: [], seq: () => n++ };
}

const responseObject = (extra: Record<string, unknown> = {}) => ({
  id: "resp_wire_1",
  object: "response",
  created_at: 1_760_000_000,
  status: "in_progress",
  model: "gpt-5-mini-2025-08-07",
  output: [],
  usage: null,
  ...extra,
});

function responsesUsage(usage: Usage) {
  return {
    input_tokens: usage.input + (usage.cached ?? 0),
    input_tokens_details: { cached_tokens: usage.cached ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + (usage.cached ?? 0) + usage.output,
  };
}

type ResponsesItem =
  | { kind: "reasoning"; id: string; summary: string[] }
  | { kind: "message"; id: string; text: string[] }
  | { kind: "call"; id: string; callId: string; name: string; chunks: string[] };

function responsesStream(items: ResponsesItem[], options: { usage?: Usage; incomplete?: boolean; end?: boolean } = {}): Frame[] {
  const { frames, seq } = responsesFrames();
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, sequence_number: seq(), ...data } });
  push("response.created", { response: responseObject() });
  push("response.in_progress", { response: responseObject() });
  items.forEach((item, output_index) => {
    switch (item.kind) {
      case "reasoning":
        push("response.output_item.added", { output_index, item: { id: item.id, type: "reasoning", summary: [], encrypted_content: "enc_wire_1" } });
        push("response.reasoning_summary_part.added", { item_id: item.id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } });
        for (const delta of item.summary) push("response.reasoning_summary_text.delta", { item_id: item.id, output_index, summary_index: 0, delta });
        push("response.reasoning_summary_text.done", { item_id: item.id, output_index, summary_index: 0, text: item.summary.join("") });
        push("response.reasoning_summary_part.done", { item_id: item.id, output_index, summary_index: 0, part: { type: "summary_text", text: item.summary.join("") } });
        push("response.output_item.done", {
          output_index,
          item: { id: item.id, type: "reasoning", summary: [{ type: "summary_text", text: item.summary.join("") }], encrypted_content: "enc_wire_1" },
        });
        return;
      case "message":
        push("response.output_item.added", { output_index, item: { id: item.id, type: "message", status: "in_progress", content: [], role: "assistant" } });
        push("response.content_part.added", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", annotations: [], text: "" } });
        for (const delta of item.text) push("response.output_text.delta", { item_id: item.id, output_index, content_index: 0, delta, logprobs: [] });
        push("response.output_text.done", { item_id: item.id, output_index, content_index: 0, text: item.text.join(""), logprobs: [] });
        push("response.content_part.done", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", annotations: [], text: item.text.join("") } });
        push("response.output_item.done", {
          output_index,
          item: { id: item.id, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], text: item.text.join("") }] },
        });
        return;
      case "call":
        push("response.output_item.added", {
          output_index,
          item: { id: item.id, type: "function_call", status: "in_progress", arguments: "", call_id: item.callId, name: item.name },
        });
        for (const delta of item.chunks) push("response.function_call_arguments.delta", { item_id: item.id, output_index, delta });
        push("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.chunks.join("") });
        push("response.output_item.done", {
          output_index,
          item: { id: item.id, type: "function_call", status: "completed", arguments: item.chunks.join(""), call_id: item.callId, name: item.name },
        });
        return;
    }
  });
  if (options.end === false) return frames;
  const usage = responsesUsage(options.usage ?? DEFAULT_USAGE);
  if (options.incomplete) {
    push("response.incomplete", { response: responseObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage }) });
  } else {
    push("response.completed", { response: responseObject({ status: "completed", incomplete_details: null, usage }) });
  }
  return frames;
}

export const openaiResponsesWire: Wire = {
  name: "openai-responses",
  modelId: "gpt-5-mini",
  path: /^\/v1\/responses$/,
  argumentDeltas: true,
  model: (baseUrl) => createOpenAI({ baseURL: `${baseUrl}/v1`, apiKey: WIRE_API_KEY }).responses("gpt-5-mini"),
  text: (chunks, usage) => responsesStream([{ kind: "message", id: "msg_wire_1", text: chunks }], { usage }),
  reasoning: (thinking, text, usage) =>
    responsesStream(
      [
        { kind: "reasoning", id: "rs_wire_1", summary: thinking },
        { kind: "message", id: "msg_wire_1", text },
      ],
      { usage },
    ),
  toolCalls: (calls, usage, leadingText) =>
    responsesStream(
      [
        ...(leadingText ? [{ kind: "message" as const, id: "msg_wire_1", text: [leadingText] }] : []),
        ...calls.map((call, i) => ({ kind: "call" as const, id: `fc_wire_${i + 1}`, callId: call.id, name: call.name, chunks: call.chunks })),
      ],
      { usage },
    ),
  truncatedByLength: (text, usage) => responsesStream([{ kind: "message", id: "msg_wire_1", text: [text] }], { usage, incomplete: true }),
  partialText: (text) => responsesStream([{ kind: "message", id: "msg_wire_1", text: [text] }], { end: false }).slice(0, -3),
  ...openaiErrors,
};

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions
// ---------------------------------------------------------------------------------------------

function chatChunk(delta: Record<string, unknown>, finish: string | null = null): Frame {
  return {
    data: {
      id: "chatcmpl-wire1",
      object: "chat.completion.chunk",
      created: 1_760_000_000,
      model: "gpt-4o-mini-2024-07-18",
      system_fingerprint: "fp_wire",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    },
  };
}

function chatUsage(usage: Usage): Frame {
  return {
    data: {
      id: "chatcmpl-wire1",
      object: "chat.completion.chunk",
      created: 1_760_000_000,
      model: "gpt-4o-mini-2024-07-18",
      choices: [],
      usage: {
        prompt_tokens: usage.input + (usage.cached ?? 0),
        completion_tokens: usage.output,
        total_tokens: usage.input + (usage.cached ?? 0) + usage.output,
        prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
    },
  };
}

const chatDone: Frame = { data: "[DONE]" };

export const openaiChatWire: Wire = {
  name: "openai-chat",
  modelId: "gpt-4o-mini",
  path: /^\/v1\/chat\/completions$/,
  argumentDeltas: true,
  model: (baseUrl) => createOpenAI({ baseURL: `${baseUrl}/v1`, apiKey: WIRE_API_KEY }).chat("gpt-4o-mini"),
  text: (chunks, usage = DEFAULT_USAGE) => [
    chatChunk({ role: "assistant", content: "", refusal: null }),
    ...chunks.map((content) => chatChunk({ content })),
    chatChunk({}, "stop"),
    chatUsage(usage),
    chatDone,
  ],
  toolCalls: (calls, usage = DEFAULT_USAGE, leadingText) => [
    chatChunk({ role: "assistant", content: leadingText ?? null, refusal: null }),
    ...calls.flatMap((call, index) => [
      chatChunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
      ...call.chunks.map((args) => chatChunk({ tool_calls: [{ index, function: { arguments: args } }] })),
    ]),
    chatChunk({}, "tool_calls"),
    chatUsage(usage),
    chatDone,
  ],
  truncatedByLength: (text, usage = DEFAULT_USAGE) => [
    chatChunk({ role: "assistant", content: "", refusal: null }),
    chatChunk({ content: text }),
    chatChunk({}, "length"),
    chatUsage(usage),
    chatDone,
  ],
  partialText: (text) => [chatChunk({ role: "assistant", content: "", refusal: null }), chatChunk({ content: text })],
  ...openaiErrors,
};

// ---------------------------------------------------------------------------------------------
// Google Gemini API
// ---------------------------------------------------------------------------------------------

type GeminiPart = { text: string; thought?: boolean; thoughtSignature?: string } | { functionCall: { name: string; args: unknown }; thoughtSignature?: string };

function geminiChunk(parts: GeminiPart[], finish?: string, usage?: Usage): Frame {
  return {
    data: {
      candidates: [{ content: { parts, role: "model" }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
      ...(usage
        ? {
            usageMetadata: {
              promptTokenCount: usage.input + (usage.cached ?? 0),
              candidatesTokenCount: usage.output,
              totalTokenCount: usage.input + (usage.cached ?? 0) + usage.output,
              ...(usage.cached ? { cachedContentTokenCount: usage.cached } : {}),
            },
          }
        : {}),
      modelVersion: "gemini-2.5-flash",
      responseId: "resp_wire_g1",
    },
  };
}

/** Deterministic ids for the calls Gemini sends without one (the AI SDK generates them). */
function sequentialIds(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}

const googleError = (code: number, status: string, message: string, details?: unknown[]) => ({
  error: { code, message, status, ...(details ? { details } : {}) },
});

export const googleWire: Wire = {
  name: "google",
  modelId: "gemini-2.5-flash",
  path: /^\/v1beta\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/,
  argumentDeltas: false,
  model: (baseUrl) => createGoogleGenerativeAI({ baseURL: `${baseUrl}/v1beta`, apiKey: WIRE_API_KEY, generateId: sequentialIds("gcall_") })("gemini-2.5-flash"),
  text: (chunks, usage = DEFAULT_USAGE) =>
    chunks.map((text, i) => geminiChunk([{ text }], i === chunks.length - 1 ? "STOP" : undefined, i === chunks.length - 1 ? usage : undefined)),
  reasoning: (thinking, text, usage = DEFAULT_USAGE) => [
    ...thinking.map((t) => geminiChunk([{ text: t, thought: true }])),
    ...text.map((t, i) =>
      geminiChunk(
        [{ text: t, ...(i === 0 ? { thoughtSignature: "sig_wire_g1" } : {}) }],
        i === text.length - 1 ? "STOP" : undefined,
        i === text.length - 1 ? usage : undefined,
      ),
    ),
  ],
  toolCalls: (calls, usage = DEFAULT_USAGE, leadingText) => [
    ...(leadingText ? [geminiChunk([{ text: leadingText }])] : []),
    // The Gemini API sends each call whole, parallel calls as parts of one chunk.
    geminiChunk(
      calls.map((call) => ({ functionCall: { name: call.name, args: JSON.parse(call.chunks.join("")) as unknown } })),
      "STOP",
      usage,
    ),
  ],
  truncatedByLength: (text, usage = DEFAULT_USAGE) => [geminiChunk([{ text }], "MAX_TOKENS", usage)],
  partialText: (text) => [geminiChunk([{ text }])],
  rateLimited: (seconds) =>
    jsonError(
      429,
      googleError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", [
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${seconds}s` },
      ]),
    ),
  serverError: (status) =>
    jsonError(
      status,
      status === 500
        ? googleError(500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")
        : googleError(503, "UNAVAILABLE", "The service is currently unavailable."),
    ),
  overloaded: () => jsonError(503, googleError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")),
  contextTooLong: () =>
    jsonError(400, googleError(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).")),
};

export const WIRES: readonly Wire[] = [openaiResponsesWire, openaiChatWire, googleWire];
