import { describe, expect, it } from "vitest";
import { anthropicModel } from "../../src/providers/anthropic/index.js";
import { priceUsage, ratesFor } from "../../src/providers/pricing.js";
import { emptyUsage } from "../../src/testing/index.js";

describe("issue 16: prices above 100k prompt tokens (pi-ai's tiers)", () => {
  const haiku55 = anthropicModel("claude-haiku-5-5").cost;

  it("the tier applies once the prompt (input + cache read + cache write) exceeds its threshold", () => {
    expect(haiku55.tiers).toEqual([{ inputTokensAbove: 100_000, input: 0.5, output: 2.5, cacheRead: 0.05, cacheWrite: 0.625 }]);
    expect(ratesFor(haiku55, 100_000)).toEqual({ input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125 });
    expect(ratesFor(haiku55, 100_001)).toEqual({ input: 0.5, output: 2.5, cacheRead: 0.05, cacheWrite: 0.625 });
  });

  it("the highest threshold the prompt exceeds wins, whatever the order of the tiers", () => {
    const cost = {
      input: 1, output: 1, cacheRead: 1, cacheWrite: 1,
      tiers: [
        { inputTokensAbove: 500, input: 3, output: 3, cacheRead: 3, cacheWrite: 3 },
        { inputTokensAbove: 100, input: 2, output: 2, cacheRead: 2, cacheWrite: 2 },
      ],
    };
    expect([ratesFor(cost, 50).input, ratesFor(cost, 200).input, ratesFor(cost, 600).input]).toEqual([1, 2, 3]);
  });

  it("priceUsage prices the whole request at the tier's rates", () => {
    const usage = { ...emptyUsage(), input: 60_000, cacheRead: 50_000, output: 1_000 };
    priceUsage(usage, haiku55);
    expect(usage.cost).toEqual({ input: 0.03, output: 0.0025, cacheRead: 0.0025, cacheWrite: 0, total: 0.035 });
    const small = { ...emptyUsage(), input: 1_000_000 / 10, output: 0 };
    priceUsage(small, haiku55);
    expect(small.cost.input).toBeCloseTo(0.01, 10);
  });
});
