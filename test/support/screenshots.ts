/**
 * Where tests save their screenshots: an ignored folder, so `npm test` leaves the tree clean.
 * `npm run screenshots` (scripts/screenshots.ts) copies them over the README's images.
 */
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const SCREENSHOT_DIR = join(resolve(dirname(fileURLToPath(import.meta.url)), "../.."), "test-results/screenshots");

/** The README images, each with the test that takes it. */
export const README_SCREENSHOTS = {
  "viewer-screenshot.png": "test/visual/viewer.test.ts",
  "web-chat.png": "test/web/web-chat.test.ts",
  "react-chat.png": "test/web/react-chat.test.ts",
  "react-chat-agent.png": "test/web/react-chat.test.ts",
} as const;

/** The path a test saves `name` to (the folder is created). */
export function screenshotPath(name: keyof typeof README_SCREENSHOTS): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, name);
}
