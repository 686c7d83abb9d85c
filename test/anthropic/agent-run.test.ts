import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, type AgentEvent, type AgentTool, type Message } from "../../src/index.js";
import { anthropicModel, anthropicStreamFn } from "../../src/providers/anthropic/index.js";
import { response, sse, splitEvery, startSseServer, textBlock, thinkingBlock, toolUseBlock, type SseServer } from "../support/sse-server.js";
import { API_KEY } from "./helpers.js";

// A full agent run through the real SDK against the local server: two tools, two turns,
// parallel tool calls; the test reads what the server received.
describe("agentLoop over the Anthropic provider", () => {
  let server: SseServer;
  beforeAll(async () => {
    server = await startSseServer();
  });
  afterAll(() => server.close());

  const tool = (name: string, reply: string): AgentTool => ({
    name,
    label: name,
    description: `The ${name} tool`,
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: async (_id, params: { path: string }) => ({ content: [{ type: "text", text: `${reply} ${params.path}` }], details: {} }),
  });

  it("runs two turns with parallel tool calls and sends the transcript back correctly", async () => {
    server.clear();
    server.script(
      sse(
        response(
          [
            thinkingBlock(0, ["I should ", "look at both."], "sig-turn-1"),
            textBlock(1, ["Reading both files."]),
            toolUseBlock(2, "toolu_a", "read", splitEvery('{"path":"a.txt"}', 5)),
            toolUseBlock(3, "toolu_b", "stat", splitEvery('{"path":"b.txt"}', 3)),
          ],
          { stopReason: "tool_use", usage: { input_tokens: 100 }, finalUsage: { output_tokens: 40 } },
        ),
      ),
      sse(response([textBlock(0, ["Both ", "files exist."])], { usage: { input_tokens: 180 }, finalUsage: { output_tokens: 8 } })),
    );
    const model = anthropicModel("claude-haiku-4-5");
    const stream = agentLoop(
      [{ role: "user", content: "Check a.txt and b.txt", timestamp: 1 }],
      { messages: [{ role: "system", content: "You are terse.", timestamp: 0 }], tools: [tool("read", "contents of"), tool("stat", "size of")] },
      { model, reasoning: "low", apiKey: API_KEY, convertToLlm: (messages) => messages as Message[] },
      undefined,
      anthropicStreamFn({ baseURL: server.url, maxRetries: 0 }),
    );
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = await stream.result();

    expect(events.filter((e) => e.type.startsWith("tool_execution_")).map((e) => `${e.type}:${(e as { toolName: string }).toolName}`)).toEqual([
      "tool_execution_start:read",
      "tool_execution_start:stat",
      "tool_execution_end:read",
      "tool_execution_end:stat",
    ]);
    expect(added.map((m) => (m as { role: string }).role)).toEqual(["system", "user", "assistant", "toolResult", "toolResult", "assistant"]);
    const final = added.at(-1) as { stopReason: string; content: { text: string }[]; usage: { input: number; output: number } };
    expect(final.stopReason).toBe("stop");
    expect(final.content[0].text).toBe("Both files exist.");
    expect(final.usage).toMatchObject({ input: 180, output: 8 });

    expect(server.requests).toHaveLength(2);
    const first = server.requests[0].body as Record<string, any>;
    const second = server.requests[1].body as Record<string, any>;
    // System prompt and tools come from the replayed system messages (R30).
    expect(JSON.stringify(first.system)).toContain("You are terse.");
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual(["read", "stat"]);
    expect(first.tools[0].input_schema).toMatchObject({ type: "object", required: ["path"] });
    expect(second.tools.map((t: { name: string }) => t.name)).toEqual(["read", "stat"]);
    // The second request echoes the assistant turn (thinking with its signature) and groups
    // both tool results into one user message.
    const [, assistantTurn, toolResults] = second.messages;
    expect(assistantTurn.role).toBe("assistant");
    expect(assistantTurn.content[0]).toMatchObject({ type: "thinking", thinking: "I should look at both.", signature: "sig-turn-1" });
    expect(assistantTurn.content.filter((b: { type: string }) => b.type === "tool_use").map((b: { id: string }) => b.id)).toEqual(["toolu_a", "toolu_b"]);
    expect(toolResults.role).toBe("user");
    expect(toolResults.content.map((b: { type: string; tool_use_id: string }) => [b.type, b.tool_use_id])).toEqual([
      ["tool_result", "toolu_a"],
      ["tool_result", "toolu_b"],
    ]);
    expect(JSON.stringify(toolResults.content[0].content)).toContain("contents of a.txt");
    // The key travels only in the request headers.
    expect(JSON.stringify(events)).not.toContain(API_KEY);
    expect(JSON.stringify(added)).not.toContain(API_KEY);
    expect(server.requests.every((r) => !r.rawBody.includes(API_KEY))).toBe(true);
  });
});
