/**
 * Explicit wiring (issue 34, docs/architecture.md "Layers"): the runtime reaches implementations
 * through what it is handed (`machine.provide(...)`, a runtime's fields, typed input), never through
 * XState's internal `_parent`, a registry keyed by actor, or a registration run when a module loads.
 *
 * None remains (issue 34): the run's and the session's runtimes are found by plain-data keys in
 * context (`RunHosts`, `SessionHosts`), and `forwardEvents` reaches the invoking actor through the
 * public `parent` option the run actor was created with.
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

describe("explicit wiring", () => {
  it("no use of XState's internal _parent", () => {
    expect(countsOf(/\b_parent\b/)).toEqual({});
  });

  it("no registry keyed by actor", () => {
    expect(countsOf(/WeakMap<\s*(Any)?(ActorRef|Actor)\b/)).toEqual({});
  });

  it("no registration when a module loads: no top-level call in src/ or machines/ but the CLI's entry", () => {
    // A statement at column 0 that is a call (`registerX(...)`, `x.y(...)`) runs on import.
    const calls = countsOf(/^[A-Za-z_$][\w$.]*\(/);
    // The live inspector's page script is browser code held in a string (PAGE_SCRIPT), not a module body.
    delete calls["src/inspector/page-script.ts"];
    expect(Object.keys(calls)).toEqual(["src/node/cli/main.ts"]);
  });
});
