/**
 * Issue 34: every TypeScript block of README.md and docs/ type-checks as its own module against the
 * sources (one tsc run for all of them), and the blocks marked `// @runnable` run with tsx. A block
 * that uses a name it does not declare fails: the seeded fixture proves it in the same tsc run.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diagnosticsBySnippet, docFiles, extractSnippets, moduleName, REPO, writeWorkspace, type Snippet } from "./snippets.js";

const run = promisify(execFile);

const FIXTURE = "test/docs/fixtures/bad-snippet.md";
const TSC = path.join(REPO, "node_modules/typescript/bin/tsc");
const TSX = path.join(REPO, "node_modules/tsx/dist/cli.mjs");
const RUNNER = path.join(REPO, "test/docs/run-snippets.ts");

const snippets = docFiles().flatMap((file) => extractSnippets(file, readFileSync(path.join(REPO, file), "utf8")));
const seeded = extractSnippets(FIXTURE, readFileSync(path.join(REPO, FIXTURE), "utf8"));
const where = (snippet: Snippet) => `${snippet.file}:${snippet.line}`;

mkdirSync(path.join(REPO, "test-results"), { recursive: true });
// Inside the repository, so the blocks resolve zod, xstate and rxjs from its node_modules.
const dir = mkdtempSync(path.join(REPO, "test-results/docs-snippets-"));
const tsconfig = writeWorkspace(dir, [...snippets, ...seeded]);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let diagnostics: Map<Snippet, string[]>;
/** Each runnable block's outcome (null: it ran to completion), from one tsx process for all. */
let outcomes: Record<string, string | null> = {};
const runnable = snippets.filter((snippet) => snippet.runnable);
const seededRunnable = seeded.filter((snippet) => snippet.runnable);
beforeAll(async () => {
  // tsc and the runner at once: two processes, one for each core.
  const files = [...runnable, ...seededRunnable].map((snippet) => path.join(dir, moduleName(snippet)));
  const [result, ran] = await Promise.all([
    run(process.execPath, [TSC, "-p", tsconfig], { cwd: dir, maxBuffer: 64 << 20 }).catch((error: { stdout?: string; stderr?: string }) => error),
    run(process.execPath, [TSX, "--tsconfig", tsconfig, RUNNER, ...files], {
      cwd: dir,
      timeout: 120_000,
      maxBuffer: 64 << 20,
      env: { ...process.env, ANTHROPIC_API_KEY: "" },
    }).catch((error: { stdout?: string; stderr?: string }) => error),
  ]);
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  diagnostics = diagnosticsBySnippet(output, [...snippets, ...seeded]);
  // An error tsc could not pin to a block (a broken tsconfig, a source error) must not pass silently.
  const unplaced = output.split("\n").filter((line) => /error TS\d+/.test(line) && ![...snippets, ...seeded].some((s) => line.includes(moduleName(s))));
  if (unplaced.length > 0) throw new Error(`tsc reported errors outside the snippets:\n${unplaced.join("\n")}`);
  const line = /^@@results (.*)$/m.exec(ran.stdout ?? "")?.[1];
  if (!line) throw new Error(`the snippet runner reported nothing:\n${ran.stderr ?? ""}`);
  outcomes = JSON.parse(line);
}, 240_000);

describe("docs snippets", () => {
  it("README.md and docs/ have TypeScript blocks to check", () => {
    expect(snippets.length).toBeGreaterThan(10);
    expect(snippets.some((snippet) => snippet.file === "README.md")).toBe(true);
  });

  it("README.md stays a front page: at most 300 lines (topics go to docs/)", () => {
    expect(readFileSync(path.join(REPO, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(300);
  });

  it("every TypeScript block type-checks against the sources", () => {
    const failures = snippets.flatMap((snippet) => diagnostics.get(snippet) ?? []);
    expect(failures).toEqual([]);
  });

  it("a block that uses undeclared names fails (the seeded fixture)", () => {
    expect(seeded).toHaveLength(2);
    // TS2304, or TS2552 when tsc has a near name to suggest (the DOM's `Option`).
    const found = (diagnostics.get(seeded[0]!) ?? []).map((line) => /^(.*?): error TS(?:2304|2552): (Cannot find name '\w+')/.exec(line)?.slice(1).join(" "));
    expect(found).toEqual([`${FIXTURE}:8 Cannot find name 'options'`, `${FIXTURE}:9 Cannot find name 'showLiveBadge'`]);
  });

  it("a complete program that throws fails (the seeded fixture)", () => {
    expect(seededRunnable).toHaveLength(1);
    expect(outcomes[path.join(dir, moduleName(seededRunnable[0]!))]).toMatch(/^Error: seeded failure/);
  });

  it("some blocks are complete programs", () => {
    expect(runnable.length).toBeGreaterThan(3);
  });
  for (const snippet of runnable) {
    it(`${where(snippet)} runs to completion`, () => {
      expect(outcomes[path.join(dir, moduleName(snippet))]).toBeNull();
    });
  }
});
