/**
 * SPEC R60/R62 for the Anthropic provider: what kind of failure an SDK error is, from what the API
 * and the transport say (HTTP status, the error body's or SSE `error` event's type, `retry-after`
 * headers, connection errors), for the final message's `retry` and `contextOverflow`.
 */
import { APIConnectionError, APIError } from "@anthropic-ai/sdk";
import { retryAfterFromHeaders } from "../retry-after.js";
import { notRetryable, transient, type ProviderFailure } from "../failure.js";
import type { TransientFailureKind } from "../../types.js";

export { notRetryable, transient };
export type AnthropicFailure = ProviderFailure;

/** The API's error types that say "try again" (SSE `error` events carry a type, no status). */
const TRANSIENT_TYPES: Readonly<Record<string, TransientFailureKind>> = {
  overloaded_error: "overloaded",
  rate_limit_error: "rate_limited",
  api_error: "server_error",
  timeout_error: "server_error",
};

function kindOfStatus(status: number): TransientFailureKind | undefined {
  if (status === 529) return "overloaded";
  if (status === 429) return "rate_limited";
  if (status >= 500 && status <= 599) return "server_error";
  return undefined;
}

/**
 * The delay the response asked for: `retry-after-ms` (ms), else `retry-after` (seconds or an HTTP
 * date), as the SDK reads them. Undefined when absent, unparseable or negative.
 */
export function retryAfterMs(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  return retryAfterFromHeaders((name) => headers?.get(name), now);
}

/** "prompt is too long: 210000 tokens > 200000 maximum" is how the API words a 400 overflow. */
const PROMPT_TOO_LONG = /prompt is too long/i;

/**
 * Classifies an error the SDK threw: an HTTP error (after the SDK's own retries), a mid-stream SSE
 * `error` event (an `APIError` without status), a connection failure (refused, reset, timed out),
 * or, while the body streams, a closed socket (`terminated`).
 */
export function classifyAnthropicError(error: unknown, phase: "request" | "stream"): AnthropicFailure {
  // Connection errors (refused, reset, DNS) and the SDK's timeout waiting for the headers.
  if (error instanceof APIConnectionError) return transient("connection");
  if (error instanceof APIError) {
    const message = error.apiMessage ?? error.message;
    // `request_too_large` (the 413's type) is missing from the SDK's ErrorType union.
    const type: string | null = error.type;
    if (error.status === 413 || type === "request_too_large" || (type === "invalid_request_error" && PROMPT_TOO_LONG.test(message))) {
      return { retry: { retryable: false }, contextOverflow: true };
    }
    // The server's explicit word wins, as in the SDK's own retry policy.
    if (error.headers?.get("x-should-retry") === "false") return notRetryable();
    const kind = (type ? TRANSIENT_TYPES[type] : undefined) ?? (error.status !== undefined ? kindOfStatus(error.status) : undefined);
    return kind ? transient(kind, retryAfterMs(error.headers)) : notRetryable();
  }
  // A socket closed while the body streams (undici's `terminated`, `other side closed`).
  if (phase === "stream" && error instanceof Error) return transient("connection");
  return notRetryable();
}
