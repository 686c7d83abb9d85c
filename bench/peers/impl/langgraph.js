// LangGraph JS: the prebuilt ReAct agent's graph invoked (a loop call) and the same graph with a
// `MemorySaver` and a thread per conversation (its session), over a scripted chat model of our own.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { counters, executeTool, nextResponse, TOOL_NAMES } from "../script.js";

class ScriptedChatModel extends BaseChatModel {
  _llmType() {
    return "bench";
  }
  bindTools() {
    return this;
  }
  async _generate() {
    const response = nextResponse();
    const message = response.calls
      ? new AIMessage({ content: "", tool_calls: response.calls.map((call) => ({ id: call.id, name: call.name, args: call.args, type: "tool_call" })) })
      : new AIMessage({ content: response.text });
    return { generations: [{ text: response.text ?? "", message }] };
  }
  // As providers do, each chunk is reported to the run's callbacks (LangGraph's "messages" mode listens there).
  async *_streamResponseChunks(_messages, _options, runManager) {
    const response = nextResponse();
    if (response.calls) {
      const chunks = response.calls.map((call, index) => ({ id: call.id, name: call.name, args: JSON.stringify(call.args), index, type: "tool_call_chunk" }));
      const chunk = new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ content: "", tool_call_chunks: chunks }) });
      yield chunk;
      await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, { chunk });
      return;
    }
    for (const piece of response.pieces) {
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

const tools = TOOL_NAMES.map((name) => tool(async () => executeTool(), { name, description: `tool ${name}`, schema: { type: "object", properties: { n: { type: "number" } } } }));
const llm = new ScriptedChatModel({});
const graph = createReactAgent({ llm, tools });
const saver = new MemorySaver();
const sessions = createReactAgent({ llm, tools, checkpointSaver: saver });
let thread = 0;

async function streamed(target, config) {
  const stream = await target.stream({ messages: [{ role: "user", content: "go" }] }, { ...config, streamMode: "messages", recursionLimit: 50 });
  for await (const [chunk] of stream) if (chunk instanceof AIMessageChunk && typeof chunk.content === "string" && chunk.content.length > 0) counters.deltas++;
}
/** A conversation on a thread of its own, deleted afterwards (as a session is closed). */
async function inThread(body) {
  const thread_id = `t${thread++}`;
  await body({ configurable: { thread_id } });
  await saver.deleteThread(thread_id);
}
const input = () => ({ messages: [{ role: "user", content: "go" }] });

export const columns = [
  { column: "LangGraph invoke", kind: "loop", streams: false, run: () => graph.invoke(input(), { recursionLimit: 50 }) },
  { column: "LangGraph stream", kind: "loop", streams: true, run: () => streamed(graph, {}) },
  { column: "LangGraph thread", kind: "session", streams: false, run: () => inThread((config) => sessions.invoke(input(), { ...config, recursionLimit: 50 })) },
  { column: "LangGraph thread (stream)", kind: "session", streams: true, run: () => inThread((config) => streamed(sessions, config)) },
];
