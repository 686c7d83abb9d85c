/** The journal's stream-update deltas (R80) rebuild every value exactly (R83 depends on it). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyDelta, delta } from "../../src/durable/update-delta.js";
import type { Json } from "../../src/store/run-store.js";

const json = fc.jsonValue() as fc.Arbitrary<Json>;

describe("R80: update deltas", () => {
  it("R80: applyDelta(a, delta(a, b)) is b, byte for byte, for any two JSON values (and a grown one)", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(JSON.stringify(applyDelta(a, delta(a, b)))).toBe(JSON.stringify(b));
        const grown = { ...(typeof a === "object" && a !== null && !Array.isArray(a) ? a : { a }), text: "abc", extra: b };
        const more = { ...grown, text: "abcdef", items: [b, a] };
        expect(JSON.stringify(applyDelta(grown, delta(grown, more)))).toBe(JSON.stringify(more));
      }),
      { numRuns: 2000 },
    );
  });

  it("R80: a grown text is stored as what it grew by", () => {
    const before = { role: "assistant", content: [{ type: "text", text: "Hello" }], usage: { input: 1 } };
    const after = { role: "assistant", content: [{ type: "text", text: "Hello, world" }], usage: { input: 1 } };
    expect(delta(before, after)).toEqual({ $: "o", c: { content: { $: "a", c: { 0: { $: "o", c: { text: { $: "+", v: ", world" } } } }, t: [] } } });
  });
});
