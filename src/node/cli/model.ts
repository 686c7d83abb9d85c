/** Which model the session talks to: Claude when a key is available, else the offline demo. */
import type { Model, StreamFn } from "../../types.js";
import { anthropicModel, anthropicStreamFn, isKnownAnthropicModel } from "../../providers/anthropic/index.js";
import { DEFAULT_MODEL } from "./args.js";
import { offlineDemoModel, offlineDemoStreamFn } from "./offline-demo.js";

export interface ModelChoice {
  model: Model;
  streamFn: StreamFn;
  offline: boolean;
  /** The banner line. */
  label: string;
  /** A warning to show (e.g. an unknown model id). */
  warning?: string;
  /** Keys the session uses, kept out of the trace (the Anthropic key is added from the environment). */
  secrets?: string[];
}

export const OFFLINE_LABEL = "offline demo model — set ANTHROPIC_API_KEY for Claude";

/** `demoPace` scales the offline demo's delays (1: normal, 0: none). `ANTHROPIC_BASE_URL` redirects Claude requests (a proxy). */
export function chooseModel(options: { offline: boolean; model?: string }, env: Record<string, string | undefined>, demoPace = 1): ModelChoice {
  const key = env.ANTHROPIC_API_KEY;
  if (options.offline || !key) {
    return {
      model: offlineDemoModel,
      streamFn: offlineDemoStreamFn({ delayMs: Math.round(8 * demoPace) }),
      offline: true,
      label: OFFLINE_LABEL,
      ...(!options.offline && options.model ? { warning: `--model ${options.model} needs ANTHROPIC_API_KEY; using the offline demo model.` } : {}),
    };
  }
  // An id the price table does not know is priced like the default model, said in the warning below.
  const model = anthropicModel(options.model ?? DEFAULT_MODEL, env.ANTHROPIC_BASE_URL ? { baseUrl: env.ANTHROPIC_BASE_URL } : {}, { fallback: DEFAULT_MODEL });
  return {
    model,
    streamFn: anthropicStreamFn({ apiKey: key }),
    offline: false,
    label: `${model.name === model.id ? model.id : `${model.name} (${model.id})`} via Anthropic`,
    ...(isKnownAnthropicModel(model.id)
      ? {}
      : { warning: `Model "${model.id}" is not in the price table: limits and cost use ${DEFAULT_MODEL}'s values.` }),
  };
}
