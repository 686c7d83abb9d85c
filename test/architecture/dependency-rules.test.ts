/**
 * The layering rules (.dependency-cruiser.cjs, docs/architecture.md "Layers") as CI runs them
 * (`npm run lint:deps`), and proof that the checker sees type imports: the cycles this project
 * had were made of `import type` and inline `import("./x").T` types only.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { StepName as ProtocolStepName } from "../../src/protocol/index.js";
import type { StepName as MachineStepName } from "../../machines/steps.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// src/protocol/ lists the step names (the abort grace names each) without importing machines/:
// the typecheck keeps that list equal to the machines' own.
expectTypeOf<ProtocolStepName>().toEqualTypeOf<MachineStepName>();

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  dependencyTypes: string[];
  cycle?: { name: string }[];
}

function cruise(...paths: string[]): { modules: number; violations: Violation[] } {
  const result = spawnSync(process.execPath, ["node_modules/dependency-cruiser/bin/dependency-cruise.mjs", ...paths, "--config", ".dependency-cruiser.cjs", "--output-type", "json"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (!result.stdout) throw new Error(`depcruise printed nothing: ${result.stderr}`);
  const { summary } = JSON.parse(result.stdout);
  return { modules: summary.totalCruised, violations: summary.violations };
}

describe("dependency rules", () => {
  // A cruise of src/ and machines/ takes ~3 s on a quiet machine, 20 s and more on a loaded one.
  it("report a cycle made of an inline import(\"./x\").T type and an import type", { timeout: 120_000 }, () => {
    const fixture = "test/architecture/fixtures/type-cycle";
    const { violations } = cruise(fixture);
    expect(violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to, types: v.dependencyTypes, cycle: v.cycle?.map((step) => step.name) }))).toEqual([
      { rule: "no-circular", from: `${fixture}/a.ts`, to: `${fixture}/b.ts`, types: ["local", "type-import"], cycle: [`${fixture}/b.ts`, `${fixture}/a.ts`] },
    ]);
  });

  it("hold for src/ and machines/: no cycle, machines see only src/protocol/, the core loads no integration", { timeout: 120_000 }, () => {
    const { modules, violations } = cruise("src", "machines");
    expect(violations).toEqual([]);
    expect(modules).toBeGreaterThan(200);
  });
});
