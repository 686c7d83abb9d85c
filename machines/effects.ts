/**
 * The effect protocol between the machines and the run's effect worker.
 *
 * Every step that awaits app code (a hook, `convertToLlm`, the stream function, a tool's
 * `execute`) is a state that, on entry, sends one `effect.run` request to the run's single
 * `effects` actor (invoked at the root of the run machine) and waits for its reply. One
 * persistent worker costs far less than an invoked promise actor per step (PERF-NOTES), and the
 * inspector still shows every request and reply as events between the state's actor and the
 * worker. Replies are typed per job: `done.<job>` with the job's output, or `failed` with the
 * thrown error.
 */
import type { ActorRefLike } from "xstate";
import type {
  AfterToolCallResult,
  AgentMessage,
  AgentToolResult,
  AssistantMessage,
  Message,
  Model,
  ThinkingLevel,
  ToolCall,
  ToolResultMessage,
} from "../src/types.js";
import type { ToolSetData } from "../src/loop/run-context.js";

/** What a turn hook sees (plain data; the runtime adds the executable tools). */
export interface TurnSnapshot {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  messages: AgentMessage[];
  newMessages: AgentMessage[];
}

/** A hook's replacement state, as plain data (R4a, R4c). */
export interface StateUpdate {
  /** Replacement transcript (`context.messages`). */
  messages?: AgentMessage[];
  /** Replacement tool set (`context.tools`). */
  toolSet?: ToolSetData;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}

export interface TurnUpdate extends StateUpdate {
  /** Messages to inject before the next request (R4b). */
  prepared?: AgentMessage[];
}

/** What `beforeToolCall` decided, normalized (R21). */
export type GateDecision = { allowed: true } | { allowed: false; result: AgentToolResult };

/** What `execute` produced (R22); `executed: false` when the abort came first (R29). */
export interface ExecutionOutcome {
  executed: boolean;
  result: AgentToolResult;
  isError: boolean;
  durationMs?: number;
}

/** Each job: its input and its output. */
export interface EffectJobs {
  getSteeringMessages: { input: null; output: AgentMessage[] };
  getFollowUpMessages: { input: null; output: AgentMessage[] };
  prepareNextTurn: { input: TurnSnapshot; output: TurnUpdate };
  prepareRequest: { input: { messages: AgentMessage[]; model: Model; thinkingLevel: ThinkingLevel }; output: StateUpdate };
  transformContext: { input: { messages: AgentMessage[] }; output: AgentMessage[] };
  /** `convertToLlm` (R40); the machine normalizes its result in the next state. */
  convertToLlm: { input: { messages: AgentMessage[] }; output: Message[] };
  /** Resolves the next request's key into the runtime; the key never enters a machine. */
  resolveApiKey: { input: { provider: string }; output: null };
  /** Calls the stream function; the worker emits the message events itself (R41). */
  streamResponse: { input: { messages: Message[]; model: Model; thinkingLevel: ThinkingLevel }; output: AssistantMessage };
  finishTurn: { input: TurnSnapshot; output: "continue" | "end" | null };
  gateToolCall: { input: { toolCall: ToolCall; args: unknown }; output: GateDecision };
  executeToolCall: { input: { toolCall: ToolCall; args: unknown }; output: ExecutionOutcome };
  finalizeToolCall: {
    input: { toolCall: ToolCall; args: unknown; result: AgentToolResult; isError: boolean };
    output: AfterToolCallResult | undefined;
  };
}

export type EffectName = keyof EffectJobs;

export type EffectJob = { [K in EffectName]: { name: K; input: EffectJobs[K]["input"] } }[EffectName];

/** Sent to the worker. */
export interface EffectRequest {
  type: "effect.run";
  job: EffectJob;
  replyTo: ActorRefLike;
}

/** The worker's reply to a state that ran `job`. */
export type EffectDone = { [K in EffectName]: { type: `done.${K}`; output: EffectJobs[K]["output"] } }[EffectName];
export type EffectFailed = { type: "failed"; job: EffectName; error: unknown };
export type EffectReply = EffectDone | EffectFailed;

/** The reply event type for a job. */
export type DoneEvent<K extends EffectName> = Extract<EffectDone, { type: `done.${K}` }>;

export function effectRequest<K extends EffectName>(name: K, input: EffectJobs[K]["input"], replyTo: ActorRefLike): EffectRequest {
  return { type: "effect.run", job: { name, input } as EffectJob, replyTo };
}
