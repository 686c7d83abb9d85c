import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files that run each in a fresh worker process. Those that must: they replace a module of src/
 * with `vi.mock`, run in another environment (happy-dom), or leave a global replaced for the rest
 * of the file (a `console.warn` spy, `Function`/`eval`), which the next file in a shared worker would
 * inherit. And the files that compute most (seconds of CPU each, 10⁶-element allocations): a fresh
 * heap keeps their tests' time what it was (on a loaded machine some came near the 20 s timeout
 * after other files in a shared worker); the start-up they pay is ≈1 s each, against their 5–15 s.
 */
const ISOLATED = [
  "test/durable/replay.property.test.ts",
  "test/cli/recovery.test.ts",
  "test/react/use-agent.test.ts",
  "test/react/render-counts.test.ts",
  "test/tools/no-eval.test.ts",
  "test/boundary/throwing-inspector.test.ts",
  "test/boundary/compose-observers.test.ts",
  // The heavy computations.
  "test/model/*.test.ts",
  "test/property/*.test.ts",
  "test/boundary/entry-points.test.ts",
  "test/node-tools/races.test.ts",
  "test/drop-in/config-types.test.ts",
  "test/durable/resume.test.ts",
  "test/durable/agent-resume.test.ts",
];

/**
 * The files that take longest (mostly waiting on child processes: a Restate server and its
 * workers, SIGKILLed crash children, Chromium, tmux, tsc), started first so that none of them is
 * left running alone at the end while the other core idles. Vitest orders a run by the durations it
 * cached from the last one; a fresh clone has none, so without this list it would order by file
 * size and could start `test/restate/session.test.ts` (≈1 min) last.
 */
const SLOW_FIRST = [
  "test/restate/session.test.ts",
  "test/durable/crash.test.ts",
  "test/restate/delivery.test.ts",
  "test/docs/snippets.test.ts",
  "test/web/web-chat.test.ts",
  "test/visual/viewer.test.ts",
  "test/web/react-chat.test.ts",
  "test/web/restate-follow.test.ts",
  "test/restate/otel.test.ts",
  "test/cli/resume-e2e.test.ts",
  "test/cli/paste-e2e.test.ts",
  "test/restore/run-restore.test.ts",
];

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
