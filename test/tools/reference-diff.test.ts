/**
 * Differential test against the reference (@earendil-works/pi-agent-core 1.6, run as a black
 * box through its `runToolCall`): same schema and arguments → same error text, or the same
 * coerced arguments on success. Known, deliberate differences are pinned at the bottom.
 */
import * as reference from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineTool, toolDeclaration, validateToolArguments } from "../../src/tools/index.js";
import { obj } from "./helpers.js";

type RunToolCall = (call: unknown, options: unknown) => Promise<{ result: { content: { text?: string }[] }; isError: boolean }>;
// A devDependency, always installed by `npm ci`: imported, never skipped when missing (a missing
// reference fails the file instead of passing it silently).
const runToolCall = reference.runToolCall as unknown as RunToolCall;

const assistantMessage = { role: "assistant", content: [], api: "x", provider: "x", model: "x", usage: {}, stopReason: "toolUse", timestamp: 0 };

/** The reference's text for one call: its error text, or `OK <args as executed>`. */
async function referenceText(parameters: unknown, args: unknown, argumentsError?: string): Promise<string> {
  const tool = {
    name: "t",
    label: "t",
    description: "d",
    parameters,
    execute: async (_id: string, params: unknown) => ({ content: [{ type: "text", text: `OK ${JSON.stringify(params)}` }], details: {} }),
  };
  const call = { type: "toolCall", id: "1", name: "t", arguments: args, ...(argumentsError ? { argumentsError } : {}) };
  const outcome = await runToolCall(call, { tools: [tool], assistantMessage, context: { messages: [] } });
  return outcome.result.content.map((c) => c.text ?? "").join("");
}

function ourText(parameters: unknown, args: unknown, argumentsError?: string): string {
  const result = validateToolArguments({ name: "t", description: "d", parameters: parameters as Record<string, unknown> }, { arguments: args, argumentsError });
  return result.ok ? `OK ${JSON.stringify(result.args)}` : result.message;
}

const read = obj({ path: { type: "string" }, count: { type: "integer" } }, ["path", "count"]);
const cases: [string, unknown, unknown][] = [
  ["missing required", read, {}],
  ["wrong type", read, { path: "p", count: "abc" }],
  ["coercions", obj({ s: { type: "string" }, i: { type: "integer" }, b: { type: "boolean" }, a: { type: "array", items: { type: "string" } }, o: { type: "string" } }), { s: 1, i: "5", b: "true", a: "x", o: null }],
  ["nested path + enum", obj({ items: { type: "array", items: obj({ name: { type: "string" } }, ["name"]) }, mode: { enum: ["a", "b"] } }), { items: [{}], mode: "c" }],
  ["deep nested", obj({ a: obj({ b: { type: "array", items: obj({ c: { type: "integer" } }) } }) }), { a: { b: [{ c: 1 }, { c: "x" }] } }],
  ["bounds", obj({ n: { type: "number", minimum: 3, multipleOf: 2 }, s: { type: "string", maxLength: 1, pattern: "^a" } }), { n: 1, s: "bb" }],
  ["unknown fields", obj({ a: { type: "string" } }, [], { additionalProperties: false }), { a: "x", b: 1, c: 2 }],
  ["type union", obj({ a: { type: ["number", "null"] } }, ["a"]), { a: {} }],
  ["tagged anyOf", obj({ a: { anyOf: [obj({ k: { const: "x" }, v: { type: "string" } }, ["k", "v"]), obj({ k: { const: "y" }, n: { type: "number" } }, ["k", "n"])] } }), { a: { k: "y", n: "q" } }],
  ["oneOf many", obj({ a: { oneOf: [{ type: "number" }, { type: "integer" }] } }), { a: 1 }],
  ["root", obj({}, [], { minProperties: 1 }), {}],
  ["allOf", { allOf: [obj({}, ["a"]), obj({}, ["b"])] }, {}],
  ["recursive $ref", { type: "object", $defs: { n: obj({ v: { type: "integer" }, kids: { type: "array", items: { $ref: "#/$defs/n" } } }) }, properties: { root: { $ref: "#/$defs/n" } } }, { root: { v: "1", kids: [{ v: "2", kids: { v: "x" } }] } }],
  ["draft-7 tuple", { $schema: "http://json-schema.org/draft-07/schema#", ...obj({ t: { type: "array", items: [{ type: "number" }, { type: "string" }], additionalItems: false } }) }, { t: ["1", 2, 3] }],
  ["dependencies", obj({ a: {}, b: {} }, [], { dependentRequired: { a: ["b"] } }), { a: 1 }],
  ["dangling $ref", obj({ a: { $ref: "#/$defs/nope" } }), { a: 1 }],
  ["escaped keys", obj({ "a/b": { type: "number" }, "c~d": { type: "number" } }), { "a/b": "x", "c~d": "y" }],
  ["contains", obj({ a: { type: "array", contains: { type: "string" }, minContains: 2, maxContains: 3 } }), { a: ["x"] }],
];

describe("R21: differential test against pi-agent-core 1.6 runToolCall", () => {
  it.each(cases)("R21: %s", async (_label, parameters, args) => {
    expect(ourText(parameters, args)).toBe(await referenceText(parameters, args));
  });

  it("R21: argumentsError", async () => {
    expect(ourText(read, {}, "Unexpected token } in JSON")).toBe(await referenceText(read, {}, "Unexpected token } in JSON"));
  });

  it("R21: a zod tool reads like the reference given the zod tool's JSON Schema", async () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      parameters: z.object({ path: z.string(), mode: z.enum(["a", "b"]), tags: z.array(z.string()).optional() }),
      execute: async () => ({ content: [], details: {} }),
    });
    for (const args of [{}, { path: 1, mode: "c", tags: 2 }, { path: [], mode: "a" }]) {
      const ours = validateToolArguments(tool, { arguments: args });
      const text = ours.ok ? `OK ${JSON.stringify(ours.args)}` : ours.message;
      expect(text).toBe(await referenceText(toolDeclaration(tool).parameters, args));
    }
  });

  /**
   * Deliberate differences. The reference ports TypeBox's Value.Convert, which also turns null
   * into "null"/0/false, "" into 0, truncates non-integers for `integer`, and reads 1/0, "1"/"0"
   * as booleans. We apply only the R21 coercions, so such input fails with a clear line instead
   * of silently changing meaning. And a failed primitive union blames the branch of the value's
   * kind, not always the first branch.
   */
  const divergences: [string, unknown, unknown, string, string][] = [
    ["null for a required string", obj({ a: { type: "string" } }, ["a"]), { a: null }, 'OK {"a":"null"}', "a: expected string, got null"],
    ["null for a required number", obj({ a: { type: "number" } }, ["a"]), { a: null }, 'OK {"a":0}', "a: expected number, got null"],
    ["empty string as number", obj({ a: { type: "number" } }, ["a"]), { a: "" }, 'OK {"a":0}', "a: expected number, got string"],
    ["hex string as number", obj({ a: { type: "number" } }, ["a"]), { a: "0x10" }, 'OK {"a":16}', "a: expected number, got string"],
    ["truncation for integer", obj({ a: { type: "integer" } }, ["a"]), { a: 1.5 }, 'OK {"a":1}', "a: expected integer, got number"],
    ["boolean as number", obj({ a: { type: "number" } }, ["a"]), { a: true }, 'OK {"a":1}', "a: expected number, got boolean"],
    ['"1" as boolean', obj({ a: { type: "boolean" } }, ["a"]), { a: "1" }, 'OK {"a":true}', "a: expected boolean, got string"],
    ["null item in a string array", obj({ a: { type: "array", items: { type: "string" } } }), { a: [null] }, 'OK {"a":["null"]}', "a.0: expected string, got null"],
    ["primitive union blame", obj({ a: { anyOf: [{ type: "string", minLength: 5 }, { type: "number", minimum: 10 }] } }), { a: 3 }, "a: expected string, got integer", "a: expected >= 10"],
  ];

  it.each(divergences)("R21 (documented difference): %s", async (_label, parameters, args, referenceSays, weSay) => {
    expect(await referenceText(parameters, args)).toContain(referenceSays);
    expect(ourText(parameters, args)).toContain(weSay);
  });
});
