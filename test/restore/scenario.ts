/**
 * The restore scenario (SPEC R13): a multi-turn run over the scripted model that visits every
 * state of the run and tool-call machines — parallel and sequential batches, every hook configured,
 * a block, an immediate result and a sub-agent — with no hidden state: the model answers by the
 * number of assistant messages it is shown, and the only state outside the run (the "world": the
 * app's queues, and how often each tool executed) is plain data saved next to each snapshot.
 */
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, Clock, ScriptedResponse } from "../../src/index.js";
import { defaultConvertToLlm, scriptedModel, scriptedStreamFn, systemClock, text, toolCall } from "../../src/index.js";
import type { AgentRunOptions } from "../../src/actors/run-runtime.js";

export interface World {
  steered: boolean;
  followedUp: boolean;
  /** Executions per tool-call id, across the original run and every restore. */
  executions: Record<string, number>;
  /** What a scenario's model already did once (scenario C's failures). */
  flags: string[];
}

export const newWorld = (): World => ({ steered: false, followedUp: false, executions: {}, flags: [] });

/** A clock that reads the same everywhere, so a restored run's records equal the original's. */
export const fixedClock: Clock = { now: () => 1_800_000_000_000, monotonic: () => 0, setTimer: (ms, fire) => systemClock.setTimer(ms, fire) };

const ok = (value: string): AgentToolResult => ({ content: [{ type: "text", text: value }], details: { value } });

/** Responses by the number of assistant messages the request shows (no cursor to lose on restore). */
const responses: ScriptedResponse[] = [
  // Turn 1: a parallel batch: two safe reads, a blocked call and an unknown tool (immediate results).
  { content: [text("Reading."), toolCall("read", { path: "a" }, "c1"), toolCall("lookup", { key: "k" }, "c2"), toolCall("read", { path: "secret" }, "c3"), toolCall("nope", {}, "c4")] },
  // Turn 2: a sequential batch (write is sequential and not replay-safe) and a sub-agent.
  { content: [toolCall("write", { path: "out", text: "x" }, "c5"), toolCall("delegate", { task: "sum" }, "c6")] },
  // Turn 3: after the steering message, an answer; then the follow-up gets one more.
  { content: [text("Done.")] },
  { content: [text("Follow-up answered.")] },
];

export const userMessage = (content: string): AgentMessage => ({ role: "user", content, timestamp: fixedClock.now() });

export function scenarioOptions(world: World): AgentRunOptions {
  const counted = (id: string) => (world.executions[id] = (world.executions[id] ?? 0) + 1);
  const tools: AgentTool[] = [
    {
      name: "read",
      label: "read",
      description: "read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      replay: "safe",
      execute: async (id, params: { path: string }) => (counted(id), ok(`contents of ${params.path}`)),
    },
    {
      name: "lookup",
      label: "lookup",
      description: "look a key up",
      parameters: { type: "object", properties: { key: { type: "string" } } },
      replay: "safe",
      prepareArguments: (args) => args as { key: string },
      execute: async (id, params: { key: string }) => (counted(id), ok(`value of ${params.key}`)),
    },
    {
      name: "write",
      label: "write",
      description: "write a file",
      parameters: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } } },
      executionMode: "sequential",
      execute: async (id) => (counted(id), ok("written")),
    },
    {
      name: "delegate",
      label: "delegate",
      description: "ask a sub-agent",
      parameters: { type: "object", properties: { task: { type: "string" } } },
      execute: async (id, params: { task: string }, _signal, _onUpdate, context) => {
        counted(id);
        const added = await context!.runSubAgent(
          { streamFn: scriptedStreamFn([{ content: [text(`sub-agent did ${params.task}`)] }]), config: { model: scriptedModel, convertToLlm: defaultConvertToLlm } },
          { prompts: [userMessage(params.task)] },
        );
        const last = added.at(-1) as { content: { type: string; text?: string }[] };
        return ok(last.content.map((block) => block.text ?? "").join(""));
      },
    },
  ];
  const config: AgentLoopConfig = {
    model: scriptedModel,
    convertToLlm: defaultConvertToLlm,
    transformContext: async (messages) => messages.slice(),
    getApiKey: async () => "test-key",
    prepareRequest: async () => undefined,
    prepareNextTurn: async () => undefined,
    finishTurn: async () => undefined,
    getSteeringMessages: async () => {
      // Once, after the first turn's results are in (the app's queue is durable: part of the world).
      if (world.steered) return [];
      world.steered = true;
      return [userMessage("Also write it out.")];
    },
    getFollowUpMessages: async () => {
      if (world.followedUp) return [];
      world.followedUp = true;
      return [userMessage("One more thing.")];
    },
    beforeToolCall: async ({ toolCall: call }) => (call.arguments.path === "secret" ? { block: true, reason: "no secrets" } : undefined),
    afterToolCall: async ({ result }) => ({ details: { ...(result.details as object), checked: true } }),
  };
  const streamFn = scriptedStreamFn((request) => {
    const answered = request.context.messages.filter((message) => message.role === "assistant").length;
    return responses[Math.min(answered, responses.length - 1)];
  });
  return { streamFn, tools, config, clock: fixedClock };
}

export const scenarioInput = () => ({ prompts: [userMessage("Summarize a and k.")], messages: [] as AgentMessage[] });

/** Events and messages without what legitimately differs between runs (the scripted model reads the real clock). */
export function comparable<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, item) => (key === "durationMs" || key === "timestamp" ? undefined : item))) as T;
}

export type { AgentEvent };
