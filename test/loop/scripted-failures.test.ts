/**
 * The scripted model scripts each failure kind (SPEC R60, R62): a final error message with a
 * provider's wording, `retry` and `contextOverflow`, before any content (a lone `error` event) or
 * after some (`afterContent`), and the text agrees with the fields.
 */
import { describe, expect, it } from "vitest";
import { scriptedModel, scriptedStreamFn, text, toolCall, type ScriptedFailureKind, type ScriptedResponse } from "../../src/providers/scripted.js";
import { classifyFailure } from "../../src/loop/classify-failure.js";
import type { AssistantMessage, AssistantMessageEvent } from "../../src/types.js";

async function play(response: ScriptedResponse, signal?: AbortSignal): Promise<{ events: string[]; final: AssistantMessage }> {
  // StreamFn may return a promise; the scripted model's is synchronous, awaiting is harmless.
  const stream = await scriptedStreamFn([response])(scriptedModel, { messages: [] }, signal ? { signal } : {});
  const seen: AssistantMessageEvent[] = [];
  for await (const event of stream) seen.push(event);
  const last = seen.at(-1);
  const final = last?.type === "error" ? last.error : last?.type === "done" ? last.message : undefined;
  if (!final) throw new Error("no terminal event");
  expect(await stream.result()).toEqual(final);
  return { events: seen.map((event) => event.type), final };
}

const fieldsOf = ({ stopReason, errorMessage, retry, contextOverflow, content }: AssistantMessage) => ({
  stopReason,
  errorMessage,
  retry,
  contextOverflow,
  content,
});

/** The loop's reading of the message equals its reading of the text alone (pi's way). */
function expectTextAgrees(message: AssistantMessage): void {
  const { retry: _r, contextOverflow: _c, ...textOnly } = message;
  expect(classifyFailure(textOnly)).toEqual(classifyFailure(message));
}

describe("R60: scripted transient failures before content", () => {
  it.each<[ScriptedFailureKind, string]>([
    ["overloaded", "Scripted model: HTTP 529 overloaded_error: Overloaded"],
    ["rate_limited", "Scripted model: HTTP 429 rate_limit_error: Number of requests has exceeded your rate limit"],
    ["server_error", "Scripted model: HTTP 500 api_error: Internal server error"],
    ["connection", "Scripted model: connection error: read ECONNRESET"],
    ["stall", "Scripted model: stream stalled: no data for 60000 ms"],
  ])("R60: failure %s → a lone error event, retryable with its kind", async (failure, errorMessage) => {
    const { events, final } = await play({ failure, content: [text("never played")] });

    expect(events).toEqual(["error"]);
    expect(fieldsOf(final)).toEqual({ stopReason: "error", errorMessage, retry: { retryable: true, kind: failure }, contextOverflow: undefined, content: [] });
    expectTextAgrees(final);
  });

  it("R60: retryAfterMs → retry.afterMs, and the wait is in the text", async () => {
    const { final } = await play({ failure: "rate_limited", retryAfterMs: 2000 });

    expect(final.retry).toEqual({ retryable: true, kind: "rate_limited", afterMs: 2000 });
    expect(final.errorMessage).toBe("Scripted model: HTTP 429 rate_limit_error: Number of requests has exceeded your rate limit (retry after 2000 ms)");
    expectTextAgrees(final);
  });

  it("R60: an invalid retryAfterMs is left out", async () => {
    const { final } = await play({ failure: "overloaded", retryAfterMs: -1 });

    expect(final.retry).toEqual({ retryable: true, kind: "overloaded" });
  });

  it("R60: errorMessage overrides the wording, the fields stay", async () => {
    const { final } = await play({ failure: "server_error", errorMessage: "upstream exploded" });

    expect(fieldsOf(final)).toMatchObject({ errorMessage: "upstream exploded", retry: { retryable: true, kind: "server_error" } });
  });

  it("R60: a pre-aborted signal wins over a scripted failure", async () => {
    const controller = new AbortController();
    controller.abort();

    const { events, final } = await play({ failure: "overloaded" }, controller.signal);

    expect(events).toEqual(["error"]);
    expect(fieldsOf(final)).toEqual({ stopReason: "aborted", errorMessage: "Request was aborted", retry: undefined, contextOverflow: undefined, content: [] });
  });

  it("R60: an unknown failure kind is a clear, non-retryable error (no throw)", async () => {
    const { events, final } = await play({ failure: "meteor" as ScriptedFailureKind });

    expect(events).toEqual(["error"]);
    expect(final.errorMessage).toBe(
      'Scripted model: unknown failure "meteor" (expected one of overloaded, rate_limited, server_error, connection, stall, prompt_too_long)',
    );
    expect(final.retry).toEqual({ retryable: false });
  });
});

describe("R60: scripted failures after content", () => {
  it("R60: afterContent plays start and the content, then fails, not retryable, kind kept", async () => {
    const { events, final } = await play({ failure: "overloaded", afterContent: true, content: [text("Half an ")] });

    expect(events).toEqual(["start", "text_start", "text_delta", "text_delta", "text_end", "error"]);
    expect(fieldsOf(final)).toEqual({
      stopReason: "error",
      errorMessage: "Scripted model: HTTP 529 overloaded_error: Overloaded",
      retry: { retryable: false, kind: "overloaded" },
      contextOverflow: undefined,
      content: [{ type: "text", text: "Half an " }],
    });
    expectTextAgrees(final);
  });

  it("R60: afterContent without content plays a default partial text", async () => {
    const { events, final } = await play({ failure: "connection", afterContent: true, retryAfterMs: 5 });

    expect(events).toEqual(["start", "text_start", "text_delta", "text_delta", "text_end", "error"]);
    expect(final.content).toEqual([{ type: "text", text: "Partial answer" }]);
    expect(final.retry).toEqual({ retryable: false, kind: "connection" });
    expectTextAgrees(final);
  });

  it("R60: afterContent after a tool call keeps the call", async () => {
    const { events, final } = await play({ failure: "server_error", afterContent: true, content: [toolCall("read", { path: "a" }, "c1")] });

    expect(events).toEqual(["start", "toolcall_start", "toolcall_delta", "toolcall_end", "error"]);
    expect(final.content).toEqual([{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } }]);
    expect(final.retry).toEqual({ retryable: false, kind: "server_error" });
  });

  it("R60: an abort while the content plays ends as aborted, without the failure's fields", async () => {
    const controller = new AbortController();
    const stream = await scriptedStreamFn([{ failure: "overloaded", afterContent: true, content: [text("a b c d")], delayMs: 1 }])(
      scriptedModel,
      { messages: [] },
      { signal: controller.signal },
    );
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "text_delta") controller.abort();
    }
    const final = await stream.result();

    expect(types).toEqual(["start", "text_start", "text_delta", "error"]);
    expect(fieldsOf(final)).toEqual({ stopReason: "aborted", errorMessage: "Request was aborted", retry: undefined, contextOverflow: undefined, content: [{ type: "text", text: "a " }] });
  });
});

describe("R62: scripted context overflow", () => {
  it("R62: prompt_too_long → a lone error event, contextOverflow, not retryable, worded as Anthropic does", async () => {
    const { events, final } = await play({ failure: "prompt_too_long" });

    expect(events).toEqual(["error"]);
    expect(fieldsOf(final)).toEqual({
      stopReason: "error",
      errorMessage: "Scripted model: HTTP 400 invalid_request_error: prompt is too long: 200001 tokens > 200000 maximum",
      retry: { retryable: false },
      contextOverflow: true,
      content: [],
    });
    expectTextAgrees(final);
  });
});

describe("R60: the existing script format is unchanged", () => {
  it("R60: stopReason error + errorMessage carries no classification fields (the loop reads the text)", async () => {
    const { events, final } = await play({ stopReason: "error", errorMessage: "Anthropic API error 529 overloaded_error: Overloaded", content: [] });

    expect(events).toEqual(["start", "error"]);
    expect(fieldsOf(final)).toEqual({
      stopReason: "error",
      errorMessage: "Anthropic API error 529 overloaded_error: Overloaded",
      retry: undefined,
      contextOverflow: undefined,
      content: [],
    });
    expect(classifyFailure(final).retry).toEqual({ retryable: true, kind: "overloaded" });
  });

  it("R60: setupError is still a lone error event without fields", async () => {
    const { events, final } = await play({ setupError: "invalid model id" });

    expect(events).toEqual(["error"]);
    expect(fieldsOf(final)).toEqual({ stopReason: "error", errorMessage: "invalid model id", retry: undefined, contextOverflow: undefined, content: [] });
  });

  it("R60: a plain answer has no classification fields", async () => {
    const { events, final } = await play({ content: [text("Done")] });

    expect(events.at(-1)).toBe("done");
    expect(fieldsOf(final)).toEqual({ stopReason: "stop", errorMessage: undefined, retry: undefined, contextOverflow: undefined, content: [{ type: "text", text: "Done" }] });
  });
});
