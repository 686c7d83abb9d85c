// OpenAI Agents JS: `run(agent, input)` (a loop call) and the same with a `MemorySession` per
// conversation (its session), over a scripted `Model` of our own.
import { Agent, MemorySession, run, tool, Usage, setTracingDisabled } from "@openai/agents";
import { counters, executeTool, nextResponse, TOOL_NAMES } from "../script.js";

setTracingDisabled(true);
let responses = 0;
function output(response) {
  if (response.calls) return response.calls.map((call) => ({ type: "function_call", callId: call.id, name: call.name, arguments: JSON.stringify(call.args), status: "completed" }));
  return [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: response.text }] }];
}
const scriptedModel = {
  async getResponse() {
    return { usage: new Usage(), output: output(nextResponse()), responseId: `r${responses++}` };
  },
  async *getStreamedResponse() {
    const response = nextResponse();
    yield { type: "response_started" };
    if (response.text) for (const piece of response.pieces) yield { type: "output_text_delta", delta: piece };
    yield { type: "response_done", response: { id: `r${responses++}`, usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 }, output: output(response) } };
  },
};
const tools = TOOL_NAMES.map((name) => tool({
  name, description: `tool ${name}`, strict: false,
  parameters: { type: "object", properties: { n: { type: "number" } }, required: [], additionalProperties: true },
  execute: async () => executeTool(),
}));
const agent = new Agent({ name: "bench", instructions: "bench", model: scriptedModel, tools });

async function streamed(options) {
  const result = await run(agent, "go", { ...options, stream: true, maxTurns: 20 });
  for await (const event of result) if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta") counters.deltas++;
  await result.completed;
}

export const columns = [
  { column: "OpenAI Agents run", kind: "loop", streams: false, run: () => run(agent, "go", { maxTurns: 20 }) },
  { column: "OpenAI Agents run (stream)", kind: "loop", streams: true, run: () => streamed({}) },
  { column: "OpenAI Agents session", kind: "session", streams: false, run: () => run(agent, "go", { maxTurns: 20, session: new MemorySession() }) },
  { column: "OpenAI Agents session (stream)", kind: "session", streams: true, run: () => streamed({ session: new MemorySession() }) },
];
