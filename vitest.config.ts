import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    pool: "forks",
    // One worker per core. Vitest's default keeps a core for its own process, which on CI's two
    // cores leaves one worker, and much of the suite waits on child processes, Chromium, a Restate
    // server and tmux rather than computing: two workers took `npm test` from ≈400 s to ≈270 s there.
    maxWorkers: availableParallelism(),
    // A test that asserts nothing cannot fail: vitest fails it instead (issue 16).
    expect: { requireAssertions: true },
  },
});
