import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ANTHROPIC_PRICES, anthropicModel, isKnownAnthropicModel, UnknownAnthropicModelError } from "../../src/providers/anthropic/index.js";
import { DEFAULT_MODEL } from "../../src/node/cli/args.js";

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

  it("issue 16: the price table has every current Claude model of pi-ai 1.6's data, with its figures", () => {
    // pi-ai's model data, read as data (the figures, not the code); the package does not export the file.
    const file = new URL("../../node_modules/@earendil-works/pi-ai/dist/providers/data/anthropic.json", import.meta.url);
    const data = JSON.parse(readFileSync(file, "utf8")) as {
      "anthropic-messages": Record<string, { id: string; reasoning: boolean; cost: unknown; contextWindow: number; maxTokens: number }>;
    };
    const theirs = Object.values(data["anthropic-messages"]);
    expect(theirs.length).toBeGreaterThan(10);
    for (const model of theirs) {
      const ours = anthropicModel(model.id);
      expect([model.id, ours.reasoning, ours.cost, ours.contextWindow, ours.maxTokens]).toEqual([model.id, model.reasoning, model.cost, model.contextWindow, model.maxTokens]);
    }
    // The older models it no longer lists keep their published figures.
    expect(ANTHROPIC_PRICES["claude-opus-4-1"]).toEqual({ input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 });
    expect(ANTHROPIC_PRICES["claude-3-5-haiku-latest"]).toEqual({ input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 });
  });

  it("issue 16: the CLI's default model is priced from the table, not by fallback", () => {
    expect(isKnownAnthropicModel(DEFAULT_MODEL)).toBe(true);
    expect(anthropicModel(DEFAULT_MODEL).name).toBe("Claude Sonnet 5.5");
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

  it("issue 16: an unknown id is a typed error, not Sonnet prices and reasoning in disguise", () => {
    let error: unknown;
    try {
      anthropicModel("claude-future-9");
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(UnknownAnthropicModelError);
    expect(error).toMatchObject({ id: "claude-future-9", message: expect.stringContaining('Unknown Anthropic model "claude-future-9"') });
    expect((error as UnknownAnthropicModelError).known).toContain("claude-sonnet-5-5");
    expect(isKnownAnthropicModel("claude-future-9")).toBe(false);
  });

  it("issue 16: an explicit fallback prices an unknown id like the named model, under its own id", () => {
    expect(anthropicModel("claude-future-9", {}, { fallback: "claude-haiku-4-5" })).toMatchObject({
      id: "claude-future-9",
      name: "claude-future-9",
      reasoning: true,
      cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
      contextWindow: 200_000,
      maxTokens: 64_000,
    });
    expect(() => anthropicModel("claude-future-9", {}, { fallback: "claude-also-unknown" })).toThrow(UnknownAnthropicModelError);
  });

  it("applies overrides and never shares the price object with the table", () => {
    const model = anthropicModel("claude-haiku-4-5", { baseUrl: "http://proxy.local", maxTokens: 1000 });
    model.cost.input = 99;
    expect([model.baseUrl, model.maxTokens, ANTHROPIC_PRICES["claude-haiku-4-5"].input]).toEqual(["http://proxy.local", 1000, 1]);
  });
});
