/**
 * R60/R62 through the real SDK against the local SSE server: the final error message says what
 * kind of failure it was (`retry`, `contextOverflow`), and a request's `maxRetries: 0` (what the loop
 * passes when it retries itself) means the server sees exactly one request.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { anthropicModel, anthropicStreamFn, type AnthropicStreamFnOptions } from "../../src/providers/anthropic/index.js";
import { classifyFailure } from "../../src/loop/classify-failure.js";
import type { AssistantMessage, AssistantMessageEvent, StreamOptions } from "../../src/types.js";
import {
  errorBody,
  hangUp,
  json,
  messageStart,
  midStreamError,
  reset,
  sse,
  stall,
  startSseServer,
  textResponse,
  type SseServer,
} from "../support/sse-server.js";
import { API_KEY, collectChecked, contextOf, FIXTURE_MODEL_ID, project } from "./helpers.js";

let server: SseServer;
beforeAll(async () => {
  server = await startSseServer();
});
afterEach(() => server.clear());
afterAll(() => server.close());

const model = anthropicModel(FIXTURE_MODEL_ID);
/** The factory keeps the SDK's default of 2 retries: only the request's option turns them off. */
const run = (options: StreamOptions = { maxRetries: 0 }, factory: AnthropicStreamFnOptions = {}) =>
  collectChecked(anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY, ...factory })(model, contextOf(), options));

function finalMessage(events: AssistantMessageEvent[]): AssistantMessage {
  const last = events.at(-1);
  if (last?.type !== "error") throw new Error(`expected an error event, got ${JSON.stringify(events.map(project))}`);
  return last.error;
}

/** What the loop reads, and proof that the text alone (pi's way) says the same. */
function classification(message: AssistantMessage) {
  const { retry: _retry, contextOverflow: _overflow, ...textOnly } = message;
  const fromText = classifyFailure(textOnly);
  const fromFields = classifyFailure(message);
  expect(fromText, `errorMessage "${message.errorMessage}" classifies differently from the fields`).toEqual(fromFields);
  return { retry: message.retry, contextOverflow: message.contextOverflow };
}

describe("R60: HTTP failures before the response are classified and not retried by the SDK with maxRetries 0", () => {
  it("R60: 529 overloaded_error → retryable, kind overloaded; one request", async () => {
    server.script(json(529, errorBody("overloaded_error", "Overloaded")), sse(textResponse("never sent")));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: true, kind: "overloaded" }, contextOverflow: undefined });
  });

  it("R60: 429 with retry-after: 2 → retryable, kind rate_limited, afterMs 2000, the wait also in the text; one request", async () => {
    server.script(json(429, errorBody("rate_limit_error", "Number of requests has exceeded your rate limit"), { "retry-after": "2" }));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    const message = finalMessage(events);
    expect(message.errorMessage).toBe(
      "Anthropic API error 429 rate_limit_error: Number of requests has exceeded your rate limit (request-id: req_test_1) (retry after 2000 ms)",
    );
    expect(classification(message)).toEqual({ retry: { retryable: true, kind: "rate_limited", afterMs: 2000 }, contextOverflow: undefined });
  });

  it("R60: retry-after-ms wins over retry-after, as in the SDK", async () => {
    server.script(json(429, errorBody("rate_limit_error", "slow down"), { "retry-after": "2", "retry-after-ms": "1500" }));

    const message = finalMessage(await run());

    expect(classification(message).retry).toEqual({ retryable: true, kind: "rate_limited", afterMs: 1500 });
  });

  it.each([
    [500, "api_error", "Internal server error"],
    [502, "api_error", "Bad gateway"],
    [503, "api_error", "Service unavailable"],
  ])("R60: %i %s → retryable, kind server_error; one request", async (status, type, text) => {
    server.script(json(status, errorBody(type, text)));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: true, kind: "server_error" }, contextOverflow: undefined });
  });

  it("R60: x-should-retry: false makes a 500 not retryable (the server's word, as the SDK obeys it)", async () => {
    server.script(json(500, errorBody("api_error", "Internal server error"), { "x-should-retry": "false" }));

    const message = finalMessage(await run());

    expect(server.requests).toHaveLength(1);
    expect(message.retry).toEqual({ retryable: false });
  });

  it("R60: a 400 that is not an overflow is neither retryable nor an overflow", async () => {
    server.script(json(400, errorBody("invalid_request_error", "messages.0.content: text content blocks must be non-empty")));

    const message = finalMessage(await run());

    expect(classification(message)).toEqual({ retry: { retryable: false }, contextOverflow: undefined });
  });

  it("R60: 401 is not retryable", async () => {
    server.script(json(401, errorBody("authentication_error", "invalid x-api-key")));

    expect(classification(finalMessage(await run()))).toEqual({ retry: { retryable: false }, contextOverflow: undefined });
  });
});

describe("R62: context overflow", () => {
  it("R62: 400 prompt is too long → contextOverflow, not retryable; one request", async () => {
    server.script(json(400, errorBody("invalid_request_error", "prompt is too long: 213456 tokens > 200000 maximum")));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: false }, contextOverflow: true });
  });

  it("R62: 413 request_too_large → contextOverflow, not retryable; one request", async () => {
    server.script(json(413, errorBody("request_too_large", "Request exceeds the maximum allowed number of bytes.")));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: false }, contextOverflow: true });
  });
});

describe("R60: failures inside a 200 stream", () => {
  it("R60: an SSE overloaded_error before any content (after message_start) → retryable, kind overloaded", async () => {
    server.script(midStreamError("overloaded_error", "Overloaded", [messageStart()]));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["start"], ["error", "error"]]);
    const message = finalMessage(events);
    expect(message.content).toEqual([]);
    expect(classification(message)).toEqual({ retry: { retryable: true, kind: "overloaded" }, contextOverflow: undefined });
  });

  it("R60: the same error after content → not retryable (the caller has seen the text), kind kept", async () => {
    server.script(midStreamError("overloaded_error", "Overloaded"));

    const events = await run();

    expect(events.map(project)).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "Partial"], ["error", "error"]]);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: false, kind: "overloaded" }, contextOverflow: undefined });
  });

  it.each([
    ["api_error", "server_error"],
    ["rate_limit_error", "rate_limited"],
  ] as const)("R60: an SSE %s before content → retryable, kind %s", async (type, kind) => {
    server.script(midStreamError(type, "try later", [messageStart()]));

    expect(classification(finalMessage(await run()))).toEqual({ retry: { retryable: true, kind }, contextOverflow: undefined });
  });

  it("R60: a connection reset before content → retryable, kind connection", async () => {
    server.script(reset([messageStart()]));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["start"], ["error", "error"]]);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: true, kind: "connection" }, contextOverflow: undefined });
  });

  it("R60: a connection reset after content → not retryable", async () => {
    server.script(reset());

    expect(classification(finalMessage(await run()))).toEqual({ retry: { retryable: false, kind: "connection" }, contextOverflow: undefined });
  });

  it("R60: a stall past idleTimeoutMs before content → retryable, kind stall", async () => {
    server.script(stall());

    const message = finalMessage(await run({ maxRetries: 0 }, { idleTimeoutMs: 50 }));

    expect(message.errorMessage).toBe("stream stalled: no data for 50 ms");
    expect(classification(message)).toEqual({ retry: { retryable: true, kind: "stall" }, contextOverflow: undefined });
  });
});

describe("R60: connection failures before the headers", () => {
  it("R60: a socket hung up before the headers → retryable, kind connection; one request with maxRetries 0", async () => {
    server.script(hangUp(), hangUp(), hangUp());

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: true, kind: "connection" }, contextOverflow: undefined });
  });

  it("R60: a refused connection → retryable, kind connection", async () => {
    const closed = await startSseServer();
    await closed.close();

    const events = await collectChecked(anthropicStreamFn({ baseURL: closed.url, apiKey: API_KEY })(model, contextOf(), { maxRetries: 0 }));

    expect(finalMessage(events).errorMessage).toMatch(/ECONNREFUSED/);
    expect(classification(finalMessage(events))).toEqual({ retry: { retryable: true, kind: "connection" }, contextOverflow: undefined });
  });
});

describe("R60: the per-request maxRetries stream option", () => {
  it("R60: without it the factory's retries apply (default 2: three requests for three 529s)", async () => {
    const overloaded = () => json(529, errorBody("overloaded_error", "Overloaded"), { "retry-after-ms": "1" });
    server.script(overloaded(), overloaded(), overloaded());

    const events = await run({});

    expect(server.requests).toHaveLength(3);
    expect(finalMessage(events).retry).toEqual({ retryable: true, kind: "overloaded", afterMs: 1 });
  });

  it("R60: the request's maxRetries wins over the factory's (1 over 0: a 529 then the answer)", async () => {
    server.script(json(529, errorBody("overloaded_error", "Overloaded"), { "retry-after-ms": "1" }), sse(textResponse("ok")));

    const events = await run({ maxRetries: 1 }, { maxRetries: 0 });

    expect(server.requests).toHaveLength(2);
    expect(events.map(project).at(-1)).toEqual(["done", "stop"]);
  });

  it("R60: an invalid maxRetries is an error naming it, and no request is sent", async () => {
    const message = finalMessage(await run({ maxRetries: -1 }));

    expect(server.requests).toHaveLength(0);
    expect(message.errorMessage).toBe("Invalid maxRetries: expected a non-negative integer, got -1");
    expect(message.retry).toEqual({ retryable: false });
  });
});
