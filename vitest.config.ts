import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { ISOLATED, SLOW_FIRST } from "./test/suite-layout.js";

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    // Stable: the rest keep vitest's order (the last run's durations, longest first, when cached).
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    testTimeout: 20_000,
    pool: "forks",
    // One worker per core. Vitest's default keeps a core for its own process, which on CI's two
    // cores leaves one worker, and much of the suite waits on child processes, Chromium, a Restate
    // server and tmux rather than computing: two workers took `npm test` from ≈400 s to ≈270 s there.
    maxWorkers: availableParallelism(),
    sequence: { sequencer: SlowFirstSequencer },
    // A test that asserts nothing cannot fail: vitest fails it instead (issue 16).
    expect: { requireAssertions: true },
    projects: [
      {
        // A worker process runs file after file and keeps the modules it imported: a fresh process
        // per file re-imported src/, xstate, the reference pi-agent-core and their dependencies
        // (≈1 s of CPU a file, ≈190 s of the suite's ≈600 s on CI's machine).
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: ISOLATED, isolate: false },
      },
      { extends: true, test: { name: "isolated", include: ISOLATED, isolate: true } },
    ],
  },
});
