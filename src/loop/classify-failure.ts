/**
 * What kind of failure a final assistant message is (SPEC R60, R62): whether another attempt may
 * succeed (and after how long), and whether the prompt overflowed the context window. Pure; the
 * loop asks it of every `stopReason: "error"` response.
 *
 * A message that carries `retry` or `contextOverflow` was classified by its stream function (the
 * Anthropic provider and the scripted model do this); the other field's absence then means "no".
 * A message carrying neither is classified from its `errorMessage`, with the wording providers and
 * pi-compatible stream functions use, so any stream function gets retries and compaction.
 */
import type { AssistantMessage, RetryClassification, TransientFailureKind } from "../types.js";

export interface FailureClassification {
  retry: RetryClassification;
  contextOverflow: boolean;
}

const notRetryable = (): FailureClassification => ({ retry: { retryable: false }, contextOverflow: false });

const KINDS: ReadonlySet<string> = new Set<TransientFailureKind>(["overloaded", "rate_limited", "server_error", "connection", "stall"]);

export function isTransientFailureKind(value: unknown): value is TransientFailureKind {
  return typeof value === "string" && KINDS.has(value);
}

/**
 * Only `stopReason: "error"` may be retried (an abort never is), and only while the response has no
 * content: R60 retries a failure before the first content event, never one after it, whatever the
 * message's own `retry` says (its `kind` is kept, for logs).
 */
export function classifyFailure(message: AssistantMessage): FailureClassification {
  try {
    return classify(message);
  } catch {
    // A hostile message (a throwing getter, a revoked Proxy) is a failure nobody should retry.
    return notRetryable();
  }
}

function classify(message: AssistantMessage): FailureClassification {
  if (message?.stopReason !== "error") return notRetryable();
  const classified = ownClassification(message) ?? classifyErrorText(typeof message.errorMessage === "string" ? message.errorMessage : "");
  const hasContent = Array.isArray(message.content) && message.content.length > 0;
  if (!hasContent || !classified.retry.retryable) return classified;
  return { ...classified, retry: { retryable: false, ...(classified.retry.kind ? { kind: classified.retry.kind } : {}) } };
}

/** The stream function's own fields, if it set any well-formed one; malformed fields count as absent. */
function ownClassification(message: AssistantMessage): FailureClassification | undefined {
  const retry = wellFormedRetry(message.retry);
  const overflow = typeof message.contextOverflow === "boolean" ? message.contextOverflow : undefined;
  if (retry === undefined && overflow === undefined) return undefined;
  return { retry: retry ?? { retryable: false }, contextOverflow: overflow ?? false };
}

function wellFormedRetry(value: unknown): RetryClassification | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { retryable, afterMs, kind } = value as Record<string, unknown>;
  if (typeof retryable !== "boolean") return undefined;
  return {
    retryable,
    ...(isDelay(afterMs) ? { afterMs } : {}),
    ...(isTransientFailureKind(kind) ? { kind } : {}),
  };
}

const isDelay = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

// ---------------------------------------------------------------------------------------------
// Classification from the error text
// ---------------------------------------------------------------------------------------------

/**
 * An HTTP status as error texts write it: "API error 529", "status code 503", "HTTP 502",
 * "error (413)", or the text's first word ("429 Too Many Requests"). A bare number elsewhere (a
 * token count, a port) is not a status.
 */
const STATUS = /(?:^|\b(?:error|status|code|http(?:\/[\d.]+)?)\s*[:=]?\s*\(?)\s*(\d{3})(?!\w)/gi;

function statuses(text: string): number[] {
  return [...text.matchAll(STATUS)].map((match) => Number(match[1]));
}

/** The first HTTP status an error text names ("Anthropic API error 401 …" → 401), if any. */
export function httpStatusFromText(text: string): number | undefined {
  return statuses(text)[0];
}

/** The prompt did not fit (Anthropic, OpenAI, Bedrock, Gemini, OpenRouter and compatible servers). */
const OVERFLOW = [
  /prompt is too long/i,
  /prompt too long/i,
  /request_too_large/i,
  /input is too long/i,
  /context[_ ]length[_ ]exceeded/i,
  /maximum context length/i,
  /exceeds the context window/i,
  /context window exceeded/i,
  /model_context_window_exceeded/i,
  /input token count.*exceeds the maximum/i,
];

/** Account limits worded like rate limits; waiting seconds does not help. */
const QUOTA = [/insufficient_quota/i, /quota exceeded/i, /billing/i, /credit balance/i, /usage limit/i];

/** Transient failures, the first matching kind wins (a 529's text also says "overloaded"). */
const TRANSIENT: readonly (readonly [TransientFailureKind, (text: string, codes: number[]) => boolean])[] = [
  ["overloaded", (text, codes) => codes.includes(529) || /overloaded|server_busy|at capacity/i.test(text)],
  ["rate_limited", (text, codes) => codes.includes(429) || /rate.?limit|too many requests/i.test(text)],
  [
    "server_error",
    (text, codes) =>
      codes.some((code) => code >= 500 && code <= 599) ||
      /\bapi_error\b|internal server error|internal error|server error|service unavailable|bad gateway|gateway time-?out/i.test(text),
  ],
  ["stall", (text) => /\bstall(?:ed)?\b|idle timeout|no data for \d/i.test(text)],
  [
    "connection",
    (text) =>
      /\b(?:ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|UND_ERR_SOCKET)\b/.test(text) ||
      /socket hang up|\bterminated\b|fetch failed|other side closed|connection (?:error|refused|reset|closed|lost)|network error|timed out|\btimeout\b|stream ended before|response truncated/i.test(
        text,
      ),
  ],
];

/**
 * A retry delay the text states unambiguously: "retry after 2s", "retry-after: 2" (seconds, as the
 * header), "retry after 1500 ms", "retry-after-ms: 10". A number followed by another word ("retry
 * after 2 minutes") is not read.
 */
const RETRY_AFTER = /retry[- ]after(-ms)?\s*[:=]?\s*(\d+(?:\.\d+)?)(?:\s*(ms|milliseconds?|s|secs?|seconds?)(?!\w)|(?!\w)(?!\.\d)(?!\s*[a-z]))/i;

export function retryAfterFromText(text: string): number | undefined {
  const match = RETRY_AFTER.exec(text);
  if (!match) return undefined;
  const value = Number(match[2]);
  const inMs = match[1] !== undefined || /^m/i.test(match[3] ?? "");
  const ms = inMs ? value : value * 1000;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Classifies a failure from its `errorMessage` alone. */
export function classifyErrorText(text: string): FailureClassification {
  const codes = statuses(text);
  if (codes.includes(413) || OVERFLOW.some((pattern) => pattern.test(text))) {
    // A rate limit that counts tokens ("too many tokens per minute") is not an overflow.
    if (!codes.includes(429) && !/rate.?limit/i.test(text)) return { retry: { retryable: false }, contextOverflow: true };
  }
  if (QUOTA.some((pattern) => pattern.test(text))) return notRetryable();
  const found = TRANSIENT.find(([, matches]) => matches(text, codes));
  if (!found) return notRetryable();
  const afterMs = retryAfterFromText(text);
  return { retry: { retryable: true, kind: found[0], ...(afterMs !== undefined ? { afterMs } : {}) }, contextOverflow: false };
}
