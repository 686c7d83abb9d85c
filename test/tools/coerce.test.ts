import { describe, expect, it } from "vitest";
import { argsOf, check, deepFreeze, linesOf, obj } from "./helpers.js";

describe("R21 coercions (JSON Schema tools)", () => {
  it("R21: numeric strings become numbers where the schema says number or integer", () => {
    const schema = obj({ n: { type: "number" }, i: { type: "integer" }, e: { type: "number" }, w: { type: "number" } });
    expect(argsOf(schema, { n: "1.5", i: "-7", e: "1e3", w: " 5 " })).toEqual({ n: 1.5, i: -7, e: 1000, w: 5 });
  });

  it("R21: a non-integral numeric string is not forced into an integer", () => {
    expect(linesOf(obj({ i: { type: "integer" } }), { i: "3.5" })).toEqual(["  - i: expected integer, got string"]);
  });

  it("R21: non-numeric strings stay strings and fail", () => {
    const schema = obj({ n: { type: "number" } });
    for (const bad of ["abc", "", "0x10", "Infinity"]) {
      expect(linesOf(schema, { n: bad })).toEqual(["  - n: expected number, got string"]);
    }
  });

  it('R21: "true"/"false" (any case) become booleans where the schema says boolean', () => {
    const schema = obj({ a: { type: "boolean" }, b: { type: "boolean" }, c: { type: "boolean" } });
    expect(argsOf(schema, { a: "true", b: "false", c: "TRUE" })).toEqual({ a: true, b: false, c: true });
    expect(linesOf(schema, { a: "yes" })).toEqual(["  - a: expected boolean, got string"]);
  });

  it("R21: numbers and booleans become strings where the schema says string", () => {
    const schema = obj({ a: { type: "string" }, b: { type: "string" }, c: { type: "string" } });
    expect(argsOf(schema, { a: 1, b: false, c: 1.25 })).toEqual({ a: "1", b: "false", c: "1.25" });
  });

  it("R21: objects and arrays are not stringified", () => {
    expect(linesOf(obj({ a: { type: "string" } }), { a: { x: 1 } })).toEqual(["  - a: expected string, got object"]);
    expect(linesOf(obj({ a: { type: "string" } }), { a: ["x"] })).toEqual(["  - a: expected string, got array"]);
  });

  it("R21: a single value becomes a one-element array, then its items are coerced", () => {
    const schema = obj({
      tags: { type: "array", items: { type: "string" } },
      points: { type: "array", items: obj({ x: { type: "integer" } }) },
    });
    expect(argsOf(schema, { tags: 5, points: { x: "2" } })).toEqual({ tags: ["5"], points: [{ x: 2 }] });
  });

  it("R21: tuples never wrap, and null is not wrapped", () => {
    expect(linesOf(obj({ t: { type: "array", prefixItems: [{ type: "number" }] } }), { t: "1" })).toEqual([
      "  - t: expected array, got string",
    ]);
    expect(linesOf(obj({ a: { type: "array" } }, ["a"]), { a: null })).toEqual(["  - a: expected array, got null"]);
  });

  it("R21: null for an optional property is dropped", () => {
    const schema = obj({ a: { type: "string" }, b: { type: "number" }, c: obj({ d: { type: "string" } }) }, ["a"]);
    expect(argsOf(schema, { a: "x", b: null, c: { d: null } })).toEqual({ a: "x", c: {} });
  });

  it("R21: null stays where the schema accepts it, and fails where the property is required", () => {
    expect(argsOf(obj({ a: { type: ["string", "null"] } }), { a: null })).toEqual({ a: null });
    expect(linesOf(obj({ a: { type: "string" } }, ["a"]), { a: null })).toEqual(["  - a: expected string, got null"]);
  });

  it("R21: coercion recurses into nested objects, arrays and additional/pattern properties", () => {
    const schema = obj(
      { outer: obj({ list: { type: "array", items: obj({ n: { type: "number" }, ok: { type: "boolean" } }) } }) },
      [],
      { patternProperties: { "^n_": { type: "number" } }, additionalProperties: { type: "string" } },
    );
    expect(argsOf(schema, { outer: { list: [{ n: "1", ok: "false" }] }, n_a: "5", other: 7 })).toEqual({
      outer: { list: [{ n: 1, ok: false }] },
      n_a: 5,
      other: "7",
    });
  });

  it("R21: enum and const take the member the value converts to", () => {
    const schema = obj({ a: { enum: [1, 2] }, b: { enum: ["1", "2"] }, c: { const: true } });
    expect(argsOf(schema, { a: "2", b: 2, c: "true" })).toEqual({ a: 2, b: "2", c: true });
  });

  it("R21: a union keeps an accepted value, else takes the first branch conversion it accepts", () => {
    const schema = obj({ a: { anyOf: [{ type: "number" }, { type: "boolean" }] }, b: { anyOf: [{ type: "string" }, { type: "number" }] } });
    expect(argsOf(schema, { a: "7", b: 3 })).toEqual({ a: 7, b: 3 });
    expect(argsOf(schema, { a: "true" })).toEqual({ a: true });
  });

  it("R21: a tagged union coerces by the branch the tag selects", () => {
    const branch = (tag: string, props: Record<string, unknown>) => obj({ k: { const: tag }, ...props }, ["k", ...Object.keys(props)]);
    const schema = obj({ u: { oneOf: [branch("a", { v: { type: "string" } }), branch("b", { v: { type: "number" } })] } });
    expect(argsOf(schema, { u: { k: "b", v: "5" } })).toEqual({ u: { k: "b", v: 5 } });
    expect(argsOf(schema, { u: { k: "a", v: 5 } })).toEqual({ u: { k: "a", v: "5" } });
  });

  it("R21: coercion follows $ref, including recursive schemas, and terminates", () => {
    const schema = {
      type: "object",
      $defs: { node: obj({ v: { type: "integer" }, kids: { type: "array", items: { $ref: "#/$defs/node" } } }) },
      properties: { root: { $ref: "#/$defs/node" } },
    };
    expect(argsOf(schema, { root: { v: "1", kids: { v: "2", kids: [] } } })).toEqual({ root: { v: 1, kids: [{ v: 2, kids: [] }] } });
    // A schema that wraps into itself: the value it cannot convert is left for the validator.
    const selfWrap = { $defs: { a: { type: "array", items: { $ref: "#/$defs/a" } } }, type: "object", properties: { x: { $ref: "#/$defs/a" } } };
    expect(check(selfWrap, { x: "s" }).ok).toBe(false);
  });

  it("R21: draft-7 tuples (items arrays) coerce by position", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      ...obj({ t: { type: "array", items: [{ type: "number" }, { type: "string" }] } }),
    };
    expect(argsOf(schema, { t: ["1", 2] })).toEqual({ t: [1, "2"] });
  });

  it("R21: validates a copy: the tool call's arguments are never mutated", () => {
    const schema = obj({ n: { type: "number" }, s: { type: "string" }, tags: { type: "array" }, o: { type: "string" }, d: obj({ x: { type: "integer" } }) });
    const args = deepFreeze({ n: "1", s: 2, tags: "x", o: null, d: { x: "3" } });
    const before = JSON.stringify(args);
    const result = check(schema, args);
    expect(result).toEqual({ ok: true, args: { n: 1, s: "2", tags: ["x"], d: { x: 3 } } });
    expect(JSON.stringify(args)).toBe(before);
    // Even unchanged values are copies: executing tools may mutate their params freely.
    const same = { d: { x: 1 } };
    const out = argsOf(schema, same) as typeof same;
    expect(out).toEqual(same);
    expect(out.d).not.toBe(same.d);
  });

  it("R21: a __proto__ key is coerced as a plain property", () => {
    const args = JSON.parse('{"__proto__": "1"}');
    const out = argsOf(obj({ ["__proto__"]: { type: "number" } }), args) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toBe(1);
  });
});
