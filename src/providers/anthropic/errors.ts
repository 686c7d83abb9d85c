import { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk";
import { retryAfterMs } from "./classify.js";

/** Replaces every occurrence of `secret` in `text`, so a key can never leak into a message. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join("[redacted]");
}

function causeChain(error: unknown): string[] {
  const messages: string[] = [];
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && cause !== null && depth < 4; depth++) {
    const message = cause instanceof Error ? cause.message : String(cause);
    if (message && !messages.includes(message)) messages.push(message);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return messages;
}

function withCauses(message: string, error: unknown): string {
  const causes = causeChain(error).filter((cause) => cause !== message);
  return causes.length > 0 ? `${message} (${causes.join(": ")})` : message;
}

/**
 * A one-line description of a failure for `errorMessage`: HTTP status, error type, the API's
 * message and the request id when known. (The turn passes every message through `redact` before it
 * reaches a caller, in case an error body echoes the key.)
 */
export function describeError(error: unknown, phase: "request" | "stream" = "request"): string {
  if (error instanceof APIConnectionTimeoutError) return "Anthropic request timed out waiting for a response";
  if (error instanceof APIConnectionError) return withCauses(`Anthropic connection error: ${error.message}`, error);
  if (error instanceof APIError) {
    const type = error.type ?? "unknown_error";
    const detail = error.apiMessage ?? error.message;
    const requestId = error.requestID ? ` (request-id: ${error.requestID})` : "";
    // The server's wait in the text too, so a reader of `errorMessage` alone (pi's classifiers,
    // a log) sees it: classifyFailure parses "retry after N ms".
    const after = retryAfterMs(error.headers);
    const retryAfter = after !== undefined ? ` (retry after ${after} ms)` : "";
    // A mid-stream SSE `error` event has no HTTP status: the response itself was a 200.
    const head = error.status === undefined ? "Anthropic stream error" : `Anthropic API error ${error.status}`;
    return `${head} ${type}: ${detail}${requestId}${retryAfter}`;
  }
  // While the body streams, a closed socket surfaces as AnthropicError("terminated") (undici cause).
  const head = phase === "stream" ? "Anthropic stream interrupted" : "Anthropic request failed";
  if (error instanceof Error) return withCauses(`${head}: ${error.message}`, error);
  return `${head}: ${String(error)}`;
}
