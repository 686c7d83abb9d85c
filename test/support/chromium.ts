/**
 * Debian's Chromium driven by playwright-core (no browser download), with the launch flags this
 * machine kind needs: without the background-networking flags Chromium keeps dialling out and the
 * closed network refuses it. Each launch gets a fresh profile, removed on close.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** `chromium` from PATH (Debian: `apt-get install chromium`), else Debian's path. */
export const CHROMIUM =
  (process.env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, "chromium"))
    .find((path) => existsSync(path)) ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Browser tests skip only on a developer machine without Chromium; in CI they must run. */
export const skipWithoutChromium = !existsSync(CHROMIUM) && !process.env.CI;

export interface ChromiumSession {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<ChromiumSession> {
  const userDataDir = await mkdtemp(join(tmpdir(), "chromium-test-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
