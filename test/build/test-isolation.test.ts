/**
 * The suite shares worker processes between test files (vitest.config.ts, `isolate: false`): a
 * module replaced with `vi.mock`, another environment, or a global left replaced would leak into
 * the files that run after it in the same worker, and fail them, or worse, make them pass for the
 * wrong reason, depending on the order. Such a file must be in `ISOLATED` (test/suite-layout.ts);
 * this holds every test file to that, so a new one cannot be forgotten there.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { ISOLATED, SLOW_FIRST } from "../suite-layout.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** This file: its examples of what needs isolation are strings. */
const SELF = "test/build/test-isolation.test.ts";

function testFiles(dir = join(ROOT, "test")): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "fixtures" || name === "node_modules" ? [] : testFiles(path);
    return name.endsWith(".test.ts") ? [relative(ROOT, path).split("\\").join("/")] : [];
  });
}

/** What makes a file unfit for a shared worker: always, or unless the same file puts it back. */
const ALWAYS: Array<[string, RegExp]> = [
  ["replaces a module (vi.mock)", /\bvi\.(do)?[mM]ock\s*\(/],
  ["runs in another environment", /@vitest-environment\s+(?!node\b)/],
];
const UNLESS_RESTORED: Array<[string, RegExp, RegExp]> = [
  ["stubs a global", /\bvi\.stubGlobal\s*\(/, /\bvi\.unstubAllGlobals\s*\(/],
  ["stubs an environment variable", /\bvi\.stubEnv\s*\(/, /\bvi\.unstubAllEnvs\s*\(/],
  ["spies on a global object", /\bvi\.spyOn\(\s*(console|globalThis|process)\b/, /\.mockRestore\s*\(|\bvi\.restoreAllMocks\s*\(|restoreMocks/],
];

/** `globalThis.X = …`, `console.X = …`, `process.X = …` (not `==`): put back when assigned again in the file. */
function unrestoredAssignments(source: string): string[] {
  const counts = new Map<string, number>();
  for (const match of source.matchAll(/(?<![.\w$])(globalThis|console|process)\.([A-Za-z_$][\w$]*)\s*=(?!=)/g)) {
    const key = `${match[1]}.${match[2]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n < 2).map(([key]) => `assigns ${key} once`);
}

export function needsIsolation(source: string): string[] {
  return [
    ...ALWAYS.filter(([, pattern]) => pattern.test(source)).map(([why]) => why),
    ...UNLESS_RESTORED.filter(([, pattern, restore]) => pattern.test(source) && !restore.test(source)).map(([why]) => why),
    ...unrestoredAssignments(source),
  ];
}

describe("the suite's shared workers", () => {
  const files = testFiles();
  const isolated = picomatch(ISOLATED);

  it("finds the suite's files", () => {
    expect(files.length).toBeGreaterThan(150);
    expect(files).toContain(SELF);
  });

  it("every file that replaces a module, an environment or a global for good runs in a worker of its own", () => {
    const offenders = files
      .map((file) => ({ file, why: needsIsolation(readFileSync(join(ROOT, file), "utf8")) }))
      .filter(({ file, why }) => file !== SELF && why.length > 0 && !isolated(file));
    expect(offenders).toEqual([]);
  });

  it("every ISOLATED and SLOW_FIRST entry names files that exist (a renamed file would silently share a worker)", () => {
    for (const pattern of ISOLATED) expect(files.filter((file) => picomatch(pattern)(file)), pattern).not.toEqual([]);
    for (const file of SLOW_FIRST) expect(files, file).toContain(file);
  });

  it("the check itself: what it flags and what it lets through", () => {
    expect(needsIsolation('vi.mock("../../src/x.js", () => ({}));')).toEqual(["replaces a module (vi.mock)"]);
    expect(needsIsolation("// @vitest-environment happy-dom\n")).toEqual(["runs in another environment"]);
    expect(needsIsolation("// @vitest-environment node\n")).toEqual([]);
    expect(needsIsolation('const warn = vi.spyOn(console, "warn");')).toEqual(["spies on a global object"]);
    expect(needsIsolation('const warn = vi.spyOn(console, "warn"); try {} finally { warn.mockRestore(); }')).toEqual([]);
    expect(needsIsolation("globalThis.fetch = fake;")).toEqual(["assigns globalThis.fetch once"]);
    expect(needsIsolation("const real = console.error; console.error = fake; try {} finally { console.error = real; }")).toEqual([]);
    expect(needsIsolation("if (process.exitCode == 1) x.process.y = 2;")).toEqual([]);
  });
});
