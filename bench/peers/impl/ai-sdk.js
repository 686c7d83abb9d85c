// The AI SDK 7: `generateText`/`streamText` (loop calls) and `ToolLoopAgent` (its Agent), over a
// scripted model object that implements the LanguageModelV4 specification itself.
import { generateText, jsonSchema, stepCountIs, streamText, tool, ToolLoopAgent } from "ai";
import { counters, executeTool, nextResponse, TOOL_NAMES } from "../script.js";

const usage = () => ({
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
});

export const scriptedModel = {
  specificationVersion: "v4",
  provider: "bench",
  modelId: "bench",
  supportedUrls: {},
  async doGenerate() {
    const response = nextResponse();
    const content = response.calls
      ? response.calls.map((call) => ({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) }))
      : [{ type: "text", text: response.text }];
    return { content, finishReason: { unified: response.calls ? "tool-calls" : "stop", raw: undefined }, usage: usage(), warnings: [] };
  },
  async doStream() {
    const response = nextResponse();
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue({ type: "stream-start", warnings: [] });
        if (response.calls) {
          for (const call of response.calls) controller.enqueue({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) });
        } else {
          controller.enqueue({ type: "text-start", id: "t0" });
          for (const piece of response.pieces) controller.enqueue({ type: "text-delta", id: "t0", delta: piece });
          controller.enqueue({ type: "text-end", id: "t0" });
        }
        controller.enqueue({ type: "finish", usage: usage(), finishReason: { unified: response.calls ? "tool-calls" : "stop", raw: undefined } });
        controller.close();
      },
    });
    return { stream };
  },
};

const tools = Object.fromEntries(
  TOOL_NAMES.map((name) => [name, tool({ description: `tool ${name}`, inputSchema: jsonSchema({ type: "object", properties: { n: { type: "number" } } }), execute: async () => executeTool() })]),
);
const settings = { model: scriptedModel, tools, stopWhen: stepCountIs(20) };
const agent = new ToolLoopAgent(settings);

async function consume(result) {
  for await (const part of result.fullStream) if (part.type === "text-delta") counters.deltas++;
}

export const columns = [
  { column: "AI SDK generateText", kind: "loop", streams: false, run: () => generateText({ ...settings, prompt: "go" }) },
  { column: "AI SDK streamText", kind: "loop", streams: true, run: () => consume(streamText({ ...settings, prompt: "go" })) },
  { column: "AI SDK Agent generate", kind: "session", streams: false, run: () => agent.generate({ prompt: "go" }) },
  { column: "AI SDK Agent stream", kind: "session", streams: true, run: async () => consume(await agent.stream({ prompt: "go" })) },
];
