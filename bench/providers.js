// npm run bench:providers — scenario (b) (one run, 10,000 text deltas) through the provider adapters,
// side by side: what each adapter adds to the loop's own cost. Medians over alternating rounds.
//
//   in memory:  the bench's stream function (bench/scenarios.js) | fromAiSdkModel over an in-memory
//               AI SDK v4 model emitting the same 10,000 text-delta parts
//   over HTTP:  anthropicStreamFn (native, @anthropic-ai/sdk) | fromAiSdkModel(@ai-sdk/openai
//               Responses), each against a local server sending 10,000 deltas in its own wire format
import { createServer } from "node:http";
import { runAgentLoop } from "../dist/index.js";
import { anthropicModel, anthropicStreamFn } from "../dist/anthropic.js";
import { fromAiSdkModel } from "../dist/ai-sdk.js";
import { createOpenAI } from "@ai-sdk/openai";
import { convertToLlm, deltaStream, model, prompt } from "./scenarios.js";
import { median } from "./sample.js";

const DELTAS = 10_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const RUNS = 10;
const sink = () => {};

/** An in-memory AI SDK v4 language model: stream-start, one text of DELTAS deltas, finish. */
const memoryModel = {
  specificationVersion: "v4",
  provider: "bench.memory",
  modelId: "bench",
  supportedUrls: {},
  doGenerate: async () => {
    throw new Error("unused");
  },
  doStream: async () => ({
    stream: new ReadableStream({
      start(controller) {
        controller.enqueue({ type: "stream-start", warnings: [] });
        controller.enqueue({ type: "text-start", id: "t" });
        for (let i = 0; i < DELTAS; i++) controller.enqueue({ type: "text-delta", id: "t", delta: "x" });
        controller.enqueue({ type: "text-end", id: "t" });
        controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 1 }, outputTokens: { total: DELTAS } } });
        controller.close();
      },
    }),
  }),
};
const sse = (event, data) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const anthropicBody = [
  sse("message_start", { message: { id: "m", type: "message", role: "assistant", model: "claude-haiku-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
  sse("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  sse("content_block_delta", { index: 0, delta: { type: "text_delta", text: "x" } }).repeat(DELTAS),
  sse("content_block_stop", { index: 0 }),
  sse("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: DELTAS } }),
  sse("message_stop", {}),
].join("");
let seq = 0;
const responses = (event, data) => sse(event, { sequence_number: seq++, ...data });
const resp = { id: "r", object: "response", created_at: 1, status: "in_progress", model: "gpt-5-mini", output: [] };
const openaiBody = [
  responses("response.created", { response: resp }),
  responses("response.output_item.added", { output_index: 0, item: { id: "msg", type: "message", status: "in_progress", role: "assistant", content: [] } }),
  responses("response.output_text.delta", { item_id: "msg", output_index: 0, content_index: 0, delta: "x", logprobs: [] }).repeat(DELTAS),
  responses("response.output_item.done", { output_index: 0, item: { id: "msg", type: "message", status: "completed", role: "assistant", content: [] } }),
  responses("response.completed", { response: { ...resp, status: "completed", usage: { input_tokens: 1, output_tokens: DELTAS } } }),
].join("");

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(req.url.startsWith("/v1/messages") ? anthropicBody : openaiBody);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const aiMemory = fromAiSdkModel(memoryModel, { facts: { contextWindow: 1e6, maxTokens: 1e5 } });
const haiku = anthropicModel("claude-haiku-4-5");
const native = anthropicStreamFn({ baseURL: base, apiKey: "bench", maxRetries: 0 });
const aiOpenai = fromAiSdkModel(createOpenAI({ baseURL: `${base}/v1`, apiKey: "bench" }).responses("gpt-5-mini"));

const variants = {
  "in memory: the bench's stream (no adapter)": { model, streamFn: () => deltaStream(DELTAS)() },
  "in memory: fromAiSdkModel, v4 model": { model: aiMemory.model, streamFn: aiMemory },
  "HTTP: anthropicStreamFn (native)": { model: haiku, streamFn: native },
  "HTTP: fromAiSdkModel + @ai-sdk/openai Responses": { model: aiOpenai.model, streamFn: aiOpenai },
};

async function runs(variant) {
  for (let i = 0; i < RUNS; i++) {
    const messages = await runAgentLoop(prompt(), { messages: [], tools: [] }, { model: variant.model, convertToLlm }, sink, undefined, variant.streamFn);
    const last = messages.at(-1);
    if (last.stopReason !== "stop" || last.content[0].text.length !== DELTAS) throw new Error(`bad run: ${last.stopReason} ${last.errorMessage ?? ""}`);
  }
}

const names = Object.keys(variants);
for (const name of names) await runs(variants[name]); // warm-up
const times = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of round % 2 === 0 ? names : [...names].reverse()) {
    const start = performance.now();
    await runs(variants[name]);
    times[name].push((performance.now() - start) / RUNS);
  }
}
server.close();
console.log(`(b) 1 run x ${DELTAS.toLocaleString("en")} text deltas, ms per run (median of ${ROUNDS} rounds of ${RUNS} runs), Node ${process.version}`);
for (const name of names) console.log(`  ${name.padEnd(52)} ${median(times[name]).toFixed(2)}`);
