/**
 * SPEC R60, R62: what kind of failure a final assistant message is. (Interim: the full
 * classification from `errorMessage` lands with the provider work.)
 */
import type { AssistantMessage, RetryClassification } from "../types.js";

export function classifyFailure(message: AssistantMessage): { retry: RetryClassification; contextOverflow: boolean } {
  if (message.stopReason !== "error") return { retry: { retryable: false }, contextOverflow: false };
  const text = message.errorMessage ?? "";
  const contextOverflow = message.contextOverflow ?? /prompt is too long|\b413\b|context.length|context window/i.test(text);
  if (message.retry) return { retry: message.retry, contextOverflow };
  if (/overloaded|\b529\b/i.test(text)) return { retry: { retryable: true, kind: "overloaded" }, contextOverflow };
  if (/\b429\b|rate.limit/i.test(text)) return { retry: { retryable: true, kind: "rate_limited" }, contextOverflow };
  if (/\b50[023]\b|api_error/i.test(text)) return { retry: { retryable: true, kind: "server_error" }, contextOverflow };
  if (/ECONNRESET|ECONNREFUSED|connection|socket hang up/i.test(text)) return { retry: { retryable: true, kind: "connection" }, contextOverflow };
  return { retry: { retryable: false }, contextOverflow };
}
