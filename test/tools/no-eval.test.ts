import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { safeParse } from "zod/v4/core";
import { defineTool, validateToolArguments } from "../../src/tools/index.js";

const done = { content: [], details: undefined };
const root = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `fn` with `Function` and `eval` replaced by recorders that throw; returns how often code generation was attempted. */
function codeGenerationAttempts(fn: () => void): number {
  const realFunction = globalThis.Function;
  const realEval = globalThis.eval;
  let attempts = 0;
  const refuse = () => {
    attempts++;
    throw new EvalError("code generation refused by test");
  };
  globalThis.Function = new Proxy(realFunction, { apply: refuse, construct: refuse });
  globalThis.eval = refuse as typeof eval;
  try {
    fn();
  } finally {
    globalThis.Function = realFunction;
    globalThis.eval = realEval;
  }
  return attempts;
}

function tools() {
  // Built before the stubs go in, as an app builds its tools at startup.
  const zodTool = defineTool({
    name: "zod",
    description: "",
    parameters: z.object({ path: z.string(), n: z.number(), inner: z.object({ a: z.array(z.object({ b: z.boolean() })) }).optional() }),
    execute: async () => done,
  });
  const jsonTool = defineTool({
    name: "json",
    description: "",
    parameters: {
      type: "object",
      properties: { a: { type: "integer" }, u: { anyOf: [{ type: "number" }, { type: "boolean" }] }, r: { $ref: "#/$defs/s" } },
      required: ["a"],
      $defs: { s: { type: "string", pattern: "^x" } },
    },
    execute: async () => done,
  });
  return { zodTool, jsonTool };
}

describe("R21: validation never evaluates code", () => {
  it("R21: the recorder catches zod's JIT when it is not disabled (control)", () => {
    const schema = z.object({ a: z.string(), b: z.number() });
    const attempts = codeGenerationAttempts(() => {
      for (let i = 0; i < 3; i++) {
        try {
          safeParse(schema, { a: "x", b: 1 });
        } catch {
          // zod may surface the refusal; only the attempt matters here
        }
      }
    });
    expect(attempts).toBeGreaterThan(0);
  });

  it("R21: validating zod and JSON Schema tools (valid, coerced, invalid; repeatedly) makes no code-generation attempt", () => {
    const { zodTool, jsonTool } = tools();
    const results: boolean[] = [];
    const attempts = codeGenerationAttempts(() => {
      for (let i = 0; i < 3; i++) {
        results.push(validateToolArguments(zodTool, { arguments: { path: "p", n: "1", inner: { a: [{ b: "true" }] } } }).ok);
        results.push(validateToolArguments(zodTool, { arguments: { path: 1 } }).ok);
        results.push(validateToolArguments(jsonTool, { arguments: { a: "1", u: "true", r: "xy" } }).ok);
        results.push(validateToolArguments(jsonTool, { arguments: { a: "z", r: "y" } }).ok);
      }
    });
    expect(attempts).toBe(0);
    expect(results).toEqual([true, false, true, false, true, false, true, false, true, false, true, false]);
  });

  it("R21: works in a Node process that forbids code generation from strings", () => {
    const script = [
      'import * as z from "zod";',
      'import { defineTool, validateToolArguments } from "./src/tools/index.ts";',
      "const done = async () => ({ content: [], details: undefined });",
      'const zt = defineTool({ name: "z", description: "", parameters: z.object({ n: z.number() }), execute: done });',
      'const jt = defineTool({ name: "j", description: "", parameters: { type: "object", properties: { n: { type: "integer" } } }, execute: done });',
      'const out = [zt, jt].flatMap((t) => [validateToolArguments(t, { arguments: { n: "1" } }).ok, validateToolArguments(t, { arguments: { n: "x" } }).ok]);',
      'let blocked = false; try { new Function("") } catch { blocked = true }',
      "console.log(JSON.stringify({ out, blocked }));",
    ].join("\n");
    const stdout = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
    });
    expect(JSON.parse(stdout.trim().split("\n").at(-1) ?? "")).toEqual({ out: [true, false, true, false], blocked: true });
  });

  it("R21: src/tools imports no Node built-ins and contains no eval/new Function", () => {
    const dir = `${root}src/tools/`;
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
      // Code only: comments may explain what is avoided.
      const source = readFileSync(dir + file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
      expect(source, file).not.toMatch(/from\s+["']node:|from\s+["'](fs|path|crypto|url|util|child_process)["']/);
      expect(source, file).not.toMatch(/\beval\s*\(|new\s+Function\b|\bFunction\s*\(/);
    }
  });
});
