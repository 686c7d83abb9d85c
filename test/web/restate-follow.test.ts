/**
 * Issue 21: the web example follows a session that runs on Restate (`follow.html?session=ID`),
 * across a worker restart: the worker is SIGKILLed mid-run, a new one takes over from the
 * journal, and the page, which only ever asks for the events after the last id it drew, ends with
 * each tool card once and the final answer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, skipWithoutChromium, type ChromiumSession } from "../support/chromium.js";
import { buildExample, ensureLibraryBuilt, startExampleServer, type ExampleServer } from "../../scripts/example-web.js";
import { startLocalRestateServer, type LocalRestateServer } from "../../src/restate/local-server.js";
import { freePort, startWorker } from "../restate/support.js";

describe.skipIf(skipWithoutChromium)("issue 21: the web example follows a session on Restate", () => {
  let restate: LocalRestateServer;
  let example: ExampleServer;
  let browser: ChromiumSession;
  const outDir = mkdtempSync(join(tmpdir(), "web-chat-follow-"));

  beforeAll(async () => {
    await ensureLibraryBuilt();
    const [server] = await Promise.all([startLocalRestateServer({ retryIntervalMs: 50 }), buildExample({ quiet: true, outDir })]);
    restate = server;
    example = await startExampleServer({ port: 0, dir: outDir, restate: { ingressUrl: restate.ingressUrl } });
    browser = await launchChromium({ width: 1100, height: 800 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await example?.close();
    await restate?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  it("issue 21: the page draws the run live, keeps its place across a worker restart, and draws no event twice", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const first = await startWorker(port, { TOOL_MS: "150" });
    await restate.registerDeployment(`http://127.0.0.1:${port}`);
    const key = "follow-me";
    const reply = fetch(`${restate.ingressUrl}/agentSession/${key}/prompt`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ text: key }),
    });

    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${example.url}follow.html?session=${key}`);
    await page.waitForSelector("body[data-ready=true]");
    // Live: the first turn's cards appear while the run goes on.
    await page.waitForSelector(".tool[data-status]");
    await first.executions(6);
    await first.kill();
    const second = await startWorker(port, { TOOL_MS: "150" });
    try {
      const { lastEventId } = (await (await reply).json()) as { lastEventId: number };
      await page.waitForFunction((id) => document.body.dataset.lastEventId === String(id), lastEventId, { timeout: 30_000 });
      const cards = await page.$$eval(".tool", (nodes) => nodes.map((node) => (node as HTMLElement).dataset.toolCallId));
      expect(cards).toHaveLength(15);
      expect(new Set(cards).size).toBe(15);
      expect(await page.$$eval(".tool", (nodes) => nodes.every((node) => ["done", "error"].includes((node as HTMLElement).dataset.status ?? "")))).toBe(true);
      expect(await page.textContent("#transcript")).toContain("all done");
      expect(await page.getAttribute("body", "data-runs-ended")).toBe("1");
      expect(errors).toEqual([]);
      // A session nobody ran: no events, through the same route.
      const empty = await fetch(`${example.url}api/restate/events`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ session: "never-used" }) });
      expect(await empty.json()).toEqual({ events: [], lastEventId: 0 });
    } finally {
      await second.kill();
    }
  });

  it("issue 21: the follow route is read-only and refuses a malformed session id or another origin", async () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${example.url}api/restate/events`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    expect((await post({ session: "../agentSession/x/prompt" })).status).toBe(400);
    expect((await post({ session: "ok" }, { origin: "http://evil.example" })).status).toBe(403);
    expect((await fetch(`${example.url}api/restate/events`)).status).toBe(405);
  });
});
