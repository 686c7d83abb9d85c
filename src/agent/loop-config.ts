import type { AgentLoopConfig, AgentMessage, Message, Model, ThinkingLevel, ToolExecutionMode } from "../types.js";
import type { QueueName } from "./queue-batch.js";
import { requestIdentity } from "../identity/index.js";
import { ownQueuePolls } from "../actors/own-queues.js";
import type { AgentHooks, AgentStreamOptions } from "./types.js";

const STREAM_OPTION_KEYS = [
  "sessionId",
  "thinkingBudgets",
  "transport",
  "maxRetryDelayMs",
  "onPayload",
  "onResponse",
  "onProviderStreamEvent",
  "identity",
] as const satisfies readonly (keyof AgentStreamOptions)[];

/** The loop settings an Agent passes on to each run's config when they are set. */
export const LOOP_SETTING_KEYS = [
  "budget",
  "retry",
  "outputLimit",
  "compact",
  "toolTimeoutMs",
  "abortGraceMs",
  "requestLimiter",
  "streamingToolExecution",
  "maxConcurrentTools",
  "output",
] as const satisfies readonly (keyof AgentLoopConfig)[];

const isProviderMessage = (message: AgentMessage): message is Message => {
  const role = (message as { role?: unknown }).role;
  return role === "user" || role === "assistant" || role === "toolResult" || role === "system";
};

/** The reference's default: the four message roles a provider understands; app-defined ones are dropped. */
export function defaultConvertToLlm(messages: AgentMessage[]): Message[] {
  // This runs over the whole transcript for every request (issue 19). Most transcripts hold only
  // provider messages: scanning first and copying with `slice` is about twice as fast as `filter`.
  let i = 0;
  while (i < messages.length && isProviderMessage(messages[i])) i++;
  if (i === messages.length) return messages.slice() as Message[];
  const kept = messages.slice(0, i) as Message[];
  for (i++; i < messages.length; i++) {
    const message = messages[i];
    if (isProviderMessage(message)) kept.push(message);
  }
  return kept;
}

export interface LoopConfigArgs {
  hooks: AgentHooks;
  streamOptions: AgentStreamOptions;
  toolExecution: ToolExecutionMode;
  /** The loop settings the Agent passes through as they are (R60–R67). */
  settings: Pick<
    AgentLoopConfig,
    "budget" | "retry" | "outputLimit" | "compact" | "toolTimeoutMs" | "abortGraceMs" | "requestLimiter" | "streamingToolExecution" | "maxConcurrentTools" | "output"
  >;
  model: Model;
  thinkingLevel: ThinkingLevel;
  /** Takes the next batch of a queue (R53); the run polls it at every drain point. */
  drain: (queue: QueueName) => AgentMessage[];
  /** Whether the follow-up queue is empty (R10: the follow-up poll would take nothing). */
  followUpsEmpty: () => boolean;
  /** Whether the steering queue is empty (R3: a steering poll would take nothing). */
  steeringEmpty: () => boolean;
}

/**
 * One run's `AgentLoopConfig`, from the Agent's hooks as they are when the run starts. Unset
 * hooks stay absent, so the run never enters their states; unset stream options are not sent.
 */
export function loopConfig(args: LoopConfigArgs): AgentLoopConfig {
  const { hooks } = args;
  const config: AgentLoopConfig = {
    model: args.model,
    convertToLlm: hooks.convertToLlm,
    toolExecution: args.toolExecution,
    // R53: the Agent's own queues: a steering poll also says when no follow-up waits (R10).
    ...ownQueuePolls(
      { followUpsEmpty: () => args.followUpsEmpty(), steeringEmpty: () => args.steeringEmpty() },
      async () => args.drain("steering"),
      async () => args.drain("followUp"),
    ),
  };
  if (args.thinkingLevel !== "off") config.reasoning = args.thinkingLevel;
  for (const key of LOOP_SETTING_KEYS) {
    const value = args.settings[key];
    if (value !== undefined) Object.assign(config, { [key]: value });
  }
  if (hooks.transformContext) config.transformContext = hooks.transformContext;
  if (hooks.getApiKey) config.getApiKey = hooks.getApiKey;
  if (hooks.beforeToolCall) config.beforeToolCall = hooks.beforeToolCall;
  if (hooks.afterToolCall) config.afterToolCall = hooks.afterToolCall;
  if (hooks.finishTurn) config.finishTurn = hooks.finishTurn;
  if (hooks.prepareRequest) config.prepareRequest = hooks.prepareRequest;
  // R54: both forms are accepted; the one that sees the turn wins, as in the reference.
  const withContext = hooks.prepareNextTurnWithContext;
  const withSignal = hooks.prepareNextTurn;
  if (withContext) config.prepareNextTurn = (turn, signal) => withContext(turn, signal);
  else if (withSignal) config.prepareNextTurn = (_turn, signal) => withSignal(signal);
  for (const key of STREAM_OPTION_KEYS) {
    const value = args.streamOptions[key];
    if (value !== undefined) Object.assign(config, { [key]: value });
  }
  // As pi's Agent: every request's identity is the Agent's over the default (the loop merges again, idempotently).
  config.identity = requestIdentity(args.streamOptions.identity);
  return config;
}
