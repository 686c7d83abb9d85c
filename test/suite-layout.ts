/**
 * How the suite is laid out over vitest's workers (vitest.config.ts): the files that need a worker
 * of their own, and the ones started first. Plain data, so that test/build/test-isolation.test.ts
 * can hold every test file to it.
 */

/**
 * Files that run each in a fresh worker process. Those that must: they replace a module of src/
 * with `vi.mock`, run in another environment (happy-dom), or leave a global replaced for the rest
 * of the file (a `console.warn` spy, `Function`/`eval`), which the next file in a shared worker would
 * inherit. And the files that compute most (seconds of CPU each, 10⁶-element allocations): a fresh
 * heap keeps their tests' time what it was (on a loaded machine some came near the 20 s timeout
 * after other files in a shared worker); the start-up they pay is ≈1 s each, against their 5–15 s.
 */
export const ISOLATED = [
  "test/durable/replay.property.test.ts",
  "test/cli/recovery.test.ts",
  "test/react/use-agent.test.ts",
  "test/react/render-counts.test.ts",
  "test/tools/no-eval.test.ts",
  "test/boundary/throwing-inspector.test.ts",
  "test/boundary/compose-observers.test.ts",
  "test/node-tools/read-errors.test.ts",
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
export const SLOW_FIRST = [
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
