// pi-agent-core 1.6 and this package share one API: `runAgentLoop` and `Agent` over a `StreamFn`.
import { counters, executeTool, nextResponse, TOOL_NAMES } from "../script.js";

const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
export const model = {
  id: "bench", name: "bench", api: "bench", provider: "bench", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 1e5,
};

/** A provider's stream: the live partial grows in place, one event per change, then `done`. */
function scriptedStream() {
  const response = nextResponse();
  const partial = { role: "assistant", content: [], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: response.calls ? "toolUse" : "stop", timestamp: 0 };
  return {
    async *[Symbol.asyncIterator]() {
      yield { type: "start", partial };
      if (response.calls) {
        for (const call of response.calls) {
          const block = { type: "toolCall", id: call.id, name: call.name, arguments: call.args };
          const index = partial.content.push(block) - 1;
          yield { type: "toolcall_start", contentIndex: index, partial };
          yield { type: "toolcall_end", contentIndex: index, toolCall: block, partial };
        }
      } else {
        const block = { type: "text", text: "" };
        partial.content.push(block);
        yield { type: "text_start", contentIndex: 0, partial };
        for (const piece of response.pieces) {
          block.text += piece;
          yield { type: "text_delta", contentIndex: 0, delta: piece, partial };
        }
        yield { type: "text_end", contentIndex: 0, content: block.text, partial };
      }
      yield { type: "done", reason: partial.stopReason, message: { ...partial, content: partial.content.slice() } };
    },
    result: async () => partial,
  };
}
const streamFn = () => scriptedStream();

const tools = TOOL_NAMES.map((name) => ({
  name, label: name, description: `tool ${name}`,
  parameters: { type: "object", properties: { n: { type: "number" } } },
  execute: async () => ({ content: [{ type: "text", text: executeTool() }], details: {} }),
}));
const countDelta = (event) => {
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") counters.deltas++;
};
const convertToLlm = (messages) => messages;

/** Columns for one implementation of the pi API. */
export function piLike(label, { runAgentLoop, Agent }) {
  return [
    {
      column: `${label} loop`, kind: "loop", streams: true,
      run: () => runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools }, { model, convertToLlm }, countDelta, undefined, streamFn),
    },
    {
      column: `${label} Agent`, kind: "session", streams: true,
      run: async () => {
        const agent = new Agent({ initialState: { model, tools }, streamFn });
        agent.subscribe(countDelta);
        await agent.prompt("go");
      },
    },
  ];
}
