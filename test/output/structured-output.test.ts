/**
 * SPEC R100: a run asks for a structured final answer. The model answers by calling the
 * final-answer tool; the run ends when its arguments validate (`agent_end.output`, the run actor's
 * output); an invalid answer goes back as R21's explained validation error; a response without an
 * answer gets a reminder; after `maxAttempts` the run ends with `output_invalid`.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AssistantMessage, StopReason, StreamFn } from "../../src/index.js";
import { AgentInputError, agentLoop, PushAssistantStream, runAgentLoop, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { assistantMessage, baseConfig, describe as describeMessage, ok, textOf, tool, user, withoutUpdates } from "../loop/helpers.js";
import { manualClock, ticks } from "../support/manual-clock.js";

const answerSchema = z.object({ city: z.string(), population: z.number().int() });

/** Events compactly: what each says that matters here (the answer tool's results with their text). */
function projected(events: AgentEvent[]): string[] {
  return withoutUpdates(events).map((event) => {
    switch (event.type) {
      case "message_start":
        return `message_start:${(event.message as { role: string }).role}`;
      case "message_end": {
        const m = event.message as { role: string; toolsAdded?: { name: string }[] };
        if (m.role === "system") return `message_end:system +${(m.toolsAdded ?? []).map((t) => t.name).join(",")}`;
        if (m.role === "toolResult") return `message_end:${describeMessage(event.message)}`;
        if (m.role === "user") return `message_end:user(${textOf(event.message).slice(0, 40)})`;
        return `message_end:${describeMessage(event.message)}`;
      }
      case "turn_end":
        return `turn_end+${event.toolResults.length}`;
      case "tool_execution_start":
        return `tool_start:${event.toolName}`;
      case "tool_execution_end":
        return `tool_end:${event.toolName}${event.isError ? "!" : ""}`;
      case "agent_end":
        return `agent_end:${event.reason}:${JSON.stringify(event.output)}`;
      default:
        return event.type;
    }
  });
}

async function run(config: Partial<AgentLoopConfig>, script: Parameters<typeof scriptedStreamFn>[0], tools = [tool("lookup", async () => ok("Paris has 2.1M people"))]) {
  const events: AgentEvent[] = [];
  const streamFn = scriptedStreamFn(script);
  const messages = await runAgentLoop([user("Largest city of France?")], { messages: [], tools }, baseConfig(config), (event) => void events.push(event), undefined, streamFn);
  return { events, messages, streamFn, end: events.at(-1) as Extract<AgentEvent, { type: "agent_end" }> };
}

const resultText = (messages: AgentMessage[], name = "final_answer") =>
  messages.filter((m) => (m as { role: string; toolName?: string }).role === "toolResult" && (m as { toolName: string }).toolName === name).map(textOf);

describe("R100: structured final output", () => {
  it("R100: a valid first answer ends the run with its value (agent_end.output, reason completed)", async () => {
    const { events, messages, end } = await run({ output: { schema: answerSchema } }, [
      { content: [text("Answering."), toolCall("final_answer", { city: "Paris", population: 2100000 })] },
    ]);
    expect(projected(events)).toEqual([
      "agent_start",
      "turn_start",
      // R30: the answer tool is declared like any tool.
      "message_start:system",
      "message_end:system +lookup,final_answer",
      "message_start:user",
      "message_end:user(Largest city of France?)",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:final_answer",
      "tool_end:final_answer",
      "message_start:toolResult",
      "message_end:toolResult(final_answer)",
      "turn_end+1",
      'agent_end:completed:{"city":"Paris","population":2100000}',
    ]);
    expect(end.output).toEqual({ city: "Paris", population: 2100000 });
    expect(resultText(messages)).toEqual(["Final answer accepted."]);
  });

  it("R100: an invalid answer goes back as R21's explained error; the next valid one ends the run", async () => {
    const { events, messages, streamFn } = await run({ output: { schema: answerSchema } }, [
      { content: [toolCall("final_answer", { city: "Paris", population: "many" })] },
      { content: [toolCall("final_answer", { city: "Paris", population: "2100000" })] },
    ]);
    expect(projected(events).slice(6)).toEqual([
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:final_answer",
      "tool_end:final_answer!",
      "message_start:toolResult",
      "message_end:toolResult(final_answer!)",
      "turn_end+1",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:final_answer",
      "tool_end:final_answer",
      "message_start:toolResult",
      "message_end:toolResult(final_answer)",
      "turn_end+1",
      // R21's coercion: the numeric string became a number.
      'agent_end:completed:{"city":"Paris","population":2100000}',
    ]);
    expect(resultText(messages)[0]).toBe(
      'Validation failed for tool "final_answer":\n  - population: expected number, got string\n\nReceived arguments:\n{\n  "city": "Paris",\n  "population": "many"\n}',
    );
    // The model saw the error as the answer call's result.
    const second = streamFn.calls[1].context.messages.at(-1) as { role: string; isError: boolean };
    expect([second.role, second.isError]).toEqual(["toolResult", true]);
  });

  it("R100: after maxAttempts invalid answers the run ends with output_invalid and no output", async () => {
    const { events, messages } = await run({ output: { schema: answerSchema, maxAttempts: 2 } }, [
      { content: [toolCall("final_answer", { city: 1 })] },
      { content: [toolCall("final_answer", { city: "Paris" })] },
      { content: [text("never asked")] },
    ]);
    expect(projected(events).filter((e) => e.startsWith("tool_end") || e.startsWith("turn_") || e.startsWith("agent_end"))).toEqual([
      "turn_start",
      "tool_end:final_answer!",
      "turn_end+1",
      "turn_start",
      "tool_end:final_answer!",
      "turn_end+1",
      "agent_end:output_invalid:undefined",
    ]);
    expect(messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  });

  it("R100: a response that ends without the answer counts as an attempt; a reminder asks for it", async () => {
    const { events } = await run({ output: { schema: answerSchema, maxAttempts: 2 } }, [
      { content: [text("Paris, about 2 million.")] },
      { content: [toolCall("final_answer", { city: "Paris", population: 2100000 })] },
    ]);
    expect(projected(events).slice(6)).toEqual([
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end+0",
      "turn_start",
      "message_start:user",
      "message_end:user(Give your final answer now by calling th)",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:final_answer",
      "tool_end:final_answer",
      "message_start:toolResult",
      "message_end:toolResult(final_answer)",
      "turn_end+1",
      'agent_end:completed:{"city":"Paris","population":2100000}',
    ]);
  });

  it("R100: text answers only: the run ends with output_invalid after maxAttempts", async () => {
    const { events } = await run({ output: { schema: answerSchema, maxAttempts: 2 } }, [{ content: [text("Paris.")] }, { content: [text("Paris!")] }]);
    expect(projected(events).filter((e) => e.startsWith("turn_") || e.startsWith("agent_end") || e.startsWith("message_end:user"))).toEqual([
      "turn_start",
      "message_end:user(Largest city of France?)",
      "turn_end+0",
      "turn_start",
      "message_end:user(Give your final answer now by calling th)",
      "turn_end+0",
      "agent_end:output_invalid:undefined",
    ]);
  });

  it("R100: parallel tools in the answer's turn run; their results are appended in source order, then the run ends", async () => {
    const { events, messages } = await run({ output: { schema: answerSchema } }, [
      { content: [toolCall("lookup", {}), toolCall("final_answer", { city: "Paris", population: 2100000 }), toolCall("lookup", {})] },
    ]);
    expect(projected(events).slice(6)).toEqual([
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:lookup",
      "tool_start:final_answer",
      "tool_start:lookup",
      expect.stringMatching(/^tool_end:/),
      expect.stringMatching(/^tool_end:/),
      expect.stringMatching(/^tool_end:/),
      "message_start:toolResult",
      "message_end:toolResult(lookup)",
      "message_start:toolResult",
      "message_end:toolResult(final_answer)",
      "message_start:toolResult",
      "message_end:toolResult(lookup)",
      "turn_end+3",
      'agent_end:completed:{"city":"Paris","population":2100000}',
    ]);
    expect(messages.at(-1)).toMatchObject({ role: "toolResult", toolName: "lookup" });
  });

  it("R100: tools called before the answer: the run goes on until the answer validates", async () => {
    const { events } = await run({ output: { schema: answerSchema } }, [
      { content: [toolCall("lookup", {}), toolCall("lookup", {})] },
      { content: [toolCall("final_answer", { city: "Paris", population: 2100000 })] },
    ]);
    expect(projected(events).filter((e) => e.startsWith("tool_end") || e.startsWith("turn_") || e.startsWith("agent_end"))).toEqual([
      "turn_start",
      "tool_end:lookup",
      "tool_end:lookup",
      "turn_end+2",
      "turn_start",
      "tool_end:final_answer",
      "turn_end+1",
      'agent_end:completed:{"city":"Paris","population":2100000}',
    ]);
  });

  it("R100: a JSON Schema works too, and the run actor's output carries the value (agentLoop resolves the messages)", async () => {
    const schema = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
    const stream = agentLoop([user("ok?")], { messages: [], tools: [] }, baseConfig({ output: { schema, toolName: "answer" } }), undefined, scriptedStreamFn([
      { content: [toolCall("answer", { ok: "true" })] },
    ]));
    const messages = await stream.result();
    expect(Array.isArray(messages)).toBe(true);
    expect((messages as { output?: unknown }).output).toEqual({ ok: true });
  });

  it("R100, R70, R60: with streaming tools and retries on, a retried request's answer ends the run the same way", async () => {
    const safeLookup = tool("lookup", async () => ok("2.1M"), { isConcurrencySafe: () => true });
    const { events } = await run(
      { output: { schema: answerSchema }, streamingToolExecution: true, retry: { baseDelayMs: 0, maxDelayMs: 0 } },
      [
        { setupError: "Anthropic API error 529 overloaded_error: Overloaded" },
        { content: [toolCall("lookup", {}), toolCall("final_answer", { city: "Paris", population: 2100000 })] },
      ],
      [safeLookup],
    );
    expect(projected(events).filter((e) => /^(tool_|turn_|agent_end)/.test(e))).toEqual([
      "turn_start",
      // R70: the lookup starts while the response streams; the answer tool is not concurrency-safe, so it runs alone after it.
      "tool_start:lookup",
      "tool_end:lookup",
      "tool_start:final_answer",
      "tool_end:final_answer",
      "turn_end+2",
      'agent_end:completed:{"city":"Paris","population":2100000}',
    ]);
    expect(events.filter((e) => e.type === "message_end" && e.message.role === "assistant")).toHaveLength(1);
  });

  it("R100: settings no run could use are a typed error at the call", async () => {
    const call = (output: unknown) => agentLoop([user("x")], { messages: [], tools: [] }, baseConfig({ output: output as never }), undefined, scriptedStreamFn([]));
    expect(() => call({ schema: z.string() })).toThrow(AgentInputError);
    expect(() => call({ schema: answerSchema, maxAttempts: 0 })).toThrow(/maxAttempts must be a whole number/);
    expect(() => agentLoop([user("x")], { messages: [], tools: [tool("final_answer")] }, baseConfig({ output: { schema: answerSchema } }), undefined, scriptedStreamFn([]))).toThrow(
      /taken by one of the tools/,
    );
  });

  it("R100: the answer tool's schema never reaches the stream options (a loop setting)", async () => {
    const { streamFn } = await run({ output: { schema: answerSchema } }, [{ content: [toolCall("final_answer", { city: "Paris", population: 1 })] }]);
    expect(Object.keys(streamFn.calls[0].options)).not.toContain("output");
  });
});

/**
 * A model that reports an answer while it streams and ends 100 ms later (on the run's clock) with
 * the final message `final`, then answers `{Lyon, 500000}` on the next request. Runs in streaming
 * mode, moving the clock once the run is idle, so the first answer has settled before its response ends.
 */
async function answerThenEnd(final: { stopReason: StopReason; content: AssistantMessage["content"] }, streaming: boolean) {
  const { clock, advance } = manualClock(0);
  const message = (content: AssistantMessage["content"], stopReason: StopReason = "stop"): AssistantMessage => ({ ...assistantMessage(content, stopReason), timestamp: clock.now() });
  const answer = (id: string, city: string) => ({ type: "toolCall" as const, id, name: "final_answer", arguments: { city, population: 500000 } });
  let request = 0;
  const streamFn: StreamFn = () => {
    const stream = new PushAssistantStream();
    if (request++ === 0) {
      const call = answer("first", "Paris");
      stream.push({ type: "start", partial: message([]) });
      stream.push({ type: "toolcall_start", contentIndex: 0, partial: message([{ ...call, arguments: {} }]) });
      stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: message([call]) });
      clock.setTimer(100, () => stream.push({ type: "done", reason: final.stopReason as "stop", message: message(final.content, final.stopReason) }));
    } else stream.push({ type: "done", reason: "toolUse", message: message([answer("second", "Lyon")], "toolUse") });
    return stream;
  };
  const events: AgentEvent[] = [];
  let done = false;
  const run = runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig({ output: { schema: answerSchema }, streamingToolExecution: streaming }), (event) => void events.push(event), undefined, streamFn, {
    clock,
  }).finally(() => (done = true));
  for (let guard = 0; !done && guard < 100; guard++) {
    await ticks(3);
    if (!done) advance(100);
  }
  const messages = await run;
  const results = messages.filter((m) => m.role === "toolResult").map((m) => `${(m as { toolCallId: string }).toolCallId}:${textOf(m).slice(0, 40)}`);
  const ends = events.filter((e) => e.type === "tool_execution_end").map((e) => `${e.toolCallId}:${textOf({ role: "toolResult", content: e.result.content } as never).slice(0, 40)}`);
  return { end: events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>, results, ends, requests: request };
}

describe("R100 with streaming tools (R70, R72, R28): the answer is the final message's", () => {
  it("R100, R70: an answer reported while streaming but dropped by the final message is not the run's output; the run asks again, as without streaming", async () => {
    for (const streaming of [false, true]) {
      const { end, results, requests } = await answerThenEnd({ stopReason: "stop", content: [{ type: "text", text: "Actually, never mind." }] }, streaming);
      expect({ streaming, output: end.output, reason: end.reason, requests, results }).toEqual({
        streaming,
        output: { city: "Lyon", population: 500000 },
        reason: "completed",
        requests: 2,
        results: ["second:Final answer accepted."],
      });
    }
  });

  it("R100, R70: an answer reported while streaming whose place the final message gives to another call is not the run's output", async () => {
    const { end, requests } = await answerThenEnd({ stopReason: "toolUse", content: [{ type: "toolCall", id: "other", name: "lookup", arguments: {} }] }, true);
    expect({ output: end.output, requests }).toEqual({ output: { city: "Lyon", population: 500000 }, requests: 2 });
  });

  it("R100, R72, R28: an answer in a response cut at the output limit is not executed and the model is asked again, in both modes alike", async () => {
    const runs = [];
    for (const streaming of [false, true]) {
      const { end, results, ends, requests } = await answerThenEnd({ stopReason: "length", content: [{ type: "toolCall", id: "first", name: "final_answer", arguments: { city: "Paris", population: 500000 } }] }, streaming);
      runs.push({ output: end.output, reason: end.reason, requests, results, ends });
    }
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[0]).toMatchObject({ output: { city: "Lyon", population: 500000 }, requests: 2 });
    expect(runs[0].results[0]).toMatch(/^first:Tool call "final_answer" was not/);
  });
});
