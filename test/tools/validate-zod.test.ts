import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineTool, validateToolArguments } from "../../src/tools/index.js";
import { deepFreeze } from "./helpers.js";

const done = { content: [], details: undefined };
const toolOf = <S extends z.ZodType>(parameters: S) => defineTool({ name: "z", description: "", parameters, execute: async () => done });
const lines = (tool: Parameters<typeof validateToolArguments>[0], args: unknown) => {
  const result = validateToolArguments(tool, { arguments: args });
  if (result.ok) throw new Error(`expected failure, got ${JSON.stringify(result.args)}`);
  return result.message.split("\n\nReceived arguments:\n")[0].split("\n").slice(1);
};

describe("R21 zod tools", () => {
  const read = toolOf(
    z.object({
      path: z.string(),
      limit: z.int().min(1).default(10),
      mode: z.enum(["text", "binary"]).optional(),
      tags: z.array(z.string()).optional(),
      follow: z.boolean().optional(),
    }),
  );

  it("R21: args are zod's parsed output: defaults applied, coercions guided by the JSON Schema export", () => {
    expect(validateToolArguments(read, { arguments: { path: 5, tags: "x", follow: "true", mode: null } })).toEqual({
      ok: true,
      args: { path: "5", limit: 10, tags: ["x"], follow: true },
    });
    expect(validateToolArguments(read, { arguments: { path: "p", limit: "3" } })).toEqual({ ok: true, args: { path: "p", limit: 3 } });
    // null for an optional (defaulted) property is dropped, so zod's default applies.
    expect(validateToolArguments(read, { arguments: { path: "p", limit: null } })).toEqual({ ok: true, args: { path: "p", limit: 10 } });
  });

  it("R21: transforms run, and args never alias the tool call's arguments", () => {
    const tool = toolOf(z.object({ name: z.string().transform((s) => s.toUpperCase()), blob: z.any() }));
    const args = deepFreeze({ name: "a", blob: { deep: [1] } });
    const result = validateToolArguments(tool, { arguments: args });
    expect(result).toEqual({ ok: true, args: { name: "A", blob: { deep: [1] } } });
    expect(result.ok && (result.args as { blob: unknown }).blob).not.toBe(args.blob);
  });

  it("R21: zod issues map to path lines worded like the JSON Schema ones", () => {
    const tool = toolOf(
      z.object({
        path: z.string(),
        limit: z.int().min(1),
        mode: z.enum(["a", "b"]),
        lit: z.literal("x"),
        strict: z.strictObject({ a: z.string() }),
        list: z.array(z.object({ n: z.number() })),
        few: z.array(z.number()).max(1),
        s: z.string().regex(/^x/).max(2),
        e: z.email(),
        r: z.string().refine((v) => v.length > 2, "too short"),
        m: z.number().multipleOf(2).lt(0),
      }),
    );
    const args = { limit: 0.5, mode: "c", lit: "y", strict: { a: "1", b: 2 }, list: [{ n: "q" }, {}], few: [1, 2], s: "yyy", e: "nope", r: "a", m: 3 };
    expect(lines(tool, args)).toEqual([
      "  - path: missing",
      "  - limit: expected integer, got number",
      '  - mode: expected one of ["a","b"]',
      '  - lit: expected "x"',
      "  - strict.b: unknown field",
      "  - list.0.n: expected number, got string",
      "  - list.1.n: missing",
      "  - few: expected at most 1 items",
      "  - s: expected to match ^x",
      "  - s: expected at most 2 characters",
      "  - e: expected format email",
      "  - r: too short",
      "  - m: expected a multiple of 2",
      "  - m: expected < 0",
    ]);
  });

  it("R21: a missing property reads \"missing\" whatever its schema (enum, union, literal)", () => {
    const tool = toolOf(z.object({ e: z.enum(["a", "b"]), u: z.union([z.string(), z.number()]), l: z.literal("x") }));
    expect(lines(tool, {})).toEqual(["  - e: missing", "  - u: missing", "  - l: missing"]);
  });

  it("R21: unions are explained by the branch the value meant; a bad discriminator lists the options", () => {
    const plain = toolOf(z.object({ u: z.union([z.object({ k: z.literal("a"), v: z.string() }), z.object({ k: z.literal("b"), n: z.number() })]) }));
    expect(lines(plain, { u: { k: "b", n: "x" } })).toEqual(["  - u.n: expected number, got string"]);
    const tagged = toolOf(z.object({ u: z.discriminatedUnion("k", [z.object({ k: z.literal("a") }), z.object({ k: z.literal("b") })]) }));
    expect(lines(tagged, { u: { k: "c" } })).toEqual(['  - u.k: expected one of ["a","b"]']);
  });

  it("R21: the full message layout and argumentsError match the JSON Schema path", () => {
    expect(validateToolArguments(read, { arguments: { path: [] } })).toEqual({
      ok: false,
      message: 'Validation failed for tool "z":\n  - path: expected string, got array\n\nReceived arguments:\n{\n  "path": []\n}',
    });
    expect(validateToolArguments(read, { arguments: {}, argumentsError: "bad json" })).toEqual({
      ok: false,
      message: 'Invalid arguments for tool "z": bad json',
    });
  });

  it("R21: a top-level problem is reported at root; an async refinement fails instead of throwing", () => {
    expect(lines(read, "text")).toEqual(["  - root: expected object, got string"]);
    const asyncTool = toolOf(z.object({ a: z.string().refine(async () => true) }));
    const result = validateToolArguments(asyncTool, { arguments: { a: "x" } });
    expect(result.ok).toBe(false);
    expect(result.ok === false && result.message).toMatch(/^Validation failed for tool "z":\n {2}- root: /);
  });

  it("R21: zod values JSON cannot carry (dates from prepareArguments) survive the copy", () => {
    const tool = toolOf(z.object({ at: z.date() }));
    const at = new Date(0);
    const result = validateToolArguments(tool, { arguments: { at } });
    expect(result.ok && (result.args as { at: Date }).at.getTime()).toBe(0);
  });
});
