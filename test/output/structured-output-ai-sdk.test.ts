/**
 * SPEC R100 through the AI SDK adapter (`fromAiSdkModel`) on an in-memory v4 language model: the
 * final-answer tool reaches the provider as a function tool whose input schema is the output
 * schema, argument text that is not JSON is an invalid answer (R21's `Invalid arguments`), and the
 * valid answer that follows ends the run with its value.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { fromAiSdkModel, type AiSdkLanguageModel } from "../../src/providers/ai-sdk/index.js";
import { runAgentLoop, type AgentEvent } from "../../src/index.js";
import { user } from "../loop/helpers.js";

const usage = { inputTokens: { total: 3, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 2, text: undefined, reasoning: undefined } };
const answer = (id: string, input: string): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "tool-input-start", id, toolName: "final_answer" },
  { type: "tool-input-delta", id, delta: input },
  { type: "tool-input-end", id },
  { type: "tool-call", toolCallId: id, toolName: "final_answer", input },
  { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
];

describe("R100: structured output through an AI SDK model", () => {
  it("R100: the answer tool reaches the provider; unparsable then valid arguments end the run with the value", async () => {
    const calls: LanguageModelV4CallOptions[] = [];
    const replies = [answer("c1", '{"verdict": "yes"'), answer("c2", '{"verdict":"yes","confidence":0.9}')];
    const model: AiSdkLanguageModel = {
      specificationVersion: "v4",
      provider: "memory.chat",
      modelId: "m1",
      doStream: async (options) => {
        const parts = replies[calls.push(options) - 1]!;
        return { stream: new ReadableStream({ start: (controller) => (parts.forEach((part) => controller.enqueue(part)), controller.close()) }) };
      },
    };
    const streamFn = fromAiSdkModel(model, { facts: { contextWindow: 1000, maxTokens: 100 } });
    const events: AgentEvent[] = [];
    const schema = z.object({ verdict: z.enum(["yes", "no"]), confidence: z.number() });
    await runAgentLoop([user("Is it?")], { messages: [], tools: [] }, { model: streamFn.model, convertToLlm: (m) => m as never, output: { schema } }, (e) => void events.push(e), undefined, streamFn);

    expect(calls[0].tools).toEqual([
      { type: "function", name: "final_answer", description: expect.stringContaining("final answer"), inputSchema: expect.objectContaining({ type: "object", required: ["verdict", "confidence"] }) },
    ]);
    const results = events.flatMap((e) => (e.type === "tool_execution_end" ? [[e.toolName, e.isError, (e.result as { content: { text: string }[] }).content[0].text.split("\n")[0]]] : []));
    expect(results).toEqual([
      ["final_answer", true, expect.stringMatching(/^Invalid arguments for tool "final_answer": /)],
      ["final_answer", false, "Final answer accepted."],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "completed", output: { verdict: "yes", confidence: 0.9 } });
    // The model's second request carried the first answer's error as that call's tool result.
    expect(JSON.stringify(calls[1].prompt)).toContain("Invalid arguments for tool");
  });
});
