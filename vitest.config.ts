import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    pool: "forks",
    // A test that asserts nothing cannot fail: vitest fails it instead (issue 16).
    expect: { requireAssertions: true },
  },
});
