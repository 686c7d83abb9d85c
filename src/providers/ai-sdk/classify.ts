/**
 * SPEC R60/R62 for AI SDK models: what kind of failure an error from `doStream` (or a stream
 * `error` part) is, read from the AI SDK's own error objects. Duck-typed, because the adapter never
 * loads `@ai-sdk/provider` at run time (an `instanceof` would need its classes, and a second copy of
 * the package would defeat it anyway).
 */
import { classifyErrorText } from "../../loop/classify-failure.js";
import { retryAfterFromHeaders } from "../retry-after.js";
import { notRetryable, transient, type ProviderFailure } from "../failure.js";
import type { TransientFailureKind } from "../../types.js";

export { notRetryable, transient };
export type AiSdkFailure = ProviderFailure;

/** The fields of the AI SDK's `APICallError` this module reads. */
export interface ApiCallErrorLike {
  name: string;
  message: string;
  statusCode?: number;
  isRetryable: boolean;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  cause?: unknown;
}

/** `APICallError` (`AI_APICallError`): an HTTP error, or a request that never got a response. */
export function isApiCallError(error: unknown): error is ApiCallErrorLike {
  if (!(error instanceof Error)) return false;
  const candidate = error as Error & Partial<ApiCallErrorLike>;
  return error.name === "AI_APICallError" && typeof candidate.isRetryable === "boolean";
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (name in headers) return headers[name];
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** Account limits worded like rate limits (OpenAI's `insufficient_quota`); waiting does not help. */
const QUOTA = /insufficient_quota|exceeded your current quota|quota exceeded|billing|credit balance/i;

function kindOfStatus(status: number, text: string): TransientFailureKind | undefined {
  if (status === 529 || /overloaded|at capacity|server_busy/i.test(text)) return "overloaded";
  if (status === 429) return "rate_limited";
  if (status === 408 || status === 409) return "server_error";
  if (status >= 500 && status <= 599) return "server_error";
  return undefined;
}

/**
 * The wait a response asked for: `retry-after-ms` / `retry-after` headers, else a google.rpc
 * `RetryInfo` detail in the body (`"retryDelay": "2s"`), which is how the Gemini API says it.
 */
export function requestedDelayMs(error: ApiCallErrorLike): number | undefined {
  const fromHeaders = retryAfterFromHeaders((name) => header(error.responseHeaders, name));
  if (fromHeaders !== undefined) return fromHeaders;
  const match = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(error.responseBody ?? "");
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

/** The text of an error body's message, for the overflow and quota patterns (and `errorMessage`). */
export function errorText(error: ApiCallErrorLike): string {
  return [error.message, error.responseBody ?? ""].join(" ");
}

/**
 * Classifies an error `doStream` threw or a stream `error` part carried.
 * - `APICallError` with a status: 413 and "context length exceeded"-type bodies are an overflow;
 *   `x-should-retry: false` and quota errors are final; 429, 408/409, 5xx and 529 (or an "overloaded"
 *   body) are transient, with the wait from `retry-after-ms`/`retry-after`.
 * - `APICallError` without a status (the request never got a response): transient connection
 *   failure when the AI SDK calls it retryable.
 * - Anything else (an `error` part's payload, a socket closed while the body streamed): classified
 *   from its text; while the body streams, an unrecognised failure counts as a dropped connection.
 */
export function classifyAiSdkError(error: unknown, phase: "request" | "stream"): AiSdkFailure {
  if (isApiCallError(error)) {
    const text = errorText(error);
    const byText = classifyErrorText(text);
    if (error.statusCode === 413 || byText.contextOverflow) return { retry: { retryable: false }, contextOverflow: true };
    if (header(error.responseHeaders, "x-should-retry") === "false") return notRetryable();
    if (error.statusCode === undefined) return error.isRetryable ? transient("connection") : notRetryable();
    // A 2xx whose body broke while it streamed (a dropped connection): "Failed to process successful response".
    if (error.statusCode >= 200 && error.statusCode < 300) return transient("connection");
    // Quota and billing errors come as 429s but waiting does not help.
    if (error.statusCode === 429 && QUOTA.test(text)) return notRetryable();
    const kind = kindOfStatus(error.statusCode, text);
    return kind ? transient(kind, requestedDelayMs(error)) : notRetryable();
  }
  const text = describeUnknown(error);
  const byText = classifyErrorText(text);
  if (byText.contextOverflow) return { retry: { retryable: false }, contextOverflow: true };
  if (byText.retry.retryable) return { retry: byText.retry };
  if (phase === "stream" && error instanceof Error && error.name !== "AbortError") return transient("connection");
  return notRetryable();
}

/** A readable one-liner for any thrown value or error payload (an `error` part carries raw JSON). */
export function describeUnknown(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * `errorMessage` for a failure: the provider, the HTTP status, the API's message and the wait the
 * server asked for, in the wording `classifyErrorText` reads back (so a log line alone says it all).
 */
export function describeAiSdkError(error: unknown, provider: string, phase: "request" | "stream"): string {
  if (isApiCallError(error)) {
    const after = requestedDelayMs(error);
    const retryAfter = after !== undefined ? ` (retry after ${after} ms)` : "";
    if (error.statusCode === undefined) return `${provider} connection error: ${describeUnknown(error)}`;
    if (error.statusCode >= 200 && error.statusCode < 300) return `${provider} stream interrupted: ${describeUnknown(error)}`;
    return `${provider} API error ${error.statusCode}: ${error.message}${retryAfter}`;
  }
  const head = phase === "stream" ? `${provider} stream error` : `${provider} request failed`;
  return `${head}: ${describeUnknown(error)}`;
}
