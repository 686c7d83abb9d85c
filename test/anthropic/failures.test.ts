import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { anthropicModel, anthropicStreamFn, type AnthropicStreamFnOptions } from "../../src/providers/anthropic/index.js";
import type { AssistantMessageEvent, StreamOptions } from "../../src/types.js";
import {
  errorBody,
  json,
  midStreamError,
  reset,
  sse,
  stall,
  startSseServer,
  textResponse,
  truncated,
  type SseServer,
} from "../support/sse-server.js";
import { ANTHROPIC_FIELDS, API_KEY, collectChecked, contextOf, finalOf, FIXTURE_MODEL_ID, haikuUsage, project } from "./helpers.js";

let server: SseServer;
beforeAll(async () => {
  server = await startSseServer();
});
afterEach(() => {
  server.clear();
  vi.unstubAllEnvs();
});
afterAll(() => server.close());

const model = anthropicModel(FIXTURE_MODEL_ID);
const streamFn = (factory: AnthropicStreamFnOptions = {}) => anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY, ...factory });
const run = (factory: AnthropicStreamFnOptions = {}, options: StreamOptions = {}) =>
  collectChecked(streamFn(factory)(model, contextOf(), options));

/** The start of a reply the fixtures cut off: message_start plus one text delta "Partial". */
const PARTIAL_EVENTS = [["start"], ["text_start", 0], ["text_delta", 0, "Partial"]];
const PARTIAL_CONTENT = [{ type: "text", text: "Partial" }];

describe("failures: HTTP errors", () => {
  it("retries a 429 (retry-after: 0) inside the SDK and reports only the successful response", async () => {
    server.script(
      json(429, errorBody("rate_limit_error", "Number of requests has exceeded your rate limit"), {
        "retry-after": "0",
        "retry-after-ms": "10",
      }),
      sse(textResponse("ok")),
    );

    const events = await run();

    expect(server.requests).toHaveLength(2);
    expect(events.map(project)).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "ok"], ["text_end", 0, "ok"], ["done", "stop"]]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [{ type: "text", text: "ok" }],
      usage: haikuUsage(10, 5),
      stopReason: "stop",
    });
  });

  it("reports a 529 with maxRetries 0 as an error with status, overloaded_error and request id, without a start event", async () => {
    server.script(json(529, errorBody("overloaded_error", "Overloaded")));

    const events = await run({ maxRetries: 0 });

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [],
      usage: haikuUsage(0, 0),
      stopReason: "error",
      errorMessage: "Anthropic API error 529 overloaded_error: Overloaded (request-id: req_test_1)",
      retry: { retryable: true, kind: "overloaded" },
    });
  });

  it("does not retry a 400 and reports status, error type, the API's message and request id", async () => {
    server.script(json(400, errorBody("invalid_request_error", "messages.0.content: text content blocks must be non-empty")));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(finalOf(events).errorMessage).toBe(
      "Anthropic API error 400 invalid_request_error: messages.0.content: text content blocks must be non-empty (request-id: req_test_1)",
    );
  });

  it("redacts the key if an error body echoes it", async () => {
    server.script(json(401, errorBody("authentication_error", `invalid x-api-key: ${API_KEY}`)));

    const events = await run();

    expect(finalOf(events).errorMessage).toBe(
      "Anthropic API error 401 authentication_error: invalid x-api-key: [redacted] (request-id: req_test_1)",
    );
  });

  it("reports an unreachable server as a connection error after the SDK's retries", async () => {
    const closed = await startSseServer();
    const url = closed.url;
    await closed.close();

    const events = await collectChecked(anthropicStreamFn({ baseURL: url, apiKey: API_KEY, maxRetries: 0 })(model, contextOf(), {}));

    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(finalOf(events).errorMessage).toMatch(/^Anthropic connection error: Connection error\. \(fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  });
});

describe("failures: broken streams keep the partial content", () => {
  it("reports a mid-stream SSE error event (status undefined, type overloaded_error) without retrying", async () => {
    server.script(midStreamError("overloaded_error", "Overloaded"));

    const events = await run();

    expect(server.requests).toHaveLength(1);
    expect(events.map(project)).toEqual([...PARTIAL_EVENTS, ["error", "error"]]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: PARTIAL_CONTENT,
      usage: haikuUsage(10, 1),
      stopReason: "error",
      errorMessage: "Anthropic stream error overloaded_error: Overloaded (request-id: req_test_1)",
      retry: { retryable: false, kind: "overloaded" }, // after content (R60)
    });
  });

  it("reports a stream that ends cleanly before message_stop as truncated", async () => {
    server.script(truncated());

    const events = await run();

    expect(events.map(project)).toEqual([...PARTIAL_EVENTS, ["error", "error"]]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: PARTIAL_CONTENT,
      usage: haikuUsage(10, 1),
      stopReason: "error",
      errorMessage: "Anthropic stream ended before message_stop (response truncated)",
      retry: { retryable: false, kind: "connection" }, // after content (R60)
    });
  });

  it("reports a socket reset mid-stream as an interrupted stream", async () => {
    server.script(reset());

    const events = await run();

    expect(events.map(project)).toEqual([...PARTIAL_EVENTS, ["error", "error"]]);
    const final = finalOf(events);
    expect(final.content).toEqual(PARTIAL_CONTENT);
    expect(final.errorMessage).toBe("Anthropic stream interrupted: terminated (other side closed)");
  });

  it("keeps a tool call cut off mid-arguments, with an argumentsError for the incomplete JSON", async () => {
    const { messageStart, toolUseBlock } = await import("../support/sse-server.js");
    const [start, empty, ...chunks] = toolUseBlock(0, "toolu_cut", "read", ['{"path": "src', '/a.ts"}']).slice(0, -1);
    server.script(truncated([messageStart(), start, empty, chunks[0]]));

    const events = await run();

    expect(events.map(project)).toEqual([["start"], ["toolcall_start", 0], ["toolcall_delta", 0, '{"path": "src'], ["error", "error"]]);
    expect(finalOf(events).content).toEqual([
      {
        type: "toolCall",
        id: "toolu_cut",
        name: "read",
        arguments: {},
        argumentsError: expect.stringMatching(/^Tool arguments are not valid JSON .*Raw arguments: \{"path": "src$/),
      },
    ]);
  });
});

describe("failures: stall watchdog", () => {
  it("abandons a stream that sends nothing for idleTimeoutMs and reports it as stalled", async () => {
    server.script(stall());
    const started = performance.now();

    const events = await run({ idleTimeoutMs: 200 });

    const elapsed = performance.now() - started;
    expect(events.map(project)).toEqual([["start"], ["error", "error"]]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [],
      usage: haikuUsage(10, 1),
      stopReason: "error",
      errorMessage: "stream stalled: no data for 200 ms",
      retry: { retryable: true, kind: "stall" }, // message_start is not content (R60)
    });
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1000);
  });

  it("does not fire while events keep arriving more often than idleTimeoutMs", async () => {
    // Gaps of 10 ms against a 1 s timeout: on a loaded machine (CI's two cores, a suite in
    // parallel) a 10 ms timer has run hundreds of ms late, which a 250 ms timeout mistook for a stall.
    const words = Array.from({ length: 30 }, (_, i) => `word${i} `);
    server.script(sse(textResponse(words), { chunkDelayMs: 10 }));
    const started = performance.now();

    const events = await run({ idleTimeoutMs: 1000 });

    expect(performance.now() - started).toBeGreaterThan(1000); // the whole stream outlasts the timeout
    expect(events.map(project).at(-1)).toEqual(["done", "stop"]);
  });
});

describe("failures: abort", () => {
  it("answers a pre-aborted signal with a single aborted error event and sends no request", async () => {
    const controller = new AbortController();
    controller.abort();

    const events = await run({}, { signal: controller.signal });

    expect(server.requests).toHaveLength(0);
    expect(events.map(project)).toEqual([["error", "aborted"]]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [],
      usage: haikuUsage(0, 0),
      stopReason: "aborted",
      errorMessage: "Request was aborted",
    });
  });

  it("settles as aborted within 100 ms of abort() while streaming, keeping the text received so far", async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => `word${i} `);
    server.script(sse(textResponse(chunks), { chunkDelayMs: 15 }));
    const controller = new AbortController();
    const stream = streamFn()(model, contextOf(), { signal: controller.signal });

    const events: AssistantMessageEvent[] = [];
    let abortedAt = 0;
    let settledAt = 0;
    for await (const event of stream) {
      events.push(event);
      if (event.type === "text_delta" && abortedAt === 0) {
        abortedAt = performance.now();
        controller.abort();
      }
      if (event.type === "error" || event.type === "done") settledAt = performance.now();
    }

    expect(settledAt - abortedAt).toBeLessThan(100);
    expect(events.map(project)).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "word0 "], ["error", "aborted"]]);
    expect(finalOf(events)).toMatchObject({ content: [{ type: "text", text: "word0 " }], stopReason: "aborted", errorMessage: "Request was aborted" });
    expect(await stream.result()).toBe((events.at(-1) as Extract<AssistantMessageEvent, { type: "error" }>).error);
  });

  it("settles as aborted when the signal fires while a stalled stream is waiting", async () => {
    server.script(stall());
    const controller = new AbortController();
    const stream = streamFn({ idleTimeoutMs: 10_000 })(model, contextOf(), { signal: controller.signal });

    const events: AssistantMessageEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === "start") controller.abort();
    }

    expect(events.map(project)).toEqual([["start"], ["error", "aborted"]]);
  });
});

describe("failures: setup", () => {
  it("reports a missing API key as an error without throwing or sending a request", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    const fn = anthropicStreamFn({ baseURL: server.url });

    const events = await collectChecked(fn(model, contextOf(), {}));

    expect(server.requests).toHaveLength(0);
    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(finalOf(events).errorMessage).toBe(
      "No API key for Anthropic: pass apiKey (or getApiKey) to the loop or to anthropicStreamFn, or set ANTHROPIC_API_KEY",
    );
  });

  it("reports a throwing getApiKey as an error", async () => {
    const fn = anthropicStreamFn({ baseURL: server.url, getApiKey: () => Promise.reject(new Error("vault unavailable")) });

    const events = await collectChecked(fn(model, contextOf(), {}));

    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(finalOf(events).errorMessage).toBe("Could not resolve the Anthropic API key: vault unavailable");
  });

  it("never throws for malformed input: it reports an error instead", async () => {
    const fn = streamFn();
    const malformed = { messages: undefined } as unknown as Parameters<typeof fn>[1];

    const events = await collectChecked(fn(model, malformed));

    expect(events.map(project)).toEqual([["error", "error"]]);
    expect(finalOf(events).errorMessage).toMatch(/^Anthropic request failed: /);
  });
});
