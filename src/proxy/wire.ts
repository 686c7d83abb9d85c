/**
 * The stream proxy's wire protocol, as pi-agent-core 1.6's `streamProxy` speaks it (learned by
 * running it against a recording server; see test/proxy/):
 *
 * - request: `POST <proxyUrl>/api/stream`, `Authorization: Bearer <authToken>`,
 *   `Content-Type: application/json`, body `{ model, context, options }` where `options` holds
 *   only the serializable stream options of `PROXY_OPTION_KEYS` (never `apiKey` or `signal`);
 * - response: `200` and server-sent events, one `data: <json>` per `ProxyAssistantMessageEvent`
 *   (an `AssistantMessageEvent` without the repeated `partial`; the client rebuilds it);
 * - failure before streaming: a non-2xx status with a JSON body `{ "error": "<message>" }`.
 */
import type { AssistantMessageEvent, LoopStreamOptions, StopReason, ToolCall, Usage } from "../types.js";
import { redactCredentials } from "../boundary/secret-keys.js";

/** The path the client posts to, under `proxyUrl`. */
export const PROXY_STREAM_PATH = "/api/stream";

export type ProxyAssistantMessageEvent =
  | { type: "start" }
  | { type: "text_start"; contentIndex: number }
  | { type: "text_delta"; contentIndex: number; delta: string }
  | { type: "text_end"; contentIndex: number; contentSignature?: string }
  | { type: "thinking_start"; contentIndex: number }
  | { type: "thinking_delta"; contentIndex: number; delta: string }
  | { type: "thinking_end"; contentIndex: number; contentSignature?: string }
  | { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
  | { type: "toolcall_delta"; contentIndex: number; delta: string }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall }
  /** `deferred` is not in the reference's wire (its type has no such reason); it crosses as sent, without the provider's handle. */
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse" | "deferred">; usage: Usage }
  | { type: "error"; reason: Extract<StopReason, "error" | "aborted">; errorMessage?: string; usage: Usage };

/** Stream options that cross the wire (JSON values); everything else stays on the client. */
export const PROXY_OPTION_KEYS = [
  "temperature",
  "samplingParams",
  "maxTokens",
  "reasoning",
  "cacheRetention",
  "sessionId",
  "disableContinuation",
  "headers",
  "metadata",
  "transport",
  "thinkingBudgets",
  "maxRetryDelayMs",
] as const;

export type ProxyOptionKey = (typeof PROXY_OPTION_KEYS)[number];

/** The stream options that cross the wire. */
export type ProxyStreamOptionFields = Pick<LoopStreamOptions, ProxyOptionKey>;

/** The options of `PROXY_OPTION_KEYS` that are set, and nothing else (no key, no signal). */
export function pickProxyOptions(options: ProxyStreamOptionFields): ProxyStreamOptionFields {
  const picked: Record<string, unknown> = {};
  for (const key of PROXY_OPTION_KEYS) if (options[key] !== undefined) picked[key] = options[key];
  return picked as ProxyStreamOptionFields;
}

/** One provider event as the server sends it: the `partial` message is left out (bandwidth). */
export function toProxyEvent(event: AssistantMessageEvent): ProxyAssistantMessageEvent {
  switch (event.type) {
    case "start":
      return { type: "start" };
    case "text_start":
    case "thinking_start":
      return { type: event.type, contentIndex: event.contentIndex };
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return { type: event.type, contentIndex: event.contentIndex, delta: event.delta };
    case "text_end":
    case "thinking_end": {
      const block = event.partial.content[event.contentIndex];
      const signature = block?.type === "text" ? block.textSignature : block?.type === "thinking" ? block.thinkingSignature : undefined;
      return { type: event.type, contentIndex: event.contentIndex, ...(signature !== undefined ? { contentSignature: signature } : {}) };
    }
    case "toolcall_start": {
      const block = event.partial.content[event.contentIndex];
      const call = block?.type === "toolCall" ? block : undefined;
      return { type: "toolcall_start", contentIndex: event.contentIndex, id: call?.id ?? "", toolName: call?.name ?? "" };
    }
    case "toolcall_end":
      return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall: event.toolCall };
    case "done":
      return { type: "done", reason: event.reason, usage: event.message.usage };
    case "error":
      return {
        type: "error",
        reason: event.reason,
        usage: event.error.usage,
        // (A provider's text may quote what it was sent: the client gets nothing shaped like a key.)
        ...(event.error.errorMessage !== undefined ? { errorMessage: redactCredentials(event.error.errorMessage) } : {}),
      };
  }
}
