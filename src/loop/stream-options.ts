/**
 * The stream options of one run, from its config: every key that is not a hook or a loop setting,
 * untouched, except `identity`, which is always sent merged over `DEFAULT_AGENT_IDENTITY` (as pi
 * does on every request). Pure; for the request path (src/actors/run-deps.ts `streamOptionsOf`).
 */
import type { AgentLoopConfig, StreamOptions } from "../types.js";
import { requestIdentity } from "../identity/index.js";

/**
 * `AgentLoopConfig` keys the loop consumes itself. `signal` is here because the stream function
 * always gets the run's own signal; `apiKey`/`reasoning` are resolved per request. (Not
 * `toolExecution`: the reference hands the stream function its whole config, and a provider may
 * read the mode, so it is sent as any other setting.)
 */
export const LOOP_CONFIG_KEYS = [
  "model",
  "reasoning",
  "apiKey",
  "signal",
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
  "budget",
  "toolTimeoutMs",
  "retry",
  "outputLimit",
  "compact",
  "abortGraceMs",
  "onRuntimeEvent",
  "requestLimiter",
  "streamingToolExecution",
  "maxConcurrentTools",
  "output",
] as const satisfies readonly (keyof AgentLoopConfig)[];

const NOT_STREAM_OPTIONS: ReadonlySet<string> = new Set<string>([...LOOP_CONFIG_KEYS, "inspect"]);

export function streamOptionsOf(config: AgentLoopConfig): StreamOptions {
  const options: StreamOptions = {};
  // (Object.keys, not Object.entries: the same keys in the same order, without a pair per key.)
  for (const key of Object.keys(config)) if (!NOT_STREAM_OPTIONS.has(key)) options[key] = (config as unknown as Record<string, unknown>)[key];
  options.identity = requestIdentity(config.identity);
  return options;
}
