/**
 * `CompactRequest.complete` from a stream function (SPEC R62): one request, its events drained
 * and dropped (no message events, nothing in the transcript), its final message returned. As the
 * StreamFn contract asks of providers, it never rejects: a stream function that throws anyway
 * yields an error message.
 */
import type { AssistantMessage, CompactRequest, Message, Model, StreamFn, StreamOptions } from "../types.js";
import { emptyUsage } from "../loop/usage.js";
import { errorText } from "../loop/tool-results.js";

/**
 * `options` are the run's stream options with the resolved `apiKey` and the run's `signal` (what
 * the loop passes for a turn's request); `complete`'s `maxTokens` overrides theirs.
 */
export function streamCompletion(streamFn: StreamFn, model: Model, options: StreamOptions): CompactRequest["complete"] {
  return async (messages: Message[], request: { maxTokens?: number } = {}) => {
    try {
      const stream = await streamFn(model, { messages }, request.maxTokens === undefined ? options : { ...options, maxTokens: request.maxTokens });
      for await (const event of stream) {
        if (event.type === "done") return event.message;
        if (event.type === "error") return event.error;
      }
      // A stream that ends without a terminal event settles through result(), as in the loop (R41).
      return await stream.result();
    } catch (error) {
      return failure(model, error);
    }
  };
}

function failure(model: Model, error: unknown): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "error",
    errorMessage: errorText(error),
    timestamp: Date.now(),
  };
}
