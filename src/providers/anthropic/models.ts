import type { Model, ModelCost } from "../../types.js";

/** Dollars per million tokens (see `ModelCost`; `tiers` for long prompts). */
export type AnthropicPrice = ModelCost;

interface AnthropicModelSpec {
  name: string;
  reasoning: boolean;
  cost: AnthropicPrice;
  contextWindow: number;
  maxTokens: number;
}

export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

/**
 * Claude models with their list prices (dollars per million tokens; `cacheWrite` is the 5-minute
 * cache write price; `tiers` apply above a prompt size), context window and maximum output tokens.
 * The figures of the current models are those of `@earendil-works/pi-ai` 1.6's model data
 * (`dist/providers/data/anthropic.json`); the last three entries are older models it no longer lists.
 */
export const ANTHROPIC_MODELS: Readonly<Record<string, Readonly<AnthropicModelSpec>>> = {
  "claude-fable-5": {
    name: "Claude Fable 5",
    reasoning: true,
    cost: { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-fable-5-1": {
    name: "Claude Fable 5.1",
    reasoning: true,
    cost: { input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-fable-5-2": {
    name: "Claude Fable 5.2",
    reasoning: true,
    cost: { input: 8, output: 40, cacheRead: 0.2, cacheWrite: 10 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-haiku-4-5": {
    name: "Claude Haiku 4.5",
    reasoning: true,
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-haiku-5-5": {
    name: "Claude Haiku 5.5",
    reasoning: true,
    cost: { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125, tiers: [{ inputTokensAbove: 100000, input: 0.5, output: 2.5, cacheRead: 0.05, cacheWrite: 0.625 }] },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-opus-4-5": {
    name: "Claude Opus 4.5",
    reasoning: true,
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-opus-4-6": {
    name: "Claude Opus 4.6",
    reasoning: true,
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-opus-4-7": {
    name: "Claude Opus 4.7",
    reasoning: true,
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-opus-4-8": {
    name: "Claude Opus 4.8",
    reasoning: true,
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-opus-5": {
    name: "Claude Opus 5",
    reasoning: true,
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-opus-5-5": {
    name: "Claude Opus 5.5",
    reasoning: true,
    cost: { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-sonnet-4-5": {
    name: "Claude Sonnet 4.5",
    reasoning: true,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  "claude-sonnet-4-6": {
    name: "Claude Sonnet 4.6",
    reasoning: true,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-sonnet-5": {
    name: "Claude Sonnet 5",
    reasoning: true,
    cost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-sonnet-5-5": {
    name: "Claude Sonnet 5.5",
    reasoning: true,
    cost: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
    contextWindow: 1_000_000,
    maxTokens: 128_000,
  },
  "claude-opus-4-1": {
    name: "Claude Opus 4.1",
    reasoning: true,
    cost: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    contextWindow: 200_000,
    maxTokens: 32_000,
  },
  "claude-sonnet-4-0": {
    name: "Claude Sonnet 4",
    reasoning: true,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
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

/** An id the table does not know, with no `fallback` named: the model's limits and prices are unknown. */
export class UnknownAnthropicModelError extends Error {
  override readonly name = "UnknownAnthropicModelError";
  constructor(
    readonly id: string,
    readonly known: readonly string[],
  ) {
    super(
      `Unknown Anthropic model "${id}": its prices and limits are not in the table. ` +
        `Use one of ${known.join(", ")}, or pass { fallback: "<known id>" } to price it like that model.`,
    );
  }
}

export interface AnthropicModelOptions {
  /**
   * A known id whose figures (reasoning, prices, limits) an unknown `id` takes, explicitly.
   * Without it an unknown id throws `UnknownAnthropicModelError`.
   */
  fallback?: string;
}

function lookup(id: string): { key: string; spec: AnthropicModelSpec } | undefined {
  // A dated snapshot (`claude-sonnet-4-5-20250929`) shares its alias's entry.
  const undated = id.replace(/-\d{8}$/, "");
  for (const candidate of [id, undated]) {
    const key = ANTHROPIC_MODELS[candidate] ? candidate : ALIASES[candidate];
    if (key && ANTHROPIC_MODELS[key]) return { key, spec: ANTHROPIC_MODELS[key] };
  }
  return undefined;
}

/** True when `anthropicModel(id)` knows the id (a table entry, an alias, or a dated snapshot of one). */
export function isKnownAnthropicModel(id: string): boolean {
  return lookup(id) !== undefined;
}

/**
 * A `Model` for a Claude model id. Known ids (and their dated snapshots, which keep their own id)
 * get their published limits and prices; `claude-sonnet-4` is accepted for `claude-sonnet-4-0`.
 * An unknown id throws `UnknownAnthropicModelError`, unless `options.fallback` names a known model
 * whose figures it then takes (with `name` equal to the id): no silent guess at prices or at
 * `reasoning`. `overrides` replace any field.
 */
export function anthropicModel(id: string, overrides: Partial<Model> = {}, options: AnthropicModelOptions = {}): Model {
  const found = lookup(id);
  let spec = found?.spec;
  if (!spec && options.fallback !== undefined) spec = lookup(options.fallback)?.spec;
  if (!spec) throw new UnknownAnthropicModelError(options.fallback ?? id, Object.keys(ANTHROPIC_MODELS));
  const resolvedId = found && ALIASES[id] === found.key ? found.key : id;
  const { tiers, ...rates } = spec.cost;
  return {
    id: resolvedId,
    name: found ? spec.name : id,
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: ANTHROPIC_BASE_URL,
    reasoning: spec.reasoning,
    input: ["text", "image"],
    cost: { ...rates, ...(tiers ? { tiers: tiers.map((tier) => ({ ...tier })) } : {}) },
    contextWindow: spec.contextWindow,
    maxTokens: spec.maxTokens,
    ...overrides,
  };
}
