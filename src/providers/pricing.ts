import type { ModelCost, ModelCostRates, Usage } from "../types.js";

/**
 * The rates for a request whose prompt has `promptTokens` tokens (input + cache read + cache
 * write): the tier with the highest `inputTokensAbove` below it, else the base rates. pi-ai's
 * model data states tiers this way ("above 100k input tokens, the whole request costs …").
 */
export function ratesFor(cost: ModelCost | undefined, promptTokens: number): ModelCostRates {
  const base: ModelCostRates = { input: cost?.input ?? 0, output: cost?.output ?? 0, cacheRead: cost?.cacheRead ?? 0, cacheWrite: cost?.cacheWrite ?? 0 };
  let best: { above: number; rates: ModelCostRates } | undefined;
  for (const tier of cost?.tiers ?? []) {
    if (promptTokens > tier.inputTokensAbove && (!best || tier.inputTokensAbove > best.above)) best = { above: tier.inputTokensAbove, rates: tier };
  }
  return best ? { input: best.rates.input, output: best.rates.output, cacheRead: best.rates.cacheRead, cacheWrite: best.rates.cacheWrite } : base;
}

/** Fills `usage.cost` from its token counts and the model's prices (dollars). */
export function priceUsage(usage: Usage, cost: ModelCost | undefined): void {
  const rates = ratesFor(cost, usage.input + usage.cacheRead + usage.cacheWrite);
  const dollars = (tokens: number, perMillion: number) => (tokens * perMillion) / 1_000_000;
  usage.cost.input = dollars(usage.input, rates.input);
  usage.cost.output = dollars(usage.output, rates.output);
  usage.cost.cacheRead = dollars(usage.cacheRead, rates.cacheRead);
  usage.cost.cacheWrite = dollars(usage.cacheWrite, rates.cacheWrite);
  usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
}
