import type { AgentContext, AgentLoopConfig, AssistantMessage, StreamFn, StreamOptions } from "../types.js";
import type { EventQueue } from "../bridge/event-queue.js";
import type { ToolRegistry } from "../loop/tool-registry.js";

/**
 * What the actor implementations of one run close over: the caller's functions and the run's
 * runtime state. None of it enters machine context.
 */
export interface RunDeps {
  config: AgentLoopConfig;
  streamFn: StreamFn;
  /** The run's signal: follows the caller's, and also aborts when the sink fails. */
  signal: AbortSignal;
  events: EventQueue;
  tools: ToolRegistry;
  /** The config's stream options (everything that is not a hook), computed once per run. */
  streamOptions: StreamOptions;
  /** The key `getApiKey` resolved for the next request; cleared once used. */
  apiKey: { next: string | undefined };
  /** What tool hooks see: the message that issued the calls and the current context. */
  hookContext(): { assistantMessage: AssistantMessage; context: AgentContext };
}

/** Hook and runtime keys of `AgentLoopConfig`; the rest are stream options (SPEC: passed through untouched). */
const NOT_STREAM_OPTIONS = new Set([
  "model",
  "reasoning",
  "apiKey",
  "convertToLlm",
  "transformContext",
  "getApiKey",
  "getSteeringMessages",
  "getFollowUpMessages",
  "prepareNextTurn",
  "prepareRequest",
  "finishTurn",
  "beforeToolCall",
  "afterToolCall",
  "toolExecution",
  "inspect",
]);

export function streamOptionsOf(config: AgentLoopConfig): StreamOptions {
  const options: StreamOptions = {};
  for (const key of Object.keys(config)) if (!NOT_STREAM_OPTIONS.has(key)) options[key] = config[key];
  return options;
}
