/**
 * pi-ai's stream functions run unchanged as the loop's `streamFn` (`@earendil-works/pi-ai` 1.6,
 * `streamSimple` from its `/compat` entry): an Agent runs a multi-turn tool session through pi-ai's
 * faux provider, and through its real OpenAI Chat Completions provider against a local server
 * speaking that wire. Nothing is cast or wrapped: pi-ai's function and models type-check as ours
 * (test/pi-ai/types-compat.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getModel, registerFauxProvider, streamSimple } from "@earendil-works/pi-ai/compat";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai/providers/faux";
import { Agent, type AgentTool, type AssistantMessage, type StreamFn } from "../../src/index.js";
import { sseFrames, startWireServer, type WireServer } from "../support/wire-server.js";
import { openaiChatWire, WIRE_API_KEY } from "../ai-sdk/wires.js";

const piStreamFn: StreamFn = streamSimple;

const tool = (name: string, reply: string): AgentTool => ({
  name,
  label: name,
  description: `The ${name} tool`,
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: async (_id, params: { path: string }) => ({ content: [{ type: "text", text: `${reply} ${params.path}` }], details: {} }),
});

/** The transcript as role:summary strings, system messages left out. */
function transcript(agent: Agent): string[] {
  return agent.state.messages.flatMap((message) => {
    const m = message as { role: string; content: unknown; stopReason?: string };
    if (m.role === "system") return [];
    if (m.role === "assistant") {
      const blocks = (m.content as { type: string; text?: string; name?: string; arguments?: unknown }[]).map((block) =>
        block.type === "toolCall" ? `${block.name}(${JSON.stringify(block.arguments)})` : block.text,
      );
      return [`assistant[${m.stopReason}]: ${blocks.join(" ")}`];
    }
    if (m.role === "toolResult") return [`toolResult: ${(m.content as { text: string }[])[0].text}`];
    const text = typeof m.content === "string" ? m.content : (m.content as { text?: string }[]).map((block) => block.text).join("");
    return [`user: ${text}`];
  });
}

describe("pi-ai's faux provider as streamFn", () => {
  it("an Agent runs two prompts, the first with parallel tool calls, through streamSimple", async () => {
    const faux = registerFauxProvider({ provider: "faux-test" });
    try {
      faux.setResponses([
        fauxAssistantMessage([fauxText("Reading both."), fauxToolCall("read", { path: "a.txt" }, { id: "t1" }), fauxToolCall("stat", { path: "b.txt" }, { id: "t2" })], {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage("Both exist."),
        (context) => fauxAssistantMessage(`I have seen ${context.messages.length} messages.`),
      ]);
      const agent = new Agent({
        streamFn: piStreamFn,
        initialState: { model: faux.getModel(), systemPrompt: "Be brief.", tools: [tool("read", "contents of"), tool("stat", "size of")] },
      });
      const executions: string[] = [];
      agent.subscribe((event) => {
        if (event.type === "tool_execution_end") executions.push(`${event.toolName}:${event.isError}`);
      });
      await agent.prompt("Check a.txt and b.txt");
      await agent.prompt("How many messages?");

      expect(executions).toEqual(["read:false", "stat:false"]);
      expect(transcript(agent)).toEqual([
        "user: Check a.txt and b.txt",
        'assistant[toolUse]: Reading both. read({"path":"a.txt"}) stat({"path":"b.txt"})',
        "toolResult: contents of a.txt",
        "toolResult: size of b.txt",
        "assistant[stop]: Both exist.",
        "user: How many messages?",
        // The system message, the five above and the new prompt.
        "assistant[stop]: I have seen 7 messages.",
      ]);
      expect(faux.state.callCount).toBe(3);
    } finally {
      faux.unregister();
    }
  });
});

describe("pi-ai's OpenAI Chat Completions provider as streamFn, against the local wire", () => {
  let server: WireServer;
  beforeAll(async () => {
    server = await startWireServer();
  });
  afterAll(() => server.close());

  it("an Agent runs a parallel-tool turn then the answer (two requests); pi-ai sends the calls and results back on the wire", async () => {
    server.script(
      sseFrames(openaiChatWire.toolCalls([
        { id: "call_a", name: "read", chunks: ['{"path":', '"a.txt"}'] },
        { id: "call_b", name: "stat", chunks: ['{"pa', 'th":"b.txt"}'] },
      ])),
      sseFrames(openaiChatWire.text(["Both ", "exist."], { input: 30, output: 3 })),
    );
    const model = { ...getModel("openai", "gpt-4o-mini"), api: "openai-completions", baseUrl: `${server.url}/v1` };
    const agent = new Agent({
      streamFn: piStreamFn,
      getApiKey: () => WIRE_API_KEY,
      initialState: { model, systemPrompt: "Be brief.", tools: [tool("read", "contents of"), tool("stat", "size of")] },
    });
    await agent.prompt("Check a.txt and b.txt");

    expect(transcript(agent)).toEqual([
      "user: Check a.txt and b.txt",
      'assistant[toolUse]: read({"path":"a.txt"}) stat({"path":"b.txt"})',
      "toolResult: contents of a.txt",
      "toolResult: size of b.txt",
      "assistant[stop]: Both exist.",
    ]);
    expect((agent.state.messages.at(-1) as AssistantMessage).usage).toMatchObject({ input: 30, output: 3 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].url).toBe("/v1/chat/completions");
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${WIRE_API_KEY}`);
    const second = server.requests[1].body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] };
    expect(second.messages.map((m) => [m.role, m.tool_call_id ?? null])).toEqual([
      ["system", null],
      ["user", null],
      ["assistant", null],
      ["tool", "call_a"],
      ["tool", "call_b"],
    ]);
    expect(JSON.stringify(agent.state)).not.toContain(WIRE_API_KEY);
  });
});
