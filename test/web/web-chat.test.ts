/**
 * The browser example (examples/web-chat/) in Chromium: an Agent from the built package runs in
 * the page. The scripted scenario streams text, runs two tools in parallel with progress while a
 * third is blocked by `beforeToolCall`, takes a steering message typed while the tools run and a
 * queued follow-up; a second run is aborted. The actor panel must follow the actors themselves:
 * it shows `turn.preparingNextTurn`, which no AgentEvent announces, while no event arrives.
 * With `--anthropic`, the page talks to Claude (here: a local fake of the Messages API) through
 * the example server, and the key never reaches the browser.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium, skipWithoutChromium, type ChromiumSession } from "../support/chromium.js";
import { screenshotPath } from "../support/screenshots.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildExample, ensureLibraryBuilt, startExampleServer, type ExampleServer } from "../../scripts/example-web.js";
import { sse, stall, partialText, startSseServer, textBlock, textResponse, response, toolUseBlock } from "../support/sse-server.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Stands in for https://stately.ai/inspect: says it is connected, and keeps what it receives. */
const INSPECTOR_STUB = `<!doctype html><title>inspector stub</title><body>inspector stub</body><script>
  window.received = [];
  addEventListener("message", (event) => { if (event.data && typeof event.data._version === "string") received.push(event.data); });
  addEventListener("load", () => setTimeout(() => parent.postMessage({ type: "@statelyai.connected" }, "*"), 0));
</script>`;

interface Opened {
  page: Page;
  /** Console errors and warnings, and uncaught page errors. */
  errors: string[];
  /** Requests to anywhere but the example server and the (stubbed) inspector; all refused. */
  external: string[];
}

/** One sample of the panel per animation frame, kept when something changed. */
interface Sample {
  session: string;
  run: string;
  tools: string[];
  steering: string[];
  followUp: string[];
  /** AgentEvents the page has received so far, and the type of the last one. */
  events: number;
  last: string;
  since: number;
  until: number;
}

async function open(context: BrowserContext, server: ExampleServer, watch?: (page: Page) => void): Promise<Opened> {
  const page = await context.newPage();
  watch?.(page);
  const errors: string[] = [];
  const external: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") errors.push(`${message.text()} @ ${JSON.stringify(message.location())}`);
  });
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(server.url)) return route.continue();
    if (url.startsWith("https://stately.ai/inspect")) return route.fulfill({ status: 200, contentType: "text/html", body: INSPECTOR_STUB });
    external.push(url);
    return route.abort();
  });
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready=true]");
  return { page, errors, external };
}

/** Samples the panel on every animation frame into `window.samples` (changes only). */
async function startSampling(page: Page): Promise<void> {
  await page.evaluate(() => {
    const text = (selector: string) => Array.from(document.querySelectorAll(selector)).map((node) => node.textContent ?? "");
    const samples: Sample[] = [];
    (window as unknown as { samples: Sample[] }).samples = samples;
    let previousKey = "";
    const tick = () => {
      const now = performance.now();
      const sample: Sample = {
        session: document.getElementById("session-state")!.dataset.state ?? "",
        run: document.getElementById("run-state")!.dataset.state ?? "",
        tools: Array.from(document.querySelectorAll<HTMLElement>('#tool-actors li[data-live="true"]')).map((li) => `${li.dataset.actor} ${li.dataset.state}`),
        steering: text("#queue-steering li"),
        followUp: text("#queue-follow-up li"),
        events: Number(document.body.dataset.events ?? 0),
        last: document.body.dataset.lastEvent ?? "",
        since: now,
        until: now,
      };
      const key = JSON.stringify([sample.session, sample.run, sample.tools, sample.steering, sample.followUp, sample.events, sample.last]);
      if (key === previousKey) samples.at(-1)!.until = now;
      else samples.push(sample);
      previousKey = key;
      requestAnimationFrame(tick);
    };
    tick();
  });
}

const samplesOf = (page: Page) => page.evaluate(() => (window as unknown as { samples: Sample[] }).samples.slice());

/** The transcript as `[kind, text]` rows; assistant rows carry their status and tool cards. */
const transcriptOf = (page: Page) =>
  page.$$eval("#transcript > li", (items) =>
    items.map((item) => {
      const el = item as HTMLElement;
      const role = ["user", "assistant", "system", "note"].find((name) => el.classList.contains(name)) ?? "?";
      const body = el.querySelector(".body")?.textContent ?? el.textContent ?? "";
      if (role === "user") return { role, kind: el.dataset.kind, text: body };
      if (role !== "assistant") return { role, text: body };
      const tools = Array.from(el.querySelectorAll<HTMLElement>(".tool")).map((card) => ({
        name: card.querySelector(".name")!.textContent,
        status: card.dataset.status,
        result: card.querySelector(".result")!.textContent,
      }));
      return { role, status: el.dataset.status, text: body, ...(tools.length > 0 ? { tools } : {}) };
    }),
  );

/** GET with a foreign Host header (DNS rebinding). */
const statusWithHost = (base: string, path: string, host: string) =>
  new Promise<number>((done, fail) => {
    const req = request(new URL(path, base), { headers: { host } }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.once("error", fail);
    req.end();
  });

const idle = (page: Page) => page.waitForSelector('body[data-busy="false"] #session-state[data-state="idle"]', { timeout: 15_000 });

describe("web chat example sources", () => {
  it("type-check against the package's published types (Vite does not type-check)", { timeout: 180_000 }, async () => {
    await ensureLibraryBuilt();
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const result = spawnSync(process.execPath, [tsc, "-p", "examples/web-chat/tsconfig.json"], { cwd: ROOT, encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("import the library by its package name, never by a path into the repository", () => {
    for (const file of readdirSync(join(ROOT, "examples/web-chat/src"))) {
      const source = readFileSync(join(ROOT, "examples/web-chat/src", file), "utf8");
      const specifiers = [...source.matchAll(/\bfrom\s+"([^"]+)"|\bimport\s+"([^"]+)"/g)].map((match) => match[1] ?? match[2]);
      for (const specifier of specifiers) expect(specifier, `${file}: ${specifier}`).toMatch(/^(xstate-agent-loop(\/inspect)?|xstate|zod|\.\/[\w-]+\.(js|css))$/);
    }
  });
});

describe.skipIf(skipWithoutChromium)("web chat example in Chromium", () => {
  let browser: ChromiumSession | undefined;
  let context: BrowserContext;

  beforeAll(async () => {
    await ensureLibraryBuilt();
    await buildExample({ quiet: true });
    browser = await launchChromium({ width: 1280, height: 720 });
    context = browser.context;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("runs the scripted scenario: parallel tools, a blocked tool, steering, a follow-up, an abort; the panel follows the actors", { timeout: 60_000 }, async () => {
    const server = await startExampleServer({ port: 0 });
    try {
      const { page, errors, external } = await open(context, server);
      expect(await page.textContent("#model-label")).toBe("scripted model (offline)");
      expect(await page.getAttribute("#session-state", "data-state")).toBe("idle");
      await startSampling(page);

      // Run 1: three tool calls; two run in parallel with progress, book_table is blocked.
      await page.fill("#message", "Plan a weekend in Lisbon");
      await page.click("#send");
      await page.waitForFunction(() => {
        const run = document.getElementById("run-state")!.dataset.state;
        const live = Array.from(document.querySelectorAll<HTMLElement>('#tool-actors li[data-live="true"]')).map((li) => `${li.dataset.actor} ${li.dataset.state}`);
        // SPEC R70: the page runs tools while the model streams; once the answer is complete its calls run on in the same state,
        // and book_table (not concurrency-safe) waits for the lookups before its beforeToolCall blocks it.
        return run === "turn.requesting.streamingWithTools.response.ended, runningCalls" && live.join() === "tool:0 executing,tool:1 executing,tool:2 waitingToStart";
      });
      // Progress updates arrive on the cards: the weather tool, past its first of four steps (500 ms
      // each), shows a later one. (Not one step by name: the response may end well into the tool's
      // run, and on a loaded machine that step's 500 ms passed before the page was looked at.)
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('.tool[data-status="running"] .progress-text')).some((el) => ["Reading Saturday…", "Reading Sunday…", "Averaging…"].includes(el.textContent ?? "")),
      );

      // While the tools run: a steering message and a follow-up, both visible in the session's queues.
      await page.fill("#message", "Also find a good fado bar");
      await page.press("#message", "Enter");
      await page.fill("#message", "Then give me a one-line summary");
      await page.click("#follow-up");
      await page.waitForFunction(() => document.querySelectorAll("#queue-steering li, #queue-follow-up li").length === 2);
      await page.screenshot({ path: screenshotPath("web-chat.png") });
      await idle(page);

      expect(await transcriptOf(page)).toEqual([
        { role: "system", text: "system prompt · tools declared: get_weather, find_places, book_table" },
        { role: "user", kind: "prompt", text: "Plan a weekend in Lisbon" },
        {
          role: "assistant",
          status: "toolUse",
          text: "I'll check the weather and find museums in parallel, and try to book a table for dinner.",
          tools: [
            { name: "get_weather", status: "done", result: "Lisbon: sunny on Saturday (24 °C), light showers on Sunday (19 °C)." },
            { name: "find_places", status: "done", result: "Gulbenkian Museum, MAAT, National Tile Museum (all open Saturday)." },
            { name: "book_table", status: "error", result: "Booking needs your confirmation, so beforeToolCall blocked it." },
          ],
        },
        { role: "user", kind: "steering", text: "Also find a good fado bar" },
        {
          role: "assistant",
          status: "stop",
          text: [
            "get_weather: Lisbon: sunny on Saturday (24 °C), light showers on Sunday (19 °C).",
            "find_places: Gulbenkian Museum, MAAT, National Tile Museum (all open Saturday).",
            "book_table did not run: Booking needs your confirmation, so beforeToolCall blocked it.",
            "You said: “Also find a good fado bar” — noted.",
            "Plan: museums on Saturday while it is sunny, tiles on Sunday.",
          ].join("\n"),
        },
        { role: "user", kind: "follow-up", text: "Then give me a one-line summary" },
        { role: "assistant", status: "stop", text: "You said: “Then give me a one-line summary” — noted." },
      ]);

      const samples = await samplesOf(page);
      const runs = samples.map((sample) => sample.run);
      // The tool batch: the run in executingTools while both tool-call actors execute.
      expect(samples.some((s) => s.run === "turn.requesting.streamingWithTools.response.ended, runningCalls" && s.tools.join() === "tool:0 executing,tool:1 executing,tool:2 waitingToStart")).toBe(true);
      // The steering message was queued while both tools executed.
      expect(samples.some((s) => s.steering.join() === "Also find a good fado bar" && s.tools.join() === "tool:0 executing,tool:1 executing,tool:2 waitingToStart")).toBe(true);
      // preparingNextTurn, twice (before the steering turn and the follow-up turn): each time the
      // last event is turn_end and no event arrives while the panel shows it.
      const stretches: Sample[][] = [];
      samples.forEach((sample, i) => {
        if (sample.run !== "turn.preparingNextTurn") return;
        if (runs[i - 1] === "turn.preparingNextTurn") stretches.at(-1)!.push(sample);
        else stretches.push([sample]);
      });
      expect(stretches).toHaveLength(2);
      for (const stretch of stretches) {
        expect(new Set(stretch.map((s) => s.events)).size).toBe(1);
        expect(stretch.map((s) => s.last)).toEqual(stretch.map(() => "turn_end"));
        expect(stretch.at(-1)!.until - stretch[0].since).toBeGreaterThan(200); // of 400 ms
      }
      // The steering message left its queue at the end of the tool turn; the follow-up after the steering turn.
      const firstPreparing = samples.indexOf(stretches[0][0]);
      expect(samples[firstPreparing].steering).toEqual([]);
      expect(samples[firstPreparing].followUp).toEqual(["Then give me a one-line summary"]);
      expect(samples.at(-1)).toMatchObject({ session: "idle", run: "–", tools: [], steering: [], followUp: [] });

      // The inspector: wired to the session actor; it sees the next run and its children.
      await page.check("#inspector-toggle");
      const frame = await vi.waitFor(() => {
        const found = page.frames().find((f) => f.url().startsWith("https://stately.ai/inspect"));
        if (!found) throw new Error("no inspector frame yet");
        return found;
      });

      // Run 2, aborted while it streams.
      await page.fill("#message", "Tell me a long story");
      await page.click("#send");
      await page.waitForFunction(() => (document.querySelector('.message.assistant[data-status="streaming"] .body')?.textContent ?? "").split(" ").length > 6);
      expect(await page.getAttribute("#run-state", "data-state")).toBe("turn.requesting.streamingWithTools.response.receiving, runningCalls");
      await page.click("#abort");
      await idle(page);
      const last = (await transcriptOf(page)).slice(-2);
      expect(last[0]).toEqual({ role: "user", kind: "prompt", text: "Tell me a long story" });
      expect(last[1]).toMatchObject({ role: "assistant", status: "aborted" });
      expect(last[1].text.length).toBeGreaterThan(20);
      expect("Once upon a time, a statechart lived in a browser tab.".startsWith(last[1].text) || last[1].text.startsWith("Once upon a time")).toBe(true);
      expect(await page.textContent(".message.assistant:last-child .stop-reason")).toBe("aborted");
      expect(await page.textContent("#run-state")).toBe("–");
      // Issue 38: a run that called no tool shows no tool-call rows (not the previous run's, as settled).
      expect(await page.$$eval("#tool-actors li", (items) => items.length)).toBe(0);

      const received = await frame.evaluate(() => (window as unknown as { received: { type: string; name?: string; sessionId: string; parentId?: string }[] }).received);
      const actors = received.filter((event) => event.type === "@xstate.actor");
      const session = actors.find((actor) => actor.name === "session");
      const run = actors.find((actor) => actor.name === "run");
      expect(session).toBeDefined();
      expect(run?.parentId).toBe(session!.sessionId);
      expect(received.some((event) => event.type === "@xstate.snapshot" && event.sessionId === run!.sessionId)).toBe(true);
      // Issue 38: offline, the inspector's frame is blank; the page says why.
      expect(await page.getAttribute("#inspector-note", "data-offline")).toBe("false");
      await context.setOffline(true);
      await page.waitForSelector('#inspector-note[data-offline="true"]');
      expect(await page.textContent("#inspector-note")).toContain("Offline: the inspector's UI loads from https://stately.ai/inspect");
      await context.setOffline(false);
      await page.uncheck("#inspector-toggle");
      expect(await page.isHidden("#inspector-pane")).toBe(true);

      expect(errors).toEqual([]);
      expect(external).toEqual([]);
      await page.close();
    } finally {
      await server.close();
    }
  });

  it("issue 17 item 7: recovery is on in the page's Agent; retries, output-limit recovery, compaction and an unusual end reason are drawn as notes", { timeout: 30_000 }, async () => {
    const server = await startExampleServer({ port: 0 });
    try {
      const { page, errors, external } = await open(context, server);
      // (The compactor is a function: the page reports its type, the rest as data.)
      const recovery = await page.evaluate(() => {
        const { compact, ...data } = (window as unknown as { webChat: { recovery: { compact?: { compactor: unknown } } } }).webChat.recovery;
        return { ...data, compact: compact && { ...compact, compactor: typeof compact.compactor } };
      });
      expect(recovery).toEqual({ retry: {}, outputLimit: {}, compact: { compactor: "function" }, abortGraceMs: 5000 });
      // The loop does not emit these yet in a scripted run: a synthetic sequence, as the CLI's renderer tests do.
      const notes = await page.evaluate(() => {
        const { transcript } = (window as unknown as { webChat: { transcript: { handle(event: unknown): void; handleRuntime(event: unknown): void } } }).webChat;
        const assistant = (stopReason: string, text: string) => ({ role: "assistant", content: [{ type: "text", text }], api: "scripted", provider: "scripted", model: "m", stopReason, timestamp: 0 });
        const answer = (stopReason: string, text: string) => {
          transcript.handle({ type: "message_start", message: assistant(stopReason, "") });
          transcript.handle({ type: "message_end", message: assistant(stopReason, text) });
        };
        const retry = (attempt: number, delayMs: number, kind: string) => ({ type: "retry_scheduled", attempt, maxAttempts: 5, delayMs, kind, errorMessage: "overloaded", model: "m" });
        const shown = () => Array.from(document.querySelectorAll("#transcript > li.note")).map((li) => li.textContent);
        const seen: (string | null)[][] = [];
        transcript.handleRuntime(retry(2, 1500, "overloaded"));
        seen.push(shown());
        transcript.handleRuntime(retry(3, 2001, "rate_limited"));
        seen.push(shown());
        answer("length", "Part one, cut");
        seen.push(shown());
        transcript.handleRuntime({ type: "output_limit_escalated", fromMaxTokens: 8192, toMaxTokens: 64000 });
        transcript.handleRuntime({ type: "message_discarded", message: assistant("length", "Part one, cut"), reason: "output_limit_escalated" });
        answer("length", "Part one");
        transcript.handleRuntime({ type: "output_limit_recovery", attempt: 1, maxRecoveries: 3 });
        const recovery = { role: "user", content: "Resume where you stopped.", timestamp: 0, recovery: "output_limit" };
        transcript.handle({ type: "message_start", message: recovery });
        transcript.handle({ type: "message_end", message: recovery });
        answer("length", "and part two");
        transcript.handleRuntime({ type: "transcript_replaced", messages: [recovery, recovery], reason: "overflow" });
        transcript.handle({ type: "agent_end", messages: [], reason: "max_output_tokens" });
        return seen;
      });
      expect(notes).toEqual([["retrying in 2 s (overloaded, attempt 2 of 5)"], ["retrying in 3 s (rate limited, attempt 3 of 5)"], []]);
      expect((await transcriptOf(page)).slice(1)).toEqual([
        { role: "assistant", status: "discarded", text: "Part one, cut" },
        { role: "note", text: "output limit hit: asking again with up to 64000 output tokens" },
        { role: "assistant", status: "length", text: "Part one" },
        { role: "note", text: "output limit hit: the loop asked the model to continue where it stopped (1 of 3)" },
        { role: "assistant", status: "length", text: "and part two" },
        { role: "note", text: "context compacted (now 2 messages)" },
        { role: "note", text: "stopped: output limit" },
      ]);
      expect(errors).toEqual([]);
      expect(external).toEqual([]);
      await page.close();
    } finally {
      await server.close();
    }
  });

  it("--anthropic: the page talks to Claude through the example server; the key stays there", { timeout: 30_000 }, async () => {
    const KEY = "sk-ant-test-never-in-the-browser-0123456789";
    const upstream = await startSseServer();
    upstream.script(
      sse(response([textBlock(0, ["Checking ", "the weather."]), toolUseBlock(1, "toolu_01", "get_weather", ['{"city":', ' "Porto"}'])], { stopReason: "tool_use" })),
      sse(textResponse(["Sunny ", "in Porto."])),
      stall(partialText("Let me think about")),
    );
    const server = await startExampleServer({ port: 0, anthropic: { apiKey: KEY, baseURL: upstream.url, model: "claude-haiku-4-5" } });
    try {
      // Everything the page sends and receives: headers, request bodies, response bodies.
      const seen: string[] = [];
      const { page, errors, external } = await open(context, server, (page) => {
        page.on("request", (request) => seen.push(`${request.url()} ${JSON.stringify(request.headers())} ${request.postData() ?? ""}`));
        page.on("response", (res) => void res.text().then((body) => seen.push(`${JSON.stringify(res.headers())} ${body}`), () => {}));
      });
      expect(await page.textContent("#model-label")).toBe("claude-haiku-4-5 via the local proxy");

      await page.fill("#message", "Weather in Porto?");
      await page.click("#send");
      await idle(page);
      expect(await transcriptOf(page)).toEqual([
        { role: "system", text: "system prompt · tools declared: get_weather, find_places, book_table" },
        { role: "user", kind: "prompt", text: "Weather in Porto?" },
        {
          role: "assistant",
          status: "toolUse",
          text: "Checking the weather.",
          tools: [{ name: "get_weather", status: "done", result: "Porto: sunny on Saturday (24 °C), light showers on Sunday (19 °C)." }],
        },
        { role: "assistant", status: "stop", text: "Sunny in Porto." },
      ]);

      // Aborting in the page aborts the proxied request.
      await page.fill("#message", "And tomorrow?");
      await page.click("#send");
      await page.waitForSelector('.message.assistant[data-status="streaming"] .body:text("Let me think about")');
      await page.click("#abort");
      await idle(page);
      expect((await transcriptOf(page)).at(-1)).toMatchObject({ role: "assistant", status: "aborted", text: "Let me think about" });

      // Claude got the key from the server; the page never saw it.
      expect(upstream.requests).toHaveLength(3);
      // (SDK 1.14 sends the key as `authorization: Bearer`.)
      for (const request of upstream.requests) expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
      expect((upstream.requests[1].body as { model: string }).model).toBe("claude-haiku-4-5");
      expect(seen.filter((line) => line.startsWith(`${server.url}api/stream `))).toHaveLength(3);
      expect(seen.length).toBeGreaterThan(8);
      for (const text of seen) expect(text).not.toContain(KEY);
      expect(errors).toEqual([]);
      expect(external).toEqual([]);
      await page.close();

      // Only same-origin requests from this host may use the proxy.
      const post = (headers: Record<string, string>) =>
        fetch(new URL("/api/stream", server.url), { method: "POST", headers: { "content-type": "application/json", ...headers }, body: '{"context":{"messages":[]}}' });
      expect((await post({ origin: "https://evil.example" })).status).toBe(403);
      expect(await statusWithHost(server.url, "/api/config", "evil.example")).toBe(403);
      expect(upstream.requests).toHaveLength(3);
    } finally {
      await server.close();
      await upstream.close();
    }
  });
});
