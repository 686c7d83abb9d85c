/**
 * examples/react-chat in Chromium: `useChat` of @ai-sdk/react (pinned) against the route of
 * `xstate-agent-loop/ui-stream`, served by a Node server here. A multi-turn session with parallel
 * tools, one approval approved and one rejected from the page, stop mid-stream, steering mid-run,
 * and a reload mid-run that resumes without duplicated or missing text (the final DOM against the
 * session's transcript).
 */
import { spawnSync } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool, type AgentMessage, type AgentToolResult } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/testing/index.js";
import { createChatRoute, uiMessagesOf } from "../../src/ui-stream/index.js";
import { ensureLibraryBuilt } from "../../scripts/example-web.js";
import { launchChromium, skipWithoutChromium, type ChromiumSession } from "../support/chromium.js";
import { screenshotPath } from "../support/screenshots.js";
import { serveWeb } from "../support/web-handler.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const EXAMPLE = join(ROOT, "examples/react-chat");
const OUT = join(EXAMPLE, "dist");
const STORY = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ");
const FAST = "Okay, faster: " + Array.from({ length: 60 }, (_, i) => `n${i}`).join(" ");

const types: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".map": "application/json" };

describe("react-chat example sources", () => {
  it("type-check against the package's published types and the pinned ai@7 / @ai-sdk/react (Vite does not type-check)", { timeout: 180_000 }, async () => {
    await ensureLibraryBuilt();
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const result = spawnSync(process.execPath, [tsc, "-p", "examples/react-chat/tsconfig.json"], { cwd: ROOT, encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});

describe.skipIf(skipWithoutChromium)("examples/react-chat: useChat against the ui-stream route in Chromium", () => {
  let chromium: ChromiumSession;
  let agent: Agent;
  let release: () => void = () => {};
  let sessions: Record<"c1" | "c2", { agent: Agent; release: () => void }>;
  const requests: string[] = [];
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    await ensureLibraryBuilt();
    const { build } = await import("vite");
    await build({ configFile: join(EXAMPLE, "vite.config.ts"), logLevel: "warn", build: { outDir: OUT } });
    const lookup = defineTool({ name: "lookup", description: "lookup", parameters: z.object({ q: z.string() }), execute: async (_id, { q }) => ({ content: [{ type: "text", text: `found ${q}` }], details: {} }) });
    const gated = (name: string, needsApproval: boolean) =>
      defineTool({ name, description: name, parameters: z.object({}), needsApproval, execute: async () => ({ content: [{ type: "text", text: `${name} done` }], details: {} }) });
    // One session per chat: c1 for useChat, c2 for useAgent; each with its own held tool.
    const session = () => {
      const held = { release: () => {} };
      const slow = defineTool({
        name: "slow",
        description: "slow",
        parameters: z.object({}),
        execute: () => new Promise<AgentToolResult<unknown>>((resolve) => (held.release = () => resolve({ content: [{ type: "text", text: "slow done" }], details: {} }))),
      });
      const agent = new Agent({
        streamFn: scriptedStreamFn([
          { content: [text("Checking both."), toolCall("lookup", { q: "a" }, "l1"), toolCall("lookup", { q: "b" }, "l2")] },
          { content: [text("Both found.")] },
          { content: [toolCall("write", {}, "w1"), toolCall("deploy", {}, "d1")] },
          { content: [text("Wrote it; no deploy.")] },
          { content: [text(STORY)], chunkSize: 6, delayMs: 25 },
          { content: [text("Step one."), toolCall("slow", {}, "s1")] },
          { content: [text(FAST)], chunkSize: 4, delayMs: 25 },
        ]),
        initialState: { model: scriptedModel, tools: [lookup, gated("write", true), gated("deploy", true), slow] },
      });
      return { agent, release: () => held.release() };
    };
    sessions = { c1: session(), c2: session() };
    agent = sessions.c1.agent;
    release = sessions.c1.release;
    const route = createChatRoute({ createAgent: (chatId) => sessions[chatId as "c1" | "c2"].agent });
    const server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      const path = new URL(req.url!, "http://x").pathname;
      if (path === "/api/chat/c1/messages") {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify(route.agent("c1") ? uiMessagesOf(agent, route.source("c1")) : []));
      }
      if (path.startsWith("/api/chat")) return void serveWeb(req, res, route.handle);
      const file = join(OUT, path === "/" ? "index.html" : path);
      if (!file.startsWith(OUT) || !existsSync(file)) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/?chat=c1`;
    close = () => new Promise((ok) => (route.close(), server.closeAllConnections(), server.close(() => ok())));
    chromium = await launchChromium({ width: 1000, height: 800 });
  }, 180_000);
  afterAll(async () => {
    await chromium?.close();
    await close?.();
  });

  const assistantText = (page: Page) => page.$$eval('[data-role="assistant"]', (items) => items.map((item) => Array.from(item.querySelectorAll(".text")).map((t) => t.textContent).join("")));
  const tools = (page: Page) => page.$$eval(".tool", (items) => items.map((item) => `${(item as HTMLElement).dataset.tool}:${(item as HTMLElement).dataset.state}`));
  const runText = (messages: AgentMessage[]) =>
    messages.filter((m) => m.role === "assistant").map((m) => (m as { content: { type: string; text?: string }[] }).content.map((p) => (p.type === "text" ? p.text : "")).join("")).join("");
  const ask = async (page: Page, value: string) => {
    await page.fill("#input", value);
    await page.click("#send");
  };

  it("multi-turn, parallel tools, approve and reject from the page, stop, steering, reload mid-run", { timeout: 90_000 }, async () => {
    const page = await chromium.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(url);
    await page.waitForSelector("body[data-ready=true]");

    // Turn 1: two tools in parallel.
    await ask(page, "Look up a and b");
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready" && document.querySelectorAll('[data-role="assistant"]').length === 1);
    expect(await tools(page)).toEqual(["lookup:output-available", "lookup:output-available"]);
    expect(await assistantText(page)).toEqual(["Checking both.Both found."]);

    // Turn 2: approve one, reject one (R82).
    await ask(page, "Write and deploy");
    await page.waitForSelector('[data-tool="deploy"][data-state="approval-requested"]');
    expect(await page.getAttribute("#state", "data-state")).toBe("awaitingApproval");
    await page.click('[data-tool="write"] [data-action="approve"]');
    await page.click('[data-tool="deploy"] [data-action="reject"]');
    await page.waitForFunction(() => (document.querySelector('[data-role="assistant"]:last-child')?.textContent ?? "").includes("Wrote it; no deploy."));
    expect((await tools(page)).slice(2)).toEqual(["write:output-available", "deploy:output-denied"]);

    // Turn 3: stop mid-stream (a posted stop; the run ends aborted).
    await ask(page, "Tell a long story");
    await page.waitForFunction(() => (document.querySelector('[data-role="assistant"]:last-child .text')?.textContent ?? "").split(" ").length > 5);
    await page.click("#stop");
    await agent.waitForIdle();
    expect(agent.lastEndReason).toBe("aborted");
    const stopped = runText(agent.state.messages.slice(-1));
    expect(STORY.startsWith(stopped) && stopped.length < STORY.length).toBe(true);

    // Turn 4: steering while the run waits on a tool (R53: queued, not a second run), then a reload mid-stream.
    await ask(page, "Count slowly");
    await page.waitForSelector('[data-tool="slow"]');
    const runStart = agent.state.messages.length - 1;
    await ask(page, "Faster please");
    await expect.poll(() => agent.queuedMessages.steering.length).toBe(1);
    release();
    await page.waitForFunction(() => (document.querySelector('[data-role="assistant"]:last-child')?.textContent ?? "").includes("n5 "));
    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    await agent.waitForIdle();
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready");
    await page.waitForFunction((fast) => (document.querySelector('[data-role="assistant"]:last-child')?.textContent ?? "").includes(fast), FAST);
    const last = (await assistantText(page)).at(-1);
    expect(last).toBe(runText(agent.state.messages.slice(runStart)));
    expect(await page.$$eval(".steer", (items) => items.map((item) => item.textContent))).toEqual(["↪ Faster please"]);
    expect(errors).toEqual([]);
    await page.screenshot({ path: screenshotPath("react-chat.png") });
  });

  it("the same flows with useAgent over the session on the server (?mode=agent): the DOM equals the transcript, a reload resumes after its last sequence number", { timeout: 90_000 }, async () => {
    const { agent: session, release: releaseSlow } = sessions.c2;
    const page = await chromium.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())));
    await page.goto(url.replace("chat=c1", "chat=c2") + "&mode=agent");
    await page.waitForSelector("body[data-ready=true]");
    const idleAfter = (assistants: number) =>
      page.waitForFunction((n) => document.querySelector("#state")?.getAttribute("data-state") === "idle" && document.querySelectorAll('[data-role="assistant"]').length === n, assistants);
    const userText = (page: Page) => page.$$eval('[data-role="user"]', (items) => items.map((item) => item.textContent));
    const transcriptTexts = (role: string) => session.state.messages.filter((m) => m.role === role).map((m) => runText([{ ...m, role: "assistant" } as AgentMessage]));

    // Turn 1: two tools in parallel.
    await ask(page, "Look up a and b");
    await idleAfter(2);
    expect(await tools(page)).toEqual(["lookup:output-available", "lookup:output-available"]);

    // Turn 2: approve one, reject one from the page (R82); the badge follows the session.
    await ask(page, "Write and deploy");
    await page.waitForSelector('[data-tool="deploy"][data-state="approval-requested"]');
    await page.waitForSelector('#state[data-state="awaitingApproval"]');
    await page.click('[data-tool="write"] [data-action="approve"]');
    await page.click('[data-tool="deploy"] [data-action="reject"]');
    await idleAfter(4);
    expect((await tools(page)).slice(2)).toEqual(["write:output-available", "deploy:output-error"]);

    // Turn 3: stop mid-stream (a posted stop; the run ends aborted).
    await ask(page, "Tell a long story");
    await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").split(" ").length > 5);
    expect(await page.getAttribute("#state", "data-state")).toBe("streaming");
    await page.click("#stop");
    await idleAfter(5);
    expect(session.lastEndReason).toBe("aborted");

    // Turn 4: steering while the run waits on a tool (R53: queued, not a second run), then a reload mid-stream.
    await ask(page, "Count slowly");
    await page.waitForSelector('[data-tool="slow"][data-state="input-available"]');
    await ask(page, "Faster please");
    await page.waitForFunction(() => document.querySelector("#queued")?.textContent === "1 queued");
    expect(session.queuedMessages.steering.length).toBe(1);
    releaseSlow();
    await page.waitForFunction(() => (document.querySelector("#streaming")?.textContent ?? "").includes("n5 "));
    const before = requests.length;
    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    await session.waitForIdle();
    await idleAfter(7);
    // The reloaded page asked for the events after the last one it had, in the same epoch: no reset, no replay.
    const resumed = requests.slice(before).filter((line) => line.startsWith("GET /api/chat/c2/events"));
    expect(resumed).toHaveLength(1);
    expect(Number(/after=(\d+)/.exec(resumed[0]!)?.[1])).toBeGreaterThan(0);
    // The whole DOM against the session's transcript: no text twice, none missing.
    expect(await assistantText(page)).toEqual(transcriptTexts("assistant"));
    expect(await userText(page)).toEqual(transcriptTexts("user"));
    expect((await assistantText(page)).at(-1)).toBe(FAST);
    expect(await tools(page)).toEqual(["lookup:output-available", "lookup:output-available", "write:output-available", "deploy:output-error", "slow:output-available"]);
    expect(errors).toEqual([]);
    await page.screenshot({ path: screenshotPath("react-chat-agent.png"), fullPage: true });
  });
});
