/**
 * classifyFailure: what kind of failure a final assistant message is (R60 retries, R62 overflow),
 * from the stream function's own fields or, without them, from `errorMessage` as pi-compatible
 * stream functions word it — including our Anthropic provider's `describeError` strings, so the
 * text and the provider's fields never disagree.
 */
import { describe, expect, it } from "vitest";
import { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk";
import { classifyErrorText, classifyFailure, httpStatusFromText, isTransientFailureKind, retryAfterFromText } from "../../src/loop/classify-failure.js";
import { describeError } from "../../src/providers/anthropic/errors.js";
import { classifyAnthropicError, retryAfterMs } from "../../src/providers/anthropic/classify.js";
import type { AssistantMessage, StopReason } from "../../src/types.js";

const failed = (errorMessage: string | undefined, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [],
  api: "test",
  provider: "test",
  model: "test",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "error",
  ...(errorMessage !== undefined ? { errorMessage } : {}),
  timestamp: 1,
  ...extra,
});

const NO = { retry: { retryable: false }, contextOverflow: false };
const overflow = { retry: { retryable: false }, contextOverflow: true };
const transient = (kind: string, afterMs?: number) => ({
  retry: { retryable: true, kind, ...(afterMs !== undefined ? { afterMs } : {}) },
  contextOverflow: false,
});

describe("R60: only an error before content is retryable", () => {
  it.each<StopReason>(["stop", "length", "toolUse", "aborted"])("R60: stopReason %s is never retryable, whatever its text or fields", (stopReason) => {
    const message = failed("Anthropic API error 529 overloaded_error: Overloaded", {
      stopReason,
      retry: { retryable: true, kind: "overloaded" },
      contextOverflow: true,
    });

    expect(classifyFailure(message)).toEqual(NO);
  });

  it("R60: an aborted request with connection wording is not retryable", () => {
    expect(classifyFailure(failed("Request was aborted: socket hang up", { stopReason: "aborted" }))).toEqual(NO);
  });

  it("R60: a transient error after content is not retryable, its kind and overflow kept (from text)", () => {
    const message = failed("Anthropic stream error overloaded_error: Overloaded", { content: [{ type: "text", text: "Partial" }] });

    expect(classifyFailure(message)).toEqual({ retry: { retryable: false, kind: "overloaded" }, contextOverflow: false });
  });

  it("R60: ... and from the message's own fields, even if they say retryable (afterMs dropped)", () => {
    const message = failed("boom", {
      content: [{ type: "toolCall", id: "c1", name: "read", arguments: {} }],
      retry: { retryable: true, kind: "rate_limited", afterMs: 2000 },
    });

    expect(classifyFailure(message)).toEqual({ retry: { retryable: false, kind: "rate_limited" }, contextOverflow: false });
  });

  it("R60: an error with neither text nor fields is not retryable", () => {
    expect(classifyFailure(failed(undefined))).toEqual(NO);
    expect(classifyFailure(failed(""))).toEqual(NO);
  });
});

describe("R60: the stream function's own classification wins", () => {
  it("R60: retry fields are used as given, and an absent contextOverflow then means false", () => {
    const message = failed("prompt is too long", { retry: { retryable: true, kind: "server_error", afterMs: 250 } });

    expect(classifyFailure(message)).toEqual({ retry: { retryable: true, kind: "server_error", afterMs: 250 }, contextOverflow: false });
  });

  it("R62: contextOverflow alone → not retryable, overflow", () => {
    expect(classifyFailure(failed("Anthropic API error 529 overloaded_error: Overloaded", { contextOverflow: true }))).toEqual(overflow);
  });

  it("R60: retryable: false overrides retryable wording", () => {
    expect(classifyFailure(failed("HTTP 503 Service Unavailable", { retry: { retryable: false } }))).toEqual(NO);
  });

  it("R60: malformed fields are ignored: the text decides, bad afterMs or kind are dropped", () => {
    const garbage = { retryable: "yes" } as unknown as AssistantMessage["retry"];
    expect(classifyFailure(failed("Anthropic API error 529 overloaded_error: Overloaded", { retry: garbage }))).toEqual(transient("overloaded"));

    const partly = { retryable: true, afterMs: -5, kind: "meteor" } as unknown as AssistantMessage["retry"];
    expect(classifyFailure(failed("x", { retry: partly }))).toEqual({ retry: { retryable: true }, contextOverflow: false });

    const nonFinite = { retryable: true, afterMs: Number.POSITIVE_INFINITY } as AssistantMessage["retry"];
    expect(classifyFailure(failed("x", { retry: nonFinite }))).toEqual({ retry: { retryable: true }, contextOverflow: false });
  });

  it("R60: a malformed message never throws", () => {
    expect(classifyFailure(undefined as unknown as AssistantMessage)).toEqual(NO);
    expect(classifyFailure({ stopReason: "error", errorMessage: 42, content: null } as unknown as AssistantMessage)).toEqual(NO);
    const hostile = Object.defineProperty(failed("529 overloaded"), "errorMessage", {
      get() {
        throw new Error("trap");
      },
    });
    expect(classifyFailure(hostile)).toEqual(NO);
    const { proxy, revoke } = Proxy.revocable(failed("529 overloaded"), {});
    revoke();
    expect(classifyFailure(proxy)).toEqual(NO);
  });

  it("R60: the result is a fresh object each time (a caller may keep or change it)", () => {
    const a = classifyFailure(failed("nothing known"));
    a.retry.retryable = true;
    expect(classifyFailure(failed("nothing known"))).toEqual(NO);
  });
});

describe("R60: transient failures classified from errorMessage", () => {
  it.each([
    // overloaded
    ["Anthropic API error 529 overloaded_error: Overloaded (request-id: req_1)", "overloaded"],
    ["Anthropic stream error overloaded_error: Overloaded", "overloaded"],
    ["529 status code (no body)", "overloaded"],
    ["The model is overloaded. Please try again later.", "overloaded"],
    ["server_busy: servers are busy", "overloaded"],
    // rate limited
    ["429 Too Many Requests", "rate_limited"],
    ["Anthropic API error 429 rate_limit_error: Number of requests has exceeded your rate limit", "rate_limited"],
    ["Rate limit reached for requests", "rate_limited"],
    ["OpenAI API error (429): slow down", "rate_limited"],
    // server errors
    ["Anthropic API error 500 api_error: Internal server error", "server_error"],
    ["Request failed with status code 502", "server_error"],
    ["HTTP 503 Service Unavailable", "server_error"],
    ["HTTP/1.1 504 Gateway Timeout", "server_error"],
    ["Anthropic stream error api_error: Connection closed.", "server_error"],
    ["Bad Gateway", "server_error"],
    // stalls
    ["stream stalled: no data for 200 ms", "stall"],
    ["Stream idle timeout exceeded", "stall"],
    // connection
    ["Anthropic connection error: Connection error. (fetch failed: connect ECONNREFUSED 127.0.0.1:54321)", "connection"],
    ["read ECONNRESET", "connection"],
    ["socket hang up", "connection"],
    ["Anthropic stream interrupted: terminated (other side closed)", "connection"],
    ["TypeError: fetch failed", "connection"],
    ["Anthropic request timed out waiting for a response", "connection"],
    ["Request timeout", "connection"],
    ["getaddrinfo ENOTFOUND api.example.com", "connection"],
    ["Anthropic stream ended before message_stop (response truncated)", "connection"],
    ["Network error while reading the body", "connection"],
  ])("R60: %j → retryable, kind %s", (text, kind) => {
    expect(classifyFailure(failed(text))).toEqual(transient(kind));
  });

  it.each([
    "Anthropic API error 400 invalid_request_error: messages.0.content: text content blocks must be non-empty",
    "Anthropic API error 401 authentication_error: invalid x-api-key",
    "Anthropic API error 404 not_found_error: model: claude-nonexistent",
    "No API key for Anthropic: pass apiKey (or getApiKey) to the loop or to anthropicStreamFn, or set ANTHROPIC_API_KEY",
    "The model declined to respond (stop_reason: refusal)",
    "Scripted failure",
    // A number that is not a status: a token count, a port, a request id.
    "max_tokens: 500 > 400, which is the maximum allowed",
    "Invalid request to 127.0.0.1:500",
    "request-id: req_011CS5029abc",
    // Quota and billing: worded like rate limits, but waiting does not help.
    "429 You exceeded your current quota: insufficient_quota",
    "Rate limit: monthly usage limit reached",
    "Your credit balance is too low to access the Anthropic API",
  ])("R60: %j → not retryable", (text) => {
    expect(classifyFailure(failed(text))).toEqual(NO);
  });

  it("R60: a 529 whose text also says rate limit is an overload (the status is the first rule)", () => {
    expect(classifyErrorText("API error 529: overloaded, rate limits apply").retry.kind).toBe("overloaded");
  });
});

describe("R60: retry-after from the text", () => {
  it.each([
    ["Rate limited (retry after 2s)", 2000],
    ["Rate limited, retry after 2 seconds.", 2000],
    ["429 Too Many Requests; retry-after: 3", 3000],
    ["429 Too Many Requests; Retry-After=1.5", 1500],
    ["Anthropic API error 429 rate_limit_error: slow (request-id: r) (retry after 2000 ms)", 2000],
    ["rate limit, retry-after-ms: 10", 10],
    ["rate limit, retry after 250 milliseconds", 250],
  ])("R60: %j → afterMs %i", (text, afterMs) => {
    expect(retryAfterFromText(text)).toBe(afterMs);
    expect(classifyFailure(failed(text)).retry).toEqual({ retryable: true, kind: "rate_limited", afterMs });
  });

  it.each(["rate limit, please retry after the window resets", "rate limit, retry after 2 minutes", "rate limit, retry after2x"])(
    "R60: %j states no unambiguous delay → no afterMs",
    (text) => {
      expect(retryAfterFromText(text)).toBeUndefined();
      expect(classifyFailure(failed(text)).retry).toEqual({ retryable: true, kind: "rate_limited" });
    },
  );

  it("R60: a retry-after hint on a non-retryable failure is ignored", () => {
    expect(classifyFailure(failed("Anthropic API error 401 authentication_error: bad key (retry after 2 s)"))).toEqual(NO);
  });
});

describe("R62: context overflow classified from errorMessage", () => {
  it.each([
    "Anthropic API error 400 invalid_request_error: prompt is too long: 213456 tokens > 200000 maximum (request-id: req_1)",
    "Anthropic API error 413 request_too_large: Request exceeds the maximum allowed number of bytes.",
    "413 status code (no body)",
    "HTTP 413 Payload Too Large",
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    "context_length_exceeded",
    "Error: context length exceeded",
    "Input is too long for requested model.",
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "Your input exceeds the context window of this model",
    "Prompt too long",
  ])("R62: %j → contextOverflow, not retryable", (text) => {
    expect(classifyFailure(failed(text))).toEqual(overflow);
  });

  it.each([
    ["a token-count rate limit", "429 rate_limit_error: too many input tokens per minute, exceeds maximum context length budget", "rate_limited"],
    ["a number 413 that is not a status", "Anthropic API error 500 api_error: failed after 413 attempts", "server_error"],
  ])("R62: %s is not an overflow", (_, text, kind) => {
    expect(classifyFailure(failed(text))).toEqual(transient(kind));
  });
});

describe("R60/R62: our Anthropic provider's describeError strings agree with its own classification", () => {
  const headers = (entries: Record<string, string> = {}) => new Headers({ "request-id": "req_abc123", ...entries });
  const body = (type: string, message: string) => ({ type: "error", error: { type, message } });

  const cases: [string, unknown, "request" | "stream"][] = [
    ["529 overloaded_error", APIError.generate(529, body("overloaded_error", "Overloaded"), undefined, headers()), "request"],
    ["429 with retry-after", APIError.generate(429, body("rate_limit_error", "Number of requests has exceeded your rate limit"), undefined, headers({ "retry-after": "2" })), "request"],
    ["429 with retry-after-ms", APIError.generate(429, body("rate_limit_error", "slow down"), undefined, headers({ "retry-after-ms": "750" })), "request"],
    ["500 api_error", APIError.generate(500, body("api_error", "Internal server error"), undefined, headers()), "request"],
    ["502 api_error", APIError.generate(502, body("api_error", "Bad gateway"), undefined, headers()), "request"],
    ["503 api_error", APIError.generate(503, body("api_error", "Service unavailable"), undefined, headers()), "request"],
    ["504 timeout_error", APIError.generate(504, body("timeout_error", "Request timed out"), undefined, headers()), "request"],
    ["400 prompt is too long", APIError.generate(400, body("invalid_request_error", "prompt is too long: 213456 tokens > 200000 maximum"), undefined, headers()), "request"],
    ["413 request_too_large", APIError.generate(413, body("request_too_large", "Request exceeds the maximum allowed number of bytes."), undefined, headers()), "request"],
    ["400 invalid request", APIError.generate(400, body("invalid_request_error", "max_tokens: 500 > 400"), undefined, headers()), "request"],
    ["401", APIError.generate(401, body("authentication_error", "invalid x-api-key"), undefined, headers()), "request"],
    ["403", APIError.generate(403, body("permission_error", "no access"), undefined, headers()), "request"],
    ["SSE overloaded_error", new APIError(undefined, body("overloaded_error", "Overloaded"), undefined, headers(), "overloaded_error"), "stream"],
    ["SSE api_error", new APIError(undefined, body("api_error", "Connection closed."), undefined, headers(), "api_error"), "stream"],
    ["SSE rate_limit_error", new APIError(undefined, body("rate_limit_error", "slow"), undefined, headers(), "rate_limit_error"), "stream"],
    ["connection refused", new APIConnectionError({ cause: Object.assign(new TypeError("fetch failed"), { cause: new Error("connect ECONNREFUSED 127.0.0.1:1") }) }), "request"],
    ["connection timeout", new APIConnectionTimeoutError(), "request"],
    ["socket closed mid-body", Object.assign(new Error("terminated"), { cause: new Error("other side closed") }), "stream"],
  ];

  it.each(cases)("R60: %s — classifyFailure(describeError text) equals the provider's fields", (_, error, phase) => {
    const fields = classifyAnthropicError(error, phase);
    const text = describeError(error, phase);
    const own = failed(text, { retry: fields.retry, ...(fields.contextOverflow ? { contextOverflow: true } : {}) });

    expect(classifyFailure(failed(text))).toEqual(classifyFailure(own));
  });

  it("R60: the provider's kinds for each (the table above is not vacuous)", () => {
    const kinds = cases.map(([name, error, phase]) => {
      const { retry, contextOverflow } = classifyAnthropicError(error, phase);
      return [name, retry.retryable, retry.kind ?? null, retry.afterMs ?? null, contextOverflow ?? false];
    });
    expect(kinds).toEqual([
      ["529 overloaded_error", true, "overloaded", null, false],
      ["429 with retry-after", true, "rate_limited", 2000, false],
      ["429 with retry-after-ms", true, "rate_limited", 750, false],
      ["500 api_error", true, "server_error", null, false],
      ["502 api_error", true, "server_error", null, false],
      ["503 api_error", true, "server_error", null, false],
      ["504 timeout_error", true, "server_error", null, false],
      ["400 prompt is too long", false, null, null, true],
      ["413 request_too_large", false, null, null, true],
      ["400 invalid request", false, null, null, false],
      ["401", false, null, null, false],
      ["403", false, null, null, false],
      ["SSE overloaded_error", true, "overloaded", null, false],
      ["SSE api_error", true, "server_error", null, false],
      ["SSE rate_limit_error", true, "rate_limited", null, false],
      ["connection refused", true, "connection", null, false],
      ["connection timeout", true, "connection", null, false],
      ["socket closed mid-body", true, "connection", null, false],
    ]);
  });

  it("R60: a non-SDK error before the request (bad input) is not retryable", () => {
    expect(classifyAnthropicError(new TypeError("Cannot read properties of undefined"), "request")).toEqual({ retry: { retryable: false } });
  });

  it("R60: retry-after as an HTTP date is the time until it (on the given clock), never negative", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), () => now)).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), () => now)).toBe(0);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }), () => now)).toBeUndefined();
    expect(retryAfterMs(new Headers({ "retry-after-ms": "-3", "retry-after": "1" }), () => now)).toBe(1000);
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe("R60: kinds", () => {
  it("R60: isTransientFailureKind accepts exactly the five kinds", () => {
    expect(["overloaded", "rate_limited", "server_error", "connection", "stall", "unknown", 3, undefined].map(isTransientFailureKind)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});

describe("the HTTP status an error text names (the telemetry's error.type for a failure no kind names)", () => {
  it("reads a status as error texts write it, and no bare number elsewhere", () => {
    const texts = ["Anthropic API error 401 authentication_error: invalid x-api-key", "HTTP 403 forbidden", "404 Not Found", "prompt of 200000 tokens on port 8080", "no status here"];
    expect(texts.map(httpStatusFromText)).toEqual([401, 403, 404, undefined, undefined]);
  });
});
