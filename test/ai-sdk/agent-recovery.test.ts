/**
 * The loop over AI SDK models on their real wires (local fixture server): an Agent's multi-turn
 * tool session with parallel calls, R60 retries (withheld failures, the server's requested wait
 * honoured, every attempt one request: only the loop retries) and R62 compaction, for the OpenAI
 * Responses, OpenAI Chat Completions and Gemini wires.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Agent, runAgentLoop, summarizingCompactor, type AgentLoopConfig, type AgentMessage, type AgentTool, type AnyAgentEvent, type AssistantMessage, type Message } from "../../src/index.js";
import { SUMMARY_HEADER } from "../../src/recovery/index.js";
import { fromAiSdkModel } from "../../src/providers/ai-sdk/index.js";
import { sseFrames, startWireServer, type WireServer } from "../support/wire-server.js";
import { recordingClock, type RecordingClock, type ManualTimer } from "../support/recording-clock.js";
import { WIRE_API_KEY, WIRES, type Wire } from "./wires.js";

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterEach(() => server.clear());
afterAll(() => server.close());

const user = (content: string, timestamp = 1): AgentMessage => ({ role: "user", content, timestamp });
const runtimeTypes = new Set(["retry_scheduled", "message_discarded", "output_limit_escalated", "output_limit_recovery", "transcript_replaced"]);
const piEvents = (events: readonly AnyAgentEvent[]) => events.filter((event) => !runtimeTypes.has(event.type));
function detailed(event: AnyAgentEvent): string {
  if (event.type === "message_update") return `message_update:${event.assistantMessageEvent.type}`;
  if (event.type === "message_start" || event.type === "message_end") return `${event.type}:${(event.message as { role: string }).role}`;
  return event.type;
}

async function play(
  wire: Wire,
  args: { config?: Partial<AgentLoopConfig>; clock: RecordingClock; history?: AgentMessage[]; prompt?: string; onTimer?: (timer: ManualTimer) => void },
) {
  const events: AnyAgentEvent[] = [];
  const streamFn = fromAiSdkModel(wire.model(server.url));
  const config: AgentLoopConfig = {
    model: streamFn.model,
    convertToLlm: (messages) => messages as Message[],
    onRuntimeEvent: (event) => void events.push(event),
    ...args.config,
  };
  let settled = false;
  const run = runAgentLoop([user(args.prompt ?? "Hello")], { messages: args.history ?? [], tools: [] }, config, (event) => void events.push(event), undefined, streamFn, {
    clock: args.clock.clock,
    random: () => 0.5,
  }).finally(() => (settled = true));
  const ended = run.then(() => null);
  for (;;) {
    const timer = await Promise.race([args.clock.nextTimer(), ended]);
    if (timer === null || settled) break;
    if (!args.onTimer) throw new Error(`the run set an unexpected timer of ${timer.ms} ms`);
    args.onTimer(timer);
  }
  return { events, messages: await run };
}

describe.each(WIRES.filter((wire) => wire.name !== "openai-chat").map((wire) => [wire.name, wire] as const))("R70 over the AI SDK wire %s", (_name, wire) => {
  // (The Chat Completions package closes its calls only at the end of the stream, so there R70 has
  // nothing to start early: the providers guide's table says so.)
  it("R70: a call the provider closes while the response still streams starts at once: tool_execution_start before the assistant's message_end", async () => {
    const frames = wire.toolCalls([{ id: "call_a", name: "read", chunks: ['{"path":"a.txt"}'] }], undefined, "Reading.");
    // Slow writes keep the response streaming after the call closed: on Gemini, text chunks follow
    // the call; on Responses, the call's output_item.done comes well before response.completed.
    let body = frames;
    if (wire.name === "google") {
      const call = structuredClone(frames[1]!) as { data: { candidates: { finishReason?: string }[]; usageMetadata?: unknown } };
      delete call.data.candidates[0]!.finishReason;
      delete call.data.usageMetadata;
      body = [frames[0]!, call, ...wire.text(Array.from({ length: 12 }, (_, i) => `more ${i} `))];
    }
    server.script(sseFrames(body, { chunkDelayMs: 2 }), sseFrames(wire.text(["Done."])));
    const streamFn = fromAiSdkModel(wire.model(server.url));
    const order: string[] = [];
    const read: AgentTool = {
      name: "read",
      label: "read",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      isConcurrencySafe: () => true,
      execute: async (_id, params: { path: string }) => ({ content: [{ type: "text", text: `contents of ${params.path}` }], details: {} }),
    };
    await runAgentLoop(
      [user("read a.txt")],
      { messages: [], tools: [read] },
      { model: streamFn.model, convertToLlm: (messages) => messages as Message[], streamingToolExecution: true },
      (event) => {
        if (event.type === "tool_execution_start" || event.type === "tool_execution_end") order.push(event.type);
        if (event.type === "message_end" && (event.message as { role: string }).role === "assistant") order.push("message_end:assistant");
      },
      undefined,
      streamFn,
    );
    // Without R70 the tool would start only after the assistant's message_end.
    // (The second message_end is the final answer's.)
    expect(order).toEqual(["tool_execution_start", "tool_execution_end", "message_end:assistant", "message_end:assistant"]);
    expect(server.requests).toHaveLength(2);
  });
});

describe.each(WIRES.map((wire) => [wire.name, wire] as const))("the loop over the AI SDK wire %s", (_name, wire) => {
  it("an Agent runs a two-turn tool session with parallel calls; the second request carries the calls and both results", async () => {
    const calls = [
      { id: "call_a", name: "read", chunks: ['{"path":', '"a.txt"}'] },
      { id: "call_b", name: "stat", chunks: ['{"pa', 'th":"b.txt"}'] },
    ];
    server.script(sseFrames(wire.toolCalls(calls, { input: 100, output: 40 }, "Reading both.")), sseFrames(wire.text(["Both ", "exist."], { input: 180, output: 8 })));
    const tool = (name: string, reply: string): AgentTool => ({
      name,
      label: name,
      description: `The ${name} tool`,
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      execute: async (_id, params: { path: string }) => ({ content: [{ type: "text", text: `${reply} ${params.path}` }], details: {} }),
    });
    const streamFn = fromAiSdkModel(wire.model(server.url));
    const agent = new Agent({
      streamFn,
      initialState: { model: streamFn.model, systemPrompt: "You are terse.", tools: [tool("read", "contents of"), tool("stat", "size of")] },
    });
    const seen: string[] = [];
    agent.subscribe((event) => {
      if (event.type === "tool_execution_start" || event.type === "tool_execution_end") seen.push(`${event.type}:${event.toolName}`);
    });
    await agent.prompt("Check a.txt and b.txt");

    expect(seen).toEqual(["tool_execution_start:read", "tool_execution_start:stat", "tool_execution_end:read", "tool_execution_end:stat"]);
    const roles = agent.state.messages.map((m) => (m as { role: string }).role).filter((role) => role !== "system");
    expect(roles).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
    const final = agent.state.messages.at(-1) as AssistantMessage;
    expect(final).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Both exist." }], usage: { input: 180, output: 8 } });
    const first = agent.state.messages.find((m) => (m as AssistantMessage).role === "assistant") as AssistantMessage;
    expect(first.usage.cost.total).toBeGreaterThan(0);

    expect(server.requests).toHaveLength(2);
    const second = server.requests[1].rawBody;
    const ids = wire.name === "google" ? [] : ["call_a", "call_b"];
    for (const needle of ["You are terse.", "Check a.txt and b.txt", "contents of a.txt", "size of b.txt", ...ids]) expect(second).toContain(needle);
    expect(JSON.stringify(agent.state)).not.toContain(WIRE_API_KEY);
    expect(server.requests.every((request) => !request.rawBody.includes(WIRE_API_KEY))).toBe(true);
  });

  it("R60: overloaded, then a 429 asking for 2 s, then the answer: two retry_scheduled, the wait honoured, three requests, pi's events a clean run's", async () => {
    server.script(wire.overloaded(), wire.rateLimited(2), sseFrames(wire.text(["Done."])));
    const clock = recordingClock();
    const { events, messages } = await play(wire, {
      config: { retry: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 } },
      clock,
      onTimer: (timer) => clock.advance(timer.ms),
    });

    const scheduled = events.filter((event) => event.type === "retry_scheduled");
    expect(scheduled.map((event) => [event.attempt, event.kind])).toEqual([
      [2, "overloaded"],
      [3, "rate_limited"],
    ]);
    expect(clock.timers.map((timer) => timer.fired)).toEqual([true, true]);
    expect(clock.timers[1].ms).toBeGreaterThanOrEqual(2_000);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2].rawBody).toEqual(server.requests[0].rawBody);
    expect(piEvents(events).map(detailed)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_end",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    expect((messages.at(-1) as AssistantMessage).content).toEqual([expect.objectContaining({ type: "text", text: "Done." })]);
    // Timings left out: a duration such as 22.65694299 would "contain" 429.
    const piText = JSON.stringify(piEvents(events), (key, value) => (key === "durationMs" || key === "timestamp" ? undefined : value));
    for (const needle of ["429", "verloaded", "errorMessage", WIRE_API_KEY]) expect(piText).not.toContain(needle);
  });

  it("R62: context too long compacts through the same model (summarizingCompactor), announces transcript_replaced, and the retried request carries the summary", async () => {
    const history: AgentMessage[] = [
      user("What is the capital of France?", 1),
      {
        role: "assistant",
        content: [{ type: "text", text: "Paris." }],
        api: "other",
        provider: "other",
        model: "other",
        usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 12, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: 2,
      },
    ];
    server.script(
      wire.contextTooLong(),
      sseFrames(wire.text(["The user asked for the capital of France; it is Paris."])),
      sseFrames(wire.text(["Lyon is second."])),
    );
    const { events, messages } = await play(wire, {
      config: { retry: {}, compact: { compactor: summarizingCompactor({ keepTurns: 1 }) } },
      clock: recordingClock(),
      history,
      prompt: "And the second largest city?",
    });

    expect(events.map(detailed)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "transcript_replaced",
      "message_start:assistant",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_end",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const summaryText = `${SUMMARY_HEADER}\n\nThe user asked for the capital of France; it is Paris.`;
    const replaced = events.find((event) => event.type === "transcript_replaced")!;
    expect(replaced.messages).toEqual([{ role: "user", content: summaryText, timestamp: 2 }, user("And the second largest city?")]);
    expect((messages.at(-1) as AssistantMessage).content).toEqual([expect.objectContaining({ type: "text", text: "Lyon is second." })]);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0].rawBody).toContain("What is the capital of France?");
    expect(server.requests[2].rawBody).toContain("The user asked for the capital of France; it is Paris.");
    expect(server.requests[2].rawBody).not.toContain("What is the capital of France?");
    expect(JSON.stringify(piEvents(events))).not.toMatch(/maximum context length|input token count/);
  });
});
