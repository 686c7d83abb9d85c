import type { Model } from "../../types.js";

/** Dollars per million tokens. */
export interface AnthropicPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

interface AnthropicModelSpec {
  name: string;
  reasoning: boolean;
  cost: AnthropicPrice;
  contextWindow: number;
  maxTokens: number;
}

export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

/**
 * Current Claude models with their public list prices (dollars per million tokens; `cacheWrite` is
 * the 5-minute cache write price), context window and maximum output tokens.
 */
export const ANTHROPIC_MODELS: Readonly<Record<string, Readonly<AnthropicModelSpec>>> = {
  "claude-opus-4-5": {
    name: "Claude Opus 4.5",
    reasoning: true,
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-opus-4-1": {
    name: "Claude Opus 4.1",
    reasoning: true,
    cost: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    contextWindow: 200_000,
    maxTokens: 32_000,
  },
  "claude-sonnet-4-5": {
    name: "Claude Sonnet 4.5",
    reasoning: true,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-sonnet-4-0": {
    name: "Claude Sonnet 4",
    reasoning: true,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-haiku-4-5": {
    name: "Claude Haiku 4.5",
    reasoning: true,
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-3-5-haiku-latest": {
    name: "Claude Haiku 3.5",
    reasoning: false,
    cost: { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
    contextWindow: 200_000,
    maxTokens: 8_192,
  },
};

/** The price table alone, keyed by model id. */
export const ANTHROPIC_PRICES: Readonly<Record<string, Readonly<AnthropicPrice>>> = Object.fromEntries(
  Object.entries(ANTHROPIC_MODELS).map(([id, spec]) => [id, spec.cost]),
);

/** Other spellings of a table entry (the API alias of Sonnet 4 is `claude-sonnet-4-0`). */
const ALIASES: Readonly<Record<string, string>> = {
  "claude-sonnet-4": "claude-sonnet-4-0",
  "claude-3-5-haiku": "claude-3-5-haiku-latest",
};

/** Defaults for an id the table does not know: Sonnet-class limits and prices. */
const UNKNOWN_MODEL_DEFAULTS: AnthropicModelSpec = ANTHROPIC_MODELS["claude-sonnet-4-5"];

function lookup(id: string): { key: string; spec: AnthropicModelSpec } | undefined {
  // A dated snapshot (`claude-sonnet-4-5-20250929`) shares its alias's entry.
  const undated = id.replace(/-\d{8}$/, "");
  for (const candidate of [id, undated]) {
    const key = ANTHROPIC_MODELS[candidate] ? candidate : ALIASES[candidate];
    if (key && ANTHROPIC_MODELS[key]) return { key, spec: ANTHROPIC_MODELS[key] };
  }
  return undefined;
}

/**
 * A `Model` for a Claude model id. Known ids (and their dated snapshots, which keep their own id)
 * get their published limits and prices; `claude-sonnet-4` is accepted for `claude-sonnet-4-0`.
 * An unknown id gets Sonnet-class defaults (reasoning, 200k context, 64k output, Sonnet prices)
 * and `name` equal to the id. `overrides` replace any field.
 */
export function anthropicModel(id: string, overrides: Partial<Model> = {}): Model {
  const found = lookup(id);
  const spec = found?.spec ?? UNKNOWN_MODEL_DEFAULTS;
  const resolvedId = found && ALIASES[id] === found.key ? found.key : id;
  return {
    id: resolvedId,
    name: found ? spec.name : id,
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: ANTHROPIC_BASE_URL,
    reasoning: spec.reasoning,
    input: ["text", "image"],
    cost: { ...spec.cost },
    contextWindow: spec.contextWindow,
    maxTokens: spec.maxTokens,
    ...overrides,
  };
}
