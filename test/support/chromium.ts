/**
 * Debian's Chromium driven by playwright-core (no browser download), with the launch flags this
 * machine kind needs: without the background-networking flags Chromium keeps dialling out and the
 * closed network refuses it. Each launch gets a fresh profile, removed on close.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { requireSystemBinary } from "./system-binary.js";

/** Debian's Chromium on PATH; undefined (tests skip, with a notice) when missing outside CI. */
export const CHROMIUM = requireSystemBinary({ name: "chromium", debianPackage: "chromium", purpose: "the browser tests (viewer, web example)" });

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

/** Browser tests skip only on a developer machine without Chromium; in CI a missing one fails at import. */
export const skipWithoutChromium = CHROMIUM === undefined;

export interface ChromiumSession {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<ChromiumSession> {
  if (!CHROMIUM) throw new Error("chromium not found on PATH (apt-get install chromium)");
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
