/**
 * The run machine's data: input, context and the pure helpers its actions use. Everything here is
 * plain, serializable data (no functions, no class instances, no API key), so snapshots persist
 * and the inspector shows them as they are.
 */
import type {
  AgentMessage,
  AgentToolResult,
  AssistantMessage,
  Message,
  Model,
  ThinkingLevel,
  ToolCall,
  ToolExecutionMode,
  ToolResultMessage,
} from "../types.js";
import type { KeyedToolDecl } from "../transcript/index.js";
import { emptyUsage } from "../providers/assistant-stream.js";
import type { ToolCallOutput } from "../../machines/tool-call.machine.js";

/** Which optional hooks the config has: a hook's state is entered only when it is configured. */
export interface HookFlags {
  transformContext: boolean;
  getApiKey: boolean;
  getSteeringMessages: boolean;
  getFollowUpMessages: boolean;
  prepareNextTurn: boolean;
  prepareRequest: boolean;
  finishTurn: boolean;
  beforeToolCall: boolean;
  afterToolCall: boolean;
}

/** The executable tool set as plain data: declarations (R30) and the names that force a sequential batch (R20). */
export interface ToolSetData {
  tools: KeyedToolDecl[];
  sequentialTools: string[];
}

export interface RunInput extends ToolSetData {
  /** `agentLoop` prompts (R1); `null` for `agentLoopContinue` (R2). */
  prompts: AgentMessage[] | null;
  /** A copy of `context.messages`. */
  messages: AgentMessage[];
  model: Model;
  thinkingLevel: ThinkingLevel;
  toolExecution: ToolExecutionMode;
  hooks: HookFlags;
  /** `Agent.continue()` from an assistant tail already drained the steering queue (R52). */
  skipInitialSteeringPoll?: boolean;
}

/** The tool batch of the current turn. */
export interface ToolBatch {
  calls: ToolCall[];
  /** Index of the next call to start (sequential calls, and parallel preflights one by one). */
  cursor: number;
  /** Finalized outcomes by source index (R26: exactly one each). */
  outcomes: (ToolCallOutput | null)[];
}

/** Run-wide settings from the config, fixed for the run. */
export interface RunSettings {
  /** `agentLoop` (R1) or `agentLoopContinue` (R2). */
  mode: "prompt" | "continue";
  toolExecution: ToolExecutionMode;
  hooks: HookFlags;
  skipInitialSteeringPoll: boolean;
}

/** The current turn. */
export interface TurnState {
  /** Between `turn_start` and `turn_end`. */
  open: boolean;
  /** The turn's assistant message. */
  assistant: AssistantMessage | null;
  /** The turn's tool-result messages, in source order. */
  toolResults: ToolResultMessage[];
  batch: ToolBatch | null;
  /** `finishTurn`'s decision (R8, R10). */
  decision: "continue" | "end" | null;
}

/**
 * Kept to few top-level keys on purpose: every `assign` copies the context, and V8 turns an
 * object of ~20 or more keys built that way into a slow dictionary (5 µs per copy instead of 0.2).
 */
export interface RunContext {
  /** The working transcript: `context.messages` of the hooks. */
  messages: AgentMessage[];
  /** What this run added (R12). */
  newMessages: AgentMessage[];
  /** Tools the transcript declares, `[name, declaration key]` in declaration order (R30). */
  declared: [string, string][];
  /** The executable tool set, as plain data. */
  toolSet: ToolSetData;
  model: Model;
  thinkingLevel: ThinkingLevel;
  settings: RunSettings;
  /** Prompts, steering or follow-up messages waiting for injection before the next request. */
  pending: AgentMessage[];
  /** Messages `prepareNextTurn` returned, injected before `pending` (R4). */
  prepared: AgentMessage[];
  turn: TurnState;
  /** The request being built (R40): after `transformContext`, then after `convertToLlm`. */
  request: { messages: AgentMessage[] | null; llmMessages: Message[] | null };
  /** Why the run failed (R56). */
  failure: string | null;
}

export const closedTurn: TurnState = { open: false, assistant: null, toolResults: [], batch: null, decision: null };

export function initialRunContext(input: RunInput): RunContext {
  return {
    messages: input.messages,
    newMessages: [],
    declared: [],
    toolSet: { tools: input.tools, sequentialTools: input.sequentialTools },
    model: input.model,
    thinkingLevel: input.thinkingLevel,
    settings: {
      mode: input.prompts === null ? "continue" : "prompt",
      toolExecution: input.toolExecution,
      hooks: input.hooks,
      skipInitialSteeringPoll: input.skipInitialSteeringPoll ?? false,
    },
    pending: input.prompts ?? [],
    prepared: [],
    turn: closedTurn,
    request: { messages: null, llmMessages: null },
    failure: null,
  };
}

export const toolCallsOf = (message: AssistantMessage): ToolCall[] =>
  message.content.filter((block): block is ToolCall => block.type === "toolCall");

export const isFailedResponse = (message: AssistantMessage | null): boolean =>
  message !== null && (message.stopReason === "error" || message.stopReason === "aborted");

/** R27: a batch whose every finalized result says `terminate` does not itself ask for another request. */
export function batchTerminates(batch: ToolBatch | null): boolean {
  if (batch === null || batch.outcomes.length === 0) return false;
  return batch.outcomes.every((outcome) => outcome?.result.terminate === true);
}

/** R20: sequential when configured, or when any call targets a sequential tool. */
export function runsSequentially(context: RunContext, calls: ToolCall[]): boolean {
  if (context.settings.toolExecution === "sequential") return true;
  return calls.some((call) => context.toolSet.sequentialTools.includes(call.name));
}

/** R56: the assistant message that closes a failed run. */
export function failureMessage(context: RunContext, errorMessage: string): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: context.model.api,
    provider: context.model.provider,
    model: context.model.id,
    usage: emptyUsage(),
    stopReason: "error",
    errorMessage,
    timestamp: Date.now(),
    thinkingLevel: context.thinkingLevel,
  };
}

export type { AgentToolResult };
