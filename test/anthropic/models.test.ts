import { describe, expect, it } from "vitest";
import { ANTHROPIC_PRICES, anthropicModel } from "../../src/providers/anthropic/index.js";

describe("anthropicModel", () => {
  it("describes a known model with its limits and list prices", () => {
    expect(anthropicModel("claude-sonnet-4-5")).toEqual({
      id: "claude-sonnet-4-5",
      name: "Claude Sonnet 4.5",
      api: "anthropic-messages",
      provider: "anthropic",
      baseUrl: "https://api.anthropic.com",
      reasoning: true,
      input: ["text", "image"],
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      contextWindow: 200_000,
      maxTokens: 64_000,
    });
  });

  it("exports the price table for every listed model", () => {
    expect(ANTHROPIC_PRICES).toEqual({
      "claude-opus-4-5": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      "claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
      "claude-sonnet-4-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      "claude-sonnet-4-0": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
      "claude-3-5-haiku-latest": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
    });
  });

  it("keeps a dated snapshot id but uses its alias's entry; claude-sonnet-4 means claude-sonnet-4-0", () => {
    const project = (id: string) => {
      const m = anthropicModel(id);
      return [m.id, m.name, m.maxTokens, m.reasoning];
    };
    expect([
      project("claude-opus-4-1-20250805"),
      project("claude-sonnet-4-20250514"),
      project("claude-sonnet-4"),
      project("claude-3-5-haiku-20241022"),
    ]).toEqual([
      ["claude-opus-4-1-20250805", "Claude Opus 4.1", 32_000, true],
      ["claude-sonnet-4-20250514", "Claude Sonnet 4", 64_000, true],
      ["claude-sonnet-4-0", "Claude Sonnet 4", 64_000, true],
      ["claude-3-5-haiku-20241022", "Claude Haiku 3.5", 8_192, false],
    ]);
  });

  it("gives an unknown id Sonnet-class defaults and its id as name", () => {
    const model = anthropicModel("claude-future-9");
    expect(model).toMatchObject({
      id: "claude-future-9",
      name: "claude-future-9",
      reasoning: true,
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      contextWindow: 200_000,
      maxTokens: 64_000,
    });
  });

  it("applies overrides and never shares the price object with the table", () => {
    const model = anthropicModel("claude-haiku-4-5", { baseUrl: "http://proxy.local", maxTokens: 1000 });
    model.cost.input = 99;
    expect([model.baseUrl, model.maxTokens, ANTHROPIC_PRICES["claude-haiku-4-5"].input]).toEqual(["http://proxy.local", 1000, 1]);
  });
});
