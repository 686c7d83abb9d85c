import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { anthropicModel, anthropicStreamFn } from "../../src/providers/anthropic/index.js";
import {
  messageDelta,
  messageStart,
  messageStop,
  ping,
  redactedThinkingBlock,
  response,
  splitEvery,
  sse,
  startSseServer,
  textBlock,
  textResponse,
  thinkingBlock,
  toolUseBlock,
  type SseServer,
} from "../support/sse-server.js";
import { ANTHROPIC_FIELDS, API_KEY, collectChecked as collect, contextOf, finalOf, FIXTURE_MODEL_ID, haikuUsage, project } from "./helpers.js";

let server: SseServer;
beforeAll(async () => {
  server = await startSseServer();
});
afterEach(() => server.clear());
afterAll(() => server.close());

const model = anthropicModel(FIXTURE_MODEL_ID);
const run = (options: { reasoning?: "high" } = {}) =>
  collect(anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY })(model, contextOf(), options));

describe("response mapping: content blocks", () => {
  it("streams a plain text reply (split across TCP writes, multi-byte characters intact) and ends with done/stop", async () => {
    server.script(sse(textResponse(["Héllo", ", wörld ", "👋"])));

    const events = await run();

    expect(events.map(project)).toEqual([
      ["start"],
      ["text_start", 0],
      ["text_delta", 0, "Héllo"],
      ["text_delta", 0, ", wörld "],
      ["text_delta", 0, "👋"],
      ["text_end", 0, "Héllo, wörld 👋"],
      ["done", "stop"],
    ]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [{ type: "text", text: "Héllo, wörld 👋" }],
      usage: haikuUsage(10, 5),
      stopReason: "stop",
    });
  });

  it("every event carries the same live partial message, whose content index matches contentIndex", async () => {
    server.script(sse(response([thinkingBlock(0, ["Hm"], "sig"), textBlock(1, ["Yes"])])));

    const events = await run({ reasoning: "high" });

    const partials = new Set(events.map((e) => (e.type === "done" ? e.message : e.type === "error" ? e.error : e.partial)));
    expect(partials.size).toBe(1);
    const ends = events.flatMap((e) => (e.type === "text_end" || e.type === "thinking_end" ? [[e.contentIndex, e.partial.content[e.contentIndex].type]] : []));
    expect(ends).toEqual([
      [0, "thinking"],
      [1, "text"],
    ]);
  });

  it("keeps thinking with its signature (signature_delta adds no event)", async () => {
    server.script(sse(response([thinkingBlock(0, ["Let me ", "think."], "EqRsig+/=="), textBlock(1, ["42"])])));

    const events = await run({ reasoning: "high" });

    expect(events.map(project)).toEqual([
      ["start"],
      ["thinking_start", 0],
      ["thinking_delta", 0, "Let me "],
      ["thinking_delta", 0, "think."],
      ["thinking_end", 0, "Let me think."],
      ["text_start", 1],
      ["text_delta", 1, "42"],
      ["text_end", 1, "42"],
      ["done", "stop"],
    ]);
    expect(finalOf(events).content).toEqual([
      { type: "thinking", thinking: "Let me think.", thinkingSignature: "EqRsig+/==" },
      { type: "text", text: "42" },
    ]);
  });

  it("maps redacted_thinking to a redacted thinking block holding the opaque data, with start and end only", async () => {
    server.script(sse(response([redactedThinkingBlock(0, "ENCRYPTED-PAYLOAD"), textBlock(1, ["Done"])])));

    const events = await run({ reasoning: "high" });

    expect(events.map(project)).toEqual([
      ["start"],
      ["thinking_start", 0],
      ["thinking_end", 0, ""],
      ["text_start", 1],
      ["text_delta", 1, "Done"],
      ["text_end", 1, "Done"],
      ["done", "stop"],
    ]);
    expect(finalOf(events).content).toEqual([
      { type: "thinking", thinking: "", thinkingSignature: "ENCRYPTED-PAYLOAD", redacted: true },
      { type: "text", text: "Done" },
    ]);
  });

  it("accumulates two tool calls from input_json_delta chunks split mid-token (the empty first chunk emits nothing)", async () => {
    const first = splitEvery('{"path": "src/a.ts", "limit": 10}', 4);
    const second = splitEvery('{"pattern": "fo\\"o", "flags": ["i", "m"], "nested": {"x": null}}', 7);
    server.script(
      sse(
        response(
          [textBlock(0, ["Reading."]), toolUseBlock(1, "toolu_01", "read", first), toolUseBlock(2, "toolu_02", "grep", second)],
          { stopReason: "tool_use" },
        ),
      ),
    );

    const events = await run();

    const readCall = { type: "toolCall", id: "toolu_01", name: "read", arguments: { path: "src/a.ts", limit: 10 } };
    const grepCall = {
      type: "toolCall",
      id: "toolu_02",
      name: "grep",
      arguments: { pattern: 'fo"o', flags: ["i", "m"], nested: { x: null } },
    };
    expect(events.map(project)).toEqual([
      ["start"],
      ["text_start", 0],
      ["text_delta", 0, "Reading."],
      ["text_end", 0, "Reading."],
      ["toolcall_start", 1],
      ...first.map((chunk) => ["toolcall_delta", 1, chunk]),
      ["toolcall_end", 1, readCall],
      ["toolcall_start", 2],
      ...second.map((chunk) => ["toolcall_delta", 2, chunk]),
      ["toolcall_end", 2, grepCall],
      ["done", "toolUse"],
    ]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [{ type: "text", text: "Reading." }, readCall, grepCall],
      usage: haikuUsage(10, 5),
      stopReason: "toolUse",
    });
  });

  it("turns invalid or non-object tool JSON into arguments {} plus argumentsError quoting the raw text, and a tool call without input into {}", async () => {
    server.script(
      sse(
        response(
          [
            toolUseBlock(0, "toolu_bad", "read", ['{"path": "C:\\d', "ir\"} trailing"]),
            toolUseBlock(1, "toolu_arr", "read", ["[1, 2]"]),
            toolUseBlock(2, "toolu_none", "list", []),
          ],
          { stopReason: "tool_use" },
        ),
      ),
    );

    const events = await run();

    const final = finalOf(events);
    expect(events.map((e) => e.type)).toEqual([
      "start",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_delta",
      "toolcall_end",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_end",
      "toolcall_start",
      "toolcall_end",
      "done",
    ]);
    expect(final.stopReason).toBe("toolUse");
    expect(final.content).toEqual([
      {
        type: "toolCall",
        id: "toolu_bad",
        name: "read",
        arguments: {},
        argumentsError: expect.stringMatching(/^Tool arguments are not valid JSON \(.+\)\. Raw arguments: \{"path": "C:\\dir"\} trailing$/),
      },
      {
        type: "toolCall",
        id: "toolu_arr",
        name: "read",
        arguments: {},
        argumentsError: "Tool arguments must be a JSON object, got an array. Raw arguments: [1, 2]",
      },
      { type: "toolCall", id: "toolu_none", name: "list", arguments: {} },
    ]);
  });

  it("ignores ping events and blocks outside our content model", async () => {
    server.script(
      sse([
        messageStart(),
        ping(),
        { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } } },
        { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
        ping(),
        ...textBlock(1, ["ok"]),
        messageDelta("end_turn"),
        messageStop(),
      ]),
    );

    const events = await run();

    expect(events.map(project)).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "ok"], ["text_end", 0, "ok"], ["done", "stop"]]);
  });
});

describe("response mapping: stop reasons", () => {
  it.each([
    ["end_turn", null, ["done", "stop"], "stop", undefined],
    ["stop_sequence", null, ["done", "stop"], "stop", undefined],
    ["pause_turn", null, ["done", "stop"], "stop", undefined],
    ["max_tokens", null, ["done", "length"], "length", undefined],
    ["model_context_window_exceeded", null, ["done", "length"], "length", undefined],
    ["tool_use", null, ["done", "toolUse"], "toolUse", undefined],
    [
      "refusal",
      { type: "refusal", category: "cyber", explanation: "I can't help with that request." },
      ["error", "error"],
      "error",
      "I can't help with that request.",
    ],
    ["refusal", null, ["error", "error"], "error", "The model declined to respond (stop_reason: refusal)"],
    [null, null, ["error", "error"], "error", "Anthropic response ended without a stop_reason"],
    ["sensitive", null, ["error", "error"], "error", "Anthropic response ended with an unknown stop_reason: sensitive"],
  ])("stop_reason %s (details %j) → %j", async (stopReason, stopDetails, terminal, expectedStop, errorMessage) => {
    server.script(sse(textResponse("Hi", { stopReason, stopDetails })));

    const events = await run();

    expect(events.map(project)).toEqual([["start"], ["text_start", 0], ["text_delta", 0, "Hi"], ["text_end", 0, "Hi"], terminal]);
    expect(finalOf(events)).toEqual({
      ...ANTHROPIC_FIELDS,
      content: [{ type: "text", text: "Hi" }],
      usage: haikuUsage(10, 5),
      stopReason: expectedStop,
      // R60: a refusal or a malformed ending is the model's answer: another attempt is not the fix.
      ...(errorMessage === undefined ? {} : { errorMessage, retry: { retryable: false } }),
    });
  });
});

describe("response mapping: usage and cost", () => {
  it("takes input and cache tokens from message_start, replaces output with message_delta's running total, and prices them per million", async () => {
    server.script(
      sse([
        messageStart({ input_tokens: 1_000, cache_read_input_tokens: 200_000, cache_creation_input_tokens: 40_000, output_tokens: 3 }),
        ...textBlock(0, ["a"]),
        messageDelta(null, { output_tokens: 50 }),
        messageDelta("end_turn", { output_tokens: 120 }),
        messageStop(),
      ]),
    );

    const events = await run();

    const { usage } = finalOf(events);
    expect({ ...usage, cost: undefined }).toEqual({
      input: 1_000,
      output: 120,
      cacheRead: 200_000,
      cacheWrite: 40_000,
      totalTokens: 241_120,
      cost: undefined,
    });
    // 1000 × $1 + 120 × $5 + 200 000 × $0.10 + 40 000 × $1.25, per million tokens.
    expect(usage.cost.input).toBeCloseTo(0.001, 12);
    expect(usage.cost.output).toBeCloseTo(0.0006, 12);
    expect(usage.cost.cacheRead).toBeCloseTo(0.02, 12);
    expect(usage.cost.cacheWrite).toBeCloseTo(0.05, 12);
    expect(usage.cost.total).toBeCloseTo(0.0716, 12);
  });

  it("uses the model's own prices (Opus 4.1: $15 / $75)", async () => {
    server.script(sse(textResponse("a", { usage: { input_tokens: 2_000_000 }, finalUsage: { output_tokens: 1_000_000 } })));

    const events = await collect(
      anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY })(anthropicModel("claude-opus-4-1"), contextOf(), {}),
    );

    const { usage } = finalOf(events);
    expect(usage.cost).toEqual({ input: 30, output: 75, cacheRead: 0, cacheWrite: 0, total: 105 });
    expect(finalOf(events).model).toBe("claude-opus-4-1");
  });
});
