/**
 * `npm run screenshots`: regenerates the README's images. Runs the browser tests that take them
 * (with CI set, so a missing Chromium fails instead of skipping), then copies each screenshot from
 * test-results/screenshots/ into visualizations/. `npm test` itself never writes visualizations/.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { README_SCREENSHOTS, SCREENSHOT_DIR } from "../test/support/screenshots.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const names = Object.keys(README_SCREENSHOTS) as (keyof typeof README_SCREENSHOTS)[];

// A stale screenshot from an earlier run must not be copied as if this run took it.
for (const name of names) rmSync(join(SCREENSHOT_DIR, name), { force: true });
const vitest = join(ROOT, "node_modules/vitest/vitest.mjs");
const run = spawnSync(process.execPath, [vitest, "run", ...new Set(Object.values(README_SCREENSHOTS))], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, CI: process.env.CI || "1" },
});
if (run.status !== 0) {
  console.error("screenshots: the browser tests failed; visualizations/ left as it was");
  process.exit(1);
}
for (const name of names) {
  copyFileSync(join(SCREENSHOT_DIR, name), join(ROOT, "visualizations", name));
  console.log(`visualizations/${name} ← ${README_SCREENSHOTS[name]}`);
}
