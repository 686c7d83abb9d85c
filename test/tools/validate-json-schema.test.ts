import { describe, expect, it } from "vitest";
import { validateToolArguments } from "../../src/tools/index.js";
import { check, linesOf, obj, schemaTool } from "./helpers.js";

const readSchema = obj({ path: { type: "string" }, count: { type: "integer" } }, ["path", "count"]);

describe("R21 failure messages (JSON Schema tools)", () => {
  it("R21: the full layout: header, one line per failure, blank line, received arguments as 2-space JSON", () => {
    const result = validateToolArguments(schemaTool(readSchema, "read"), { arguments: { path: "a", count: "abc" } });
    expect(result).toEqual({
      ok: false,
      message: 'Validation failed for tool "read":\n  - count: expected integer, got string\n\nReceived arguments:\n{\n  "path": "a",\n  "count": "abc"\n}',
    });
  });

  it("R21: missing required properties, one line each, in schema order", () => {
    const result = check(readSchema, {});
    expect(result.ok === false && result.message).toBe(
      'Validation failed for tool "t":\n  - path: missing\n  - count: missing\n\nReceived arguments:\n{}',
    );
  });

  it("R21: received arguments are the ones sent, before coercion", () => {
    const result = check(readSchema, { path: 1, count: "x" });
    expect(result.ok === false && result.message.split("Received arguments:\n")[1]).toBe('{\n  "path": 1,\n  "count": "x"\n}');
  });

  it("R21: wrong types name the expected and received JSON kinds", () => {
    const schema = obj({ o: { type: "object" }, n: { type: "number" }, u: { type: ["number", "null"] } });
    expect(linesOf(schema, { o: 5, n: {}, u: [] })).toEqual([
      "  - o: expected object, got integer",
      "  - n: expected number, got object",
      "  - u: expected number or null, got array",
    ]);
    expect(linesOf(obj({ o: { type: "object" } }, ["o"]), { o: null })).toEqual(["  - o: expected object, got null"]);
  });

  it("R21: nested paths join keys and indexes with dots", () => {
    const schema = obj({ a: obj({ b: { type: "array", items: obj({ c: { type: "integer" }, d: { type: "string" } }, ["d"]) } }) });
    expect(linesOf(schema, { a: { b: [{ c: 1, d: "x" }, { c: "x" }] } })).toEqual(["  - a.b.1.d: missing", "  - a.b.1.c: expected integer, got string"]);
  });

  it("R21: keys are printed raw (no JSON Pointer or URI escaping)", () => {
    const schema = obj({ "a/b": { type: "number" }, "c~d": { type: "number" }, "é x": { type: "number" } });
    expect(linesOf(schema, { "a/b": "x", "c~d": "y", "é x": "z" })).toEqual([
      "  - a/b: expected number, got string",
      "  - c~d: expected number, got string",
      "  - é x: expected number, got string",
    ]);
  });

  it("R21: enum and const failures list what was expected", () => {
    expect(linesOf(obj({ mode: { enum: ["a", "b"] }, k: { const: "x" } }), { mode: "c", k: "y" })).toEqual([
      '  - mode: expected one of ["a","b"]',
      '  - k: expected "x"',
    ]);
  });

  it("R21: a wrong-typed value against a typed enum is converted by the type first, as the reference does: one enum line", () => {
    const schema = obj({ e: { type: "string", enum: ["x", "y"] }, k: { type: "string", const: "x" } });
    expect(linesOf(schema, { e: 3, k: true })).toEqual(['  - e: expected one of ["x","y"]', '  - k: expected "x"']);
    // A value that converts to a member still becomes that member.
    expect(check(obj({ e: { type: "string", enum: ["1", "2"] } }), { e: 1 })).toMatchObject({ ok: true, args: { e: "1" } });
  });

  it("R21: problems with the arguments themselves are reported at root", () => {
    expect(linesOf(obj({}, [], { minProperties: 1 }), {})).toEqual(["  - root: expected at least 1 properties"]);
    expect(linesOf({ type: "object" }, "text")).toEqual(["  - root: expected object, got string"]);
  });

  it("R21: bounds, lengths, patterns, formats and array rules", () => {
    const schema = obj({
      min: { type: "number", minimum: 3 },
      max: { type: "number", maximum: 3 },
      xmin: { type: "number", exclusiveMinimum: 3 },
      xmax: { type: "number", exclusiveMaximum: 3 },
      mul: { type: "number", multipleOf: 2 },
      short: { type: "string", minLength: 3 },
      long: { type: "string", maxLength: 1 },
      pat: { type: "string", pattern: "^a+$" },
      email: { type: "string", format: "email" },
      few: { type: "array", minItems: 2 },
      many: { type: "array", maxItems: 1 },
      dup: { type: "array", uniqueItems: true },
      has: { type: "array", contains: { type: "string" } },
    });
    const args = { min: 1, max: 5, xmin: 3, xmax: 3, mul: 3, short: "a", long: "ab", pat: "b", email: "x", few: [1], many: [1, 2], dup: [1, 1], has: [1] };
    expect(linesOf(schema, args)).toEqual([
      "  - min: expected >= 3",
      "  - max: expected <= 3",
      "  - xmin: expected > 3",
      "  - xmax: expected < 3",
      "  - mul: expected a multiple of 2",
      "  - short: expected at least 3 characters",
      "  - long: expected at most 1 characters",
      "  - pat: expected to match ^a+$",
      "  - email: expected format email",
      "  - few: expected at least 2 items",
      "  - many: expected at most 1 items",
      "  - dup: expected unique items",
      "  - has: expected at least 1 matching item",
    ]);
  });

  it("R21: undeclared properties of a closed object are unknown fields", () => {
    expect(linesOf(obj({ a: { type: "string" } }, [], { additionalProperties: false }), { a: "x", b: 1, c: 2 })).toEqual([
      "  - b: unknown field",
      "  - c: unknown field",
    ]);
    expect(linesOf({ ...obj({ a: {} }), unevaluatedProperties: false }, { a: 1, b: 2 })).toEqual(["  - b: unknown field"]);
  });

  it("R21: applicator noise is dropped: allOf, if/then, dependencies report their leaf problems", () => {
    expect(linesOf({ allOf: [obj({}, ["a"]), obj({}, ["b"])] }, {})).toEqual(["  - a: missing", "  - b: missing"]);
    expect(linesOf({ ...obj({ a: {} }), if: { properties: { a: { const: "x" } } }, then: { required: ["b"] } }, { a: "x" })).toEqual([
      "  - b: missing",
    ]);
    expect(linesOf(obj({ a: {}, b: {} }, [], { dependentRequired: { a: ["b"] } }), { a: 1 })).toEqual(["  - b: required when a is present"]);
    expect(linesOf(obj({}, [], { propertyNames: { pattern: "^a" } }), { b: 1 })).toEqual(["  - b: invalid property name"]);
  });

  it("R21: a failed union is explained by the branch the value meant (its tag, then its keys)", () => {
    const tagged = obj({
      a: { anyOf: [obj({ k: { const: "x" }, v: { type: "string" } }, ["k", "v"]), obj({ k: { const: "y" }, n: { type: "number" } }, ["k", "n"])] },
    });
    expect(linesOf(tagged, { a: { k: "y", n: "q" } })).toEqual(["  - a.n: expected number, got string"]);
    const untagged = obj({ a: { anyOf: [obj({ v: { type: "string" } }, ["v"]), obj({ n: { type: "number" } }, ["n"])] } });
    expect(linesOf(untagged, { a: { n: "q" } })).toEqual(["  - a.n: expected number, got string"]);
    const closed = obj({
      a: { anyOf: [obj({ x: { type: "string" } }, ["x"], { additionalProperties: false }), obj({ y: { type: "number" } }, ["y"], { additionalProperties: false })] },
    });
    expect(linesOf(closed, { a: { y: 1, z: 2 } })).toEqual(["  - a.z: unknown field"]);
    expect(linesOf(obj({ a: { oneOf: [{ type: "number" }, { type: "integer" }] } }), { a: 1 })).toEqual([
      "  - a: matches more than one alternative",
    ]);
  });

  it("R21: a dangling $ref rejects only the values at its place", () => {
    const schema = obj({ a: { $ref: "#/$defs/nope" }, b: { type: "string" } });
    expect(linesOf(schema, { a: 1, b: 2 })).toEqual(["  - a: unresolved reference #/$defs/nope"]);
    expect(check(schema, { b: "x" }).ok).toBe(true);
  });

  it("R21: argumentsError short-circuits with the parse error", () => {
    expect(check(readSchema, {}, "Unexpected token x in JSON at position 1")).toEqual({
      ok: false,
      message: 'Invalid arguments for tool "t": Unexpected token x in JSON at position 1',
    });
  });

  it("R21: never throws: unusable schemas and non-JSON arguments become failures", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const notJson = check(readSchema, cyclic);
    expect(notJson.ok).toBe(false);
    expect(notJson.ok === false && notJson.message).toMatch(/^Validation failed for tool "t":\n {2}- root: not JSON: /);
    const dup = check({ $defs: { a: { $id: "https://x/a" }, b: { $id: "https://x/a" } } }, {});
    expect(dup.ok).toBe(false);
    expect(check(readSchema, undefined)).toMatchObject({ ok: false, message: expect.stringContaining("  - root: expected a JSON value, got undefined") });
  });

  it("R21: an undefined property counts as absent", () => {
    expect(check(obj({ a: { type: "string" } }), { a: undefined })).toEqual({ ok: true, args: {} });
  });

  it("R21: the compiled validator is cached per schema object and the caller's schema is left untouched", () => {
    const schema = Object.freeze(obj({ a: { $ref: "#/$defs/s" } }, ["a"], { $defs: Object.freeze({ s: Object.freeze({ type: "string" }) }) }));
    const before = JSON.stringify(schema);
    expect(check(schema, { a: 1 })).toEqual({ ok: true, args: { a: "1" } });
    expect(check(schema, { a: "x" })).toEqual({ ok: true, args: { a: "x" } });
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(["$ref"]);
  });
});
