/**
 * Explicit wiring (issue 34, docs/architecture.md "Layers"): the runtime reaches implementations
 * through what it is handed (`machine.provide(...)`, a runtime's fields, typed input), never through
 * XState's internal `_parent`, a registry keyed by actor, or a registration run when a module loads.
 *
 * The sites that remain are listed with their count: a new one fails, and a list entry may only
 * shrink (a branch that removes one need not touch this file, but should lower its count).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function sources(): { path: string; lines: string[] }[] {
  const files: { path: string; lines: string[] }[] = [];
  for (const dir of ["src", "machines"]) {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
      const path = relative(ROOT, join(entry.parentPath, entry.name));
      files.push({ path, lines: readFileSync(join(ROOT, path), "utf8").split("\n") });
    }
  }
  return files;
}

/** Code lines (not comment lines) of each file matching `pattern`, counted per file. */
function countsOf(pattern: RegExp): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { path, lines } of sources()) {
    const n = lines.filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && pattern.test(line)).length;
    if (n > 0) counts[path] = n;
  }
  return counts;
}

/** Every file in `found` is listed in `known` with at least as many sites (the debt only shrinks). */
function expectWithin(found: Record<string, number>, known: Record<string, number>): void {
  const over = Object.entries(found).filter(([path, n]) => n > (known[path] ?? 0));
  expect(over).toEqual([]);
}

describe("explicit wiring", () => {
  it("no new use of XState's internal _parent", () => {
    expectWithin(countsOf(/\b_parent\b/), {
      // The step worker finds its run when it starts: a restored worker is re-created by XState
      // without input, so typed input alone cannot tell it its run.
      "src/actors/steps-worker.ts": 2,
      // `forwardEvents: true` sends to the actor that invoked the embedded run.
      "src/api/run-logic.ts": 1,
      // A session's runs are found through their parent, the session (run-hosts below).
      "src/api/run-hosts.ts": 1,
    });
  });

  it("no new registry keyed by actor", () => {
    expectWithin(countsOf(/WeakMap<\s*(Any)?ActorRef/), {
      // Per-instance state of the worker's own actor logic, as XState's fromCallback and fromPromise keep theirs.
      "src/actors/steps-worker.ts": 1,
      // `agentEvents(actorRef)` is public API keyed by the run actor; the resolved input waits for the run's worker.
      "src/api/run-logic.ts": 2,
      // Runtimes of hosted runs (agentLoop, runToolCall, an Agent's session).
      "src/api/run-hosts.ts": 2,
    });
  });

  it("no registration when a module loads: no top-level call in src/ or machines/ but the CLI's entry", () => {
    // A statement at column 0 that is a call (`registerX(...)`, `x.y(...)`) runs on import.
    const calls = countsOf(/^[A-Za-z_$][\w$.]*\(/);
    // The live inspector's page script is browser code held in a string (PAGE_SCRIPT), not a module body.
    delete calls["src/inspector/page-script.ts"];
    expect(Object.keys(calls)).toEqual(["src/node/cli/main.ts"]);
  });
});
