import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { anthropicModel, anthropicStreamFn, type AnthropicStreamFnOptions } from "../../src/providers/anthropic/index.js";
import type { AssistantMessage, Message, Model, StreamOptions, ToolDecl } from "../../src/types.js";
import { sse, startSseServer, textResponse, type SseServer } from "../support/sse-server.js";
import { API_KEY, collectChecked, FIXTURE_MODEL_ID, haikuUsage, project, userText } from "./helpers.js";

/** `reasoning: "off"` as an untyped caller may send it (the loop never does: absent means off). */
const UNTYPED_OFF = { reasoning: "off" } as unknown as StreamOptions;

let server: SseServer;
beforeAll(async () => {
  server = await startSseServer();
});
afterEach(() => {
  server.clear();
  vi.unstubAllEnvs();
});
afterAll(() => server.close());

const haiku = anthropicModel(FIXTURE_MODEL_ID);

/** Sends one request for `messages` and returns the JSON body the server received. */
async function requestBody(
  messages: Message[],
  { factory = {}, options = {}, model = haiku }: { factory?: AnthropicStreamFnOptions; options?: StreamOptions; model?: Model } = {},
): Promise<Record<string, unknown>> {
  server.script(sse(textResponse("ok")));
  const events = await collectChecked(anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY, ...factory })(model, { messages }, options));
  expect(events.map(project).at(-1)).toEqual(["done", "stop"]);
  expect(server.requests).toHaveLength(1);
  return server.requests[0].body as Record<string, unknown>;
}

const readTool: ToolDecl = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const grepTool: ToolDecl = {
  name: "grep",
  description: "Search files",
  parameters: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] },
};
const writeTool: ToolDecl = {
  name: "write",
  description: "Write a file",
  parameters: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } } },
};

const assistant = (content: AssistantMessage["content"], overrides: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: FIXTURE_MODEL_ID,
  usage: haikuUsage(0, 0),
  stopReason: "toolUse",
  timestamp: 2,
  ...overrides,
});

const PNG = "iVBORw0KGgoAAAANSUhEUg==";

/** A transcript with every feature the mapping handles. */
const transcript: Message[] = [
  {
    role: "system",
    content: "You are terse.",
    sections: { style: "Use British spelling.", scratch: "Temporary." },
    toolsAdded: [readTool, grepTool],
    timestamp: 0,
  },
  { role: "user", content: [{ type: "text", text: "Look at this" }, { type: "image", data: PNG, mimeType: "image/png" }], timestamp: 1 },
  assistant([
    { type: "thinking", thinking: "Plan the reads.", thinkingSignature: "sig-1" },
    { type: "thinking", thinking: "", thinkingSignature: "REDACTED-DATA", redacted: true },
    { type: "thinking", thinking: "Unsigned thoughts from an aborted stream" },
    { type: "text", text: "Reading both." },
    { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.ts" } },
    { type: "toolCall", id: "toolu_2", name: "grep", arguments: { pattern: "x" } },
  ]),
  { role: "toolResult", toolCallId: "toolu_1", toolName: "read", content: [{ type: "text", text: "file a" }], isError: false, timestamp: 3 },
  {
    role: "toolResult",
    toolCallId: "toolu_2",
    toolName: "grep",
    content: [
      { type: "text", text: "no match" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ],
    isError: true,
    timestamp: 4,
  },
  { role: "system", content: "Be brief.", sections: { scratch: null }, toolsRemoved: [{ name: "grep" }], toolsAdded: [writeTool], timestamp: 5 },
  userText("Now write it."),
];

const EPHEMERAL = { type: "ephemeral" };

describe("request mapping", () => {
  it("replays system messages into system and tools, groups tool results, echoes thinking and places cache breakpoints", async () => {
    const body = await requestBody(transcript);

    expect(body).toEqual({
      model: "claude-haiku-4-5",
      max_tokens: 64_000,
      stream: true,
      system: [{ type: "text", text: "You are terse.\n\nBe brief.\n\nUse British spelling.", cache_control: EPHEMERAL }],
      tools: [
        { name: "read", description: "Read a file", input_schema: readTool.parameters },
        { name: "write", description: "Write a file", input_schema: writeTool.parameters, cache_control: EPHEMERAL },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Look at this" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Plan the reads.", signature: "sig-1" },
            { type: "redacted_thinking", data: "REDACTED-DATA" },
            { type: "text", text: "Reading both." },
            { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
            { type: "tool_use", id: "toolu_2", name: "grep", input: { pattern: "x" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "file a" }], is_error: false },
            {
              type: "tool_result",
              tool_use_id: "toolu_2",
              content: [
                { type: "text", text: "no match" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
              ],
              is_error: true,
            },
            { type: "text", text: "Now write it.", cache_control: EPHEMERAL },
          ],
        },
      ],
    });
  });

  it("sends no cache_control anywhere, and system as a string, with promptCaching: false", async () => {
    const body = await requestBody(transcript, { factory: { promptCaching: false } });

    expect(body.system).toBe("You are terse.\n\nBe brief.\n\nUse British spelling.");
    expect(server.requests[0].rawBody).not.toContain("cache_control");
  });

  it("omits system and tools when the transcript declares none", async () => {
    const body = await requestBody([userText("Hi")]);

    expect(body).toEqual({
      model: "claude-haiku-4-5",
      max_tokens: 64_000,
      stream: true,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: EPHEMERAL }] }],
    });
  });

  it("repairs what the API would reject: dangling tool calls get an error result, stray results and empty blocks are dropped, same-role turns merge", async () => {
    const body = await requestBody([
      userText("Start"),
      userText("   "),
      assistant([], { stopReason: "aborted", errorMessage: "Request was aborted" }),
      assistant([
        { type: "text", text: "" },
        { type: "toolCall", id: "toolu_lost", name: "read", arguments: { path: "b" } },
      ]),
      { role: "toolResult", toolCallId: "toolu_unknown", toolName: "read", content: [{ type: "text", text: "?" }], isError: false, timestamp: 3 },
      userText("Continue"),
      assistant([{ type: "thinking", thinking: "from another provider", thinkingSignature: "x" }, { type: "text", text: "Sure." }], {
        api: "openai-responses",
        provider: "openai",
        stopReason: "stop",
      }),
      assistant([{ type: "text", text: "More." }], { stopReason: "error", errorMessage: "boom" }),
      userText("Go on"),
    ]);

    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Start" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_lost", name: "read", input: { path: "b" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_lost", is_error: true, content: "No result provided" },
          { type: "text", text: "Continue" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Sure." },
          { type: "text", text: "More." },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Go on", cache_control: EPHEMERAL }] },
    ]);
  });

  // SDK 1.14.0 sends an API key as `Authorization: Bearer <key>` (no x-api-key header any more).
  it("sends the key only in the SDK's auth header (authorization: Bearer), never in the body or another header", async () => {
    await requestBody([userText("Hi")]);

    const { headers, rawBody } = server.requests[0];
    const carrying = Object.entries(headers).filter(([, value]) => String(value).includes(API_KEY));
    expect(carrying).toEqual([["authorization", `Bearer ${API_KEY}`]]);
    expect(rawBody).not.toContain(API_KEY);
  });

  it("takes the key from the call, then getApiKey, then the factory, then ANTHROPIC_API_KEY", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "key-from-env");
    const cases: [AnthropicStreamFnOptions, StreamOptions][] = [
      [{ apiKey: "key-from-factory", getApiKey: () => "key-from-hook" }, { apiKey: "key-from-call" }],
      [{ apiKey: "key-from-factory", getApiKey: async () => "key-from-hook" }, {}],
      [{ apiKey: "key-from-factory", getApiKey: () => undefined }, {}],
      [{}, {}],
    ];

    const sent: unknown[] = [];
    for (const [factory, options] of cases) {
      server.script(sse(textResponse("ok")));
      await collectChecked(anthropicStreamFn({ baseURL: server.url, ...factory })(haiku, { messages: [userText("Hi")] }, options));
      sent.push(server.requests.at(-1)?.headers.authorization?.replace(/^Bearer /, ""));
    }

    expect(sent).toEqual(["key-from-call", "key-from-hook", "key-from-factory", "key-from-env"]);
  });
});

describe("request mapping: thinking budget", () => {
  const thinkingOf = async (model: Model, options: StreamOptions) => {
    const body = await requestBody([userText("Think")], { model, options });
    return { max_tokens: body.max_tokens, thinking: body.thinking };
  };

  it.each([
    ["minimal", 1024],
    ["low", 2048],
    ["medium", 8192],
    ["high", 16384],
    ["xhigh", 32000],
  ] as const)("%s → budget %i with the model's max_tokens", async (level, budget) => {
    expect(await thinkingOf(haiku, { reasoning: level })).toEqual({
      max_tokens: 64_000,
      thinking: { type: "enabled", budget_tokens: budget },
    });
  });

  it("caps max (64000) below the model's 64000 output limit", async () => {
    expect(await thinkingOf(haiku, { reasoning: "max" })).toEqual({
      max_tokens: 64_000,
      thinking: { type: "enabled", budget_tokens: 62_976 },
    });
  });

  it("raises a small maxTokens above the budget, within the model's limit", async () => {
    expect(await thinkingOf(haiku, { reasoning: "high", maxTokens: 4000 })).toEqual({
      max_tokens: 17_408,
      thinking: { type: "enabled", budget_tokens: 16_384 },
    });
    server.clear();
    expect(await thinkingOf(anthropicModel("claude-opus-4-1"), { reasoning: "xhigh", maxTokens: 1000 })).toEqual({
      max_tokens: 32_000,
      thinking: { type: "enabled", budget_tokens: 30_976 },
    });
  });

  it("sends no thinking for off, for no level, or for a model without reasoning", async () => {
    expect(await thinkingOf(haiku, { ...UNTYPED_OFF, maxTokens: 500 })).toEqual({ max_tokens: 500, thinking: undefined });
    server.clear();
    expect(await thinkingOf(haiku, {})).toEqual({ max_tokens: 64_000, thinking: undefined });
    server.clear();
    expect(await thinkingOf(anthropicModel("claude-3-5-haiku-latest"), { reasoning: "high" })).toEqual({
      max_tokens: 8192,
      thinking: undefined,
    });
  });
});
