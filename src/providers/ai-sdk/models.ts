import type { Model, ModelCost } from "../../types.js";
import { ANTHROPIC_MODELS } from "../anthropic/models.js";

/**
 * What the loop needs to know about a model and an AI SDK model object does not say: its context
 * window (R62's threshold), its maximum output (R61's escalation), whether it reasons, and its
 * prices in dollars per million tokens (usage cost, R63's `maxCostUsd`).
 */
export interface ModelFacts {
  name: string;
  reasoning: boolean;
  cost: ModelCost;
  contextWindow: number;
  maxTokens: number;
}

/**
 * Facts of well-known models, keyed `family:id` where the family is the first segment of the AI SDK
 * model's `provider` (`openai.responses` → `openai`, `google.generative-ai` → `google`). The figures
 * are those of `@earendil-works/pi-ai` 1.6's model data (`dist/providers/data/{openai,google}.json`);
 * Claude models (`anthropic:…`, for `@ai-sdk/anthropic`) share the native adapter's table.
 */
export const AI_SDK_MODELS: Readonly<Record<string, Readonly<ModelFacts>>> = {
  "openai:gpt-4.1": { name: "GPT-4.1", reasoning: false, cost: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 1047576, maxTokens: 32768 },
  "openai:gpt-4.1-mini": { name: "GPT-4.1 mini", reasoning: false, cost: { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0 }, contextWindow: 1047576, maxTokens: 32768 },
  "openai:gpt-4.1-nano": { name: "GPT-4.1 nano", reasoning: false, cost: { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0 }, contextWindow: 1047576, maxTokens: 32768 },
  "openai:gpt-4o": { name: "GPT-4o", reasoning: false, cost: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 16384 },
  "openai:gpt-4o-mini": { name: "GPT-4o mini", reasoning: false, cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 16384 },
  "openai:gpt-5": { name: "GPT-5", reasoning: true, cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 }, contextWindow: 400000, maxTokens: 128000 },
  "openai:gpt-5-mini": { name: "GPT-5 Mini", reasoning: true, cost: { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 }, contextWindow: 400000, maxTokens: 128000 },
  "openai:gpt-5-nano": { name: "GPT-5 Nano", reasoning: true, cost: { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0 }, contextWindow: 400000, maxTokens: 128000 },
  "openai:gpt-5.4": { name: "GPT-5.4", reasoning: true, cost: { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0, tiers: [{ inputTokensAbove: 272000, input: 5, output: 22.5, cacheRead: 0.5, cacheWrite: 0 }] }, contextWindow: 272000, maxTokens: 128000 },
  "openai:gpt-5.4-mini": { name: "GPT-5.4 mini", reasoning: true, cost: { input: 0.75, output: 4.5, cacheRead: 0.075, cacheWrite: 0 }, contextWindow: 400000, maxTokens: 128000 },
  "openai:gpt-5.5": { name: "GPT-5.5", reasoning: true, cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0, tiers: [{ inputTokensAbove: 272000, input: 10, output: 45, cacheRead: 1, cacheWrite: 0 }] }, contextWindow: 272000, maxTokens: 128000 },
  "openai:gpt-6-sol": { name: "GPT-6 Sol", reasoning: true, cost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5, tiers: [{ inputTokensAbove: 272000, input: 4, output: 15, cacheRead: 0.4, cacheWrite: 5 }] }, contextWindow: 272000, maxTokens: 128000 },
  "openai:gpt-6-luna": { name: "GPT-6 Luna", reasoning: true, cost: { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125, tiers: [{ inputTokensAbove: 272000, input: 0.2, output: 0.75, cacheRead: 0.02, cacheWrite: 0.25 }] }, contextWindow: 272000, maxTokens: 128000 },
  "openai:o3": { name: "o3", reasoning: true, cost: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 100000 },
  "openai:o4-mini": { name: "o4-mini", reasoning: true, cost: { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 100000 },
  "google:gemini-2.5-pro": { name: "Gemini 2.5 Pro", reasoning: true, cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0, tiers: [{ inputTokensAbove: 200000, input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0 }] }, contextWindow: 1048576, maxTokens: 65536 },
  "google:gemini-2.5-flash": { name: "Gemini 2.5 Flash", reasoning: true, cost: { input: 0.3, output: 2.5, cacheRead: 0.03, cacheWrite: 0 }, contextWindow: 1048576, maxTokens: 65536 },
  "google:gemini-2.5-flash-lite": { name: "Gemini 2.5 Flash-Lite", reasoning: true, cost: { input: 0.1, output: 0.4, cacheRead: 0.01, cacheWrite: 0 }, contextWindow: 1048576, maxTokens: 65536 },
  "google:gemini-3.1-pro-preview": { name: "Gemini 3.1 Pro Preview", reasoning: true, cost: { input: 2, output: 12, cacheRead: 0.2, cacheWrite: 0, tiers: [{ inputTokensAbove: 200000, input: 4, output: 18, cacheRead: 0.4, cacheWrite: 0 }] }, contextWindow: 1048576, maxTokens: 65536 },
  "google:gemini-3.5-flash": { name: "Gemini 3.5 Flash", reasoning: true, cost: { input: 1.5, output: 9, cacheRead: 0.15, cacheWrite: 0 }, contextWindow: 1048576, maxTokens: 65536 },
  "google:gemini-flash-latest": { name: "Gemini Flash Latest", reasoning: true, cost: { input: 1.5, output: 9, cacheRead: 0.15, cacheWrite: 0 }, contextWindow: 1048576, maxTokens: 65536 },
  "google:gemini-pro-latest": { name: "Gemini Pro Latest", reasoning: true, cost: { input: 2, output: 12, cacheRead: 0.2, cacheWrite: 0, tiers: [{ inputTokensAbove: 200000, input: 4, output: 18, cacheRead: 0.4, cacheWrite: 0 }] }, contextWindow: 1048576, maxTokens: 65536 },
  ...Object.fromEntries(Object.entries(ANTHROPIC_MODELS).map(([id, spec]) => [`anthropic:${id}`, spec])),
};

/** `openai.responses` → `openai`: the family a model's facts are filed under. */
export function providerFamily(provider: string): string {
  return provider.split(".")[0] ?? provider;
}

/** The table's facts for an AI SDK model, or undefined. A dated snapshot (`gpt-4o-2024-08-06`, `…-20250929`) falls back to its alias's entry. */
export function knownModelFacts(provider: string, modelId: string): ModelFacts | undefined {
  const family = providerFamily(provider);
  for (const id of [modelId, modelId.replace(/-\d{4}-\d{2}-\d{2}$/, ""), modelId.replace(/-\d{8}$/, "")]) {
    const facts = AI_SDK_MODELS[`${family}:${id}`];
    if (facts) return facts;
  }
  return undefined;
}

/** A model the table does not know and for which no `facts` were given. */
export class UnknownAiSdkModelError extends Error {
  override readonly name = "UnknownAiSdkModelError";
  constructor(
    readonly provider: string,
    readonly modelId: string,
  ) {
    super(
      `Unknown model "${modelId}" (${provider}): its context window, output limit and prices are not in the table. ` +
        `Pass them: fromAiSdkModel(model, { facts: { contextWindow, maxTokens, cost: { input, output, cacheRead, cacheWrite } } }).`,
    );
  }
}

/** The loop's `Model` for an AI SDK model: table facts, overridden field by field by `facts`. */
export function aiSdkLoopModel(provider: string, modelId: string, facts: Partial<ModelFacts> = {}): Model {
  const known = knownModelFacts(provider, modelId);
  if (!known && (facts.contextWindow === undefined || facts.maxTokens === undefined)) {
    throw new UnknownAiSdkModelError(provider, modelId);
  }
  const cost = facts.cost ?? known?.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  return {
    id: modelId,
    name: facts.name ?? known?.name ?? modelId,
    api: `ai-sdk:${provider}`,
    provider: providerFamily(provider),
    reasoning: facts.reasoning ?? known?.reasoning ?? false,
    input: ["text", "image"],
    cost: { ...cost, ...(cost.tiers ? { tiers: cost.tiers.map((tier) => ({ ...tier })) } : {}) },
    contextWindow: facts.contextWindow ?? known!.contextWindow,
    maxTokens: facts.maxTokens ?? known!.maxTokens,
  };
}
