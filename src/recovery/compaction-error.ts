/** The typed failure of a compactor (SPEC R62): the loop surfaces it instead of a broken transcript. */
import type { AssistantMessage } from "../types.js";

/**
 * Why compaction failed:
 * - `model_error`: the summary request ended with `stopReason: "error"` (see `response`);
 * - `aborted`: the run's signal fired, or the summary request ended `aborted`;
 * - `empty_summary`: the model answered without any text;
 * - `request_failed`: `complete` rejected or resolved something that is not an assistant message;
 * - `convert_failed`: the compactor's `convertToLlm` threw;
 * - `window_too_small`: the chunk size leaves no room for conversation (set `chunkTokens`, or the model's `contextWindow`);
 * - `invalid_result`: the loop refused a compactor's result: an empty transcript, or one that keeps
 *   a tool result without its call (any compactor's, not only the built-in one's).
 */
export type CompactionFailure = "model_error" | "aborted" | "empty_summary" | "request_failed" | "convert_failed" | "window_too_small" | "invalid_result";

export class CompactionError extends Error {
  override name = "CompactionError";
  readonly kind: CompactionFailure;
  /** The summary request's final message, when the model answered with a failure. */
  readonly response: AssistantMessage | undefined;
  constructor(kind: CompactionFailure, message: string, options: { cause?: unknown; response?: AssistantMessage } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.response = options.response;
  }
}
