/**
 * How a provider adapter classifies a failed response (SPEC R60, R62) and closes it: shared by the
 * Anthropic and AI SDK adapters, whose wire errors differ but whose rules for the loop do not.
 */
import type { AssistantMessage } from "../types.js";
import type { RetryClassification, TransientFailureKind } from "../types.js";

export interface ProviderFailure {
  retry: RetryClassification;
  /** Only ever `true`: absent means the prompt fit. */
  contextOverflow?: true;
}

export const notRetryable = (): ProviderFailure => ({ retry: { retryable: false } });
export const transient = (kind: TransientFailureKind, afterMs?: number): ProviderFailure => ({
  retry: { retryable: true, kind, ...(afterMs !== undefined ? { afterMs } : {}) },
});

/**
 * Marks `output` as ended with `reason`. An error after content is never retryable: the caller
 * has seen that content (R60), so only the failure's kind is kept.
 */
export function settleFailed(output: AssistantMessage, reason: "error" | "aborted", errorMessage: string, failure: ProviderFailure, startedAt: number, now: number): void {
  output.stopReason = reason;
  output.errorMessage = errorMessage;
  if (reason === "error") {
    const { kind } = failure.retry;
    output.retry = output.content.length > 0 ? { retryable: false, ...(kind ? { kind } : {}) } : failure.retry;
    if (failure.contextOverflow) output.contextOverflow = true;
  }
  output.durationMs = now - startedAt;
}
