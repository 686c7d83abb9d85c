import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTrace, startViewerServer, type ViewerServer } from "../../scripts/view.js";
import { TraceFormatError } from "../../src/inspector/index.js";
import { launchChromium, skipWithoutChromium } from "../support/chromium.js";
import { screenshotPath } from "../support/screenshots.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SAMPLE = join(ROOT, "test/visual/fixtures/sample-trace.jsonl");

interface TraceRecord {
  type: string;
  seq: number;
  t: number;
  run?: number;
  actor?: string;
  value?: unknown;
  status?: string;
  cause?: string;
  event?: { type: string; [key: string]: unknown };
  version?: number;
  format?: string;
}

const records = readFileSync(SAMPLE, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as TraceRecord);

/** Active state paths (ancestors included) of a StateValue. */
function pathsOf(value: unknown, prefix: string): string[] {
  if (typeof value === "string") return [`${prefix}.${value}`];
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [`${prefix}.${key}`, ...pathsOf(inner, `${prefix}.${key}`)]);
}

describe("sample trace fixture", () => {
  it("follows the trace format v1", () => {
    expect(records[0]).toMatchObject({ type: "trace", seq: 0, version: 1, format: "xstate-agent-loop/trace" });
    records.forEach((record, index) => {
      expect(record.seq).toBe(index);
      if (index > 0) expect(record.t).toBeGreaterThanOrEqual(records[index - 1].t);
    });
    const events = records.filter((record) => record.type === "event");
    expect(events[0].event!.type).toBe("agent_start");
    expect(events.at(-1)!.event!.type).toBe("agent_end");
    expect(new Set(records.filter((r) => r.type === "state").map((r) => r.actor))).toEqual(new Set(["run", "tool:0", "tool:1"]));
  });

  it("matches the current machines (else: tsx scripts/make-sample-trace.ts)", () => {
    const graphs = {
      run: JSON.parse(readFileSync(join(ROOT, "visualizations/run.machine.json"), "utf8")) as { id: string; nodes: { id: string }[] },
      tool: JSON.parse(readFileSync(join(ROOT, "visualizations/tool-call.machine.json"), "utf8")) as { id: string; nodes: { id: string }[] },
    };
    for (const record of records.filter((r) => r.type === "state")) {
      const graph = record.actor === "run" ? graphs.run : graphs.tool;
      const ids = new Set(graph.nodes.map((node) => node.id));
      for (const path of pathsOf(record.value, graph.id)) expect(ids.has(path), `${path} (record #${record.seq})`).toBe(true);
    }
  });

  it("has two tool calls that overlap in time", () => {
    const starts = records.filter((r) => r.event?.type === "tool_execution_start");
    const ends = records.filter((r) => r.event?.type === "tool_execution_end");
    expect(starts).toHaveLength(2);
    expect(ends).toHaveLength(2);
    expect(Math.max(...starts.map((r) => r.t))).toBeLessThan(Math.min(...ends.map((r) => r.t)));
  });
});

describe("npm run view FILE: the live inspector's page on the file (one UI, two sources)", () => {
  it("serves the inspector page showing the trace's run: its actors, recorded states and events", async () => {
    const view = await openTrace({ trace: SAMPLE, port: 0 });
    try {
      expect(view.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const html = await (await fetch(view.url)).text();
      expect(html).toContain("<h1>Live inspector</h1>");
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
      const messages = (await (await fetch(new URL("/messages.json", view.url))).json()) as { t: string; s: string; a?: string; id?: string; value?: unknown; type?: string }[];
      expect(messages.filter((m) => m.t === "session").map((m) => m.s)).toEqual(["sample-trace.jsonl · run 1"]);
      expect(messages.filter((m) => m.t === "actor").map((m) => m.id)).toEqual(["run", "tool:0", "tool:1"]);
      // Every recorded run state and every event of the file, in order.
      expect(messages.filter((m) => m.t === "snap" && m.a === "run").map((m) => JSON.stringify(m.value))).toEqual(
        records.filter((r) => r.type === "state" && r.actor === "run").map((r) => JSON.stringify(r.value)),
      );
      expect(messages.filter((m) => m.t === "event").map((m) => m.type)).toEqual(records.filter((r) => r.type === "event").map((r) => r.event!.type));
    } finally {
      await view.close();
    }
  });

  it("a file that is not a version 1 trace is a typed error, and nothing is left listening", async () => {
    const dir = mkdtempSync(join(tmpdir(), "xal-view-"));
    try {
      const file = join(dir, "v2.jsonl");
      writeFileSync(file, `${JSON.stringify({ ...records[0], version: 2 })}\n`);
      await expect(openTrace({ trace: file, port: 0 })).rejects.toThrow(new TraceFormatError("v2.jsonl is trace format 2; this build reads version 1"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--classic still serves the run viewer", async () => {
    const view = await openTrace({ trace: SAMPLE, port: 0, classic: true });
    try {
      expect(await (await fetch(view.url)).text()).toContain("viewer.js");
    } finally {
      await view.close();
    }
  });
});

describe.skipIf(skipWithoutChromium)("npm run view FILE in Chromium", () => {
  it("shows the recorded run in the inspector page: the actor tree and the run chart at its last recorded state", { timeout: 90_000 }, async () => {
    const view = await openTrace({ trace: SAMPLE, port: 0 });
    const browser = await launchChromium({ width: 1400, height: 900 });
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.route("**/*", (route) => (route.request().url().startsWith(view.url) ? route.continue() : route.abort()));
      await page.goto(view.url);
      await page.waitForFunction(() => document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "done");
      const actors = await page.$$eval("#actors li", (items) => items.map((li) => `${(li as HTMLElement).dataset.actorId} ${(li as HTMLElement).dataset.machine}`));
      expect(actors).toEqual(["run run", "tool:0 toolCall", "tool:1 toolCall"]);
      expect(await page.$$eval('.chart[data-machine="run"] g.active-leaf', (nodes) => nodes.map((node) => node.id))).toEqual(["run.done"]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      await view.close();
    }
  });
});

describe("classic viewer server (npm run view -- FILE --classic)", () => {
  let viewer: ViewerServer;
  beforeAll(async () => {
    viewer = await startViewerServer({ trace: SAMPLE, port: 0 });
  });
  afterAll(() => viewer.close());

  it("serves the page, the trace and the diagrams on 127.0.0.1", async () => {
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const get = (path: string) => fetch(new URL(path, viewer.url));
    const page = await get("/");
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("viewer.js");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect((await get("/viewer.js")).status).toBe(200);
    expect((await get("/viewer.css")).status).toBe(200);
    expect(await (await get("/trace.jsonl")).text()).toBe(readFileSync(SAMPLE, "utf8"));
    const index = (await (await get("/machines/index.json")).json()) as { name: string; id: string; svg: string }[];
    expect(index.map((machine) => machine.id)).toEqual(expect.arrayContaining(["run", "toolCall"]));
    const svg = await get("/machines/run.machine.svg");
    expect(svg.headers.get("content-type")).toContain("image/svg+xml");
    expect(await svg.text()).toContain('id="run.turn"');
    expect((await get("/machines/run.machine.json")).status).toBe(200);
    expect((await get("/machines/../package.json")).status).toBe(404);
    expect((await get("/machines/%2e%2e%2fpackage.json")).status).toBe(404);
    expect((await get("/nope")).status).toBe(404);
  });
});

describe.skipIf(skipWithoutChromium)("classic viewer in Chromium", () => {
  it("steps to a tool call, highlights the active state and shows parallel tool bars", { timeout: 90_000 }, async () => {
    const viewer = await startViewerServer({ trace: SAMPLE, port: 0 });
    const browser = await launchChromium({ width: 1440, height: 1000 });
    const { context } = browser;
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      const external: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") errors.push(message.text());
      });
      // Offline: anything not served by the local viewer is refused and reported.
      await page.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith(viewer.url)) return route.continue();
        external.push(url);
        return route.abort();
      });
      await page.goto(viewer.url);
      await page.waitForSelector("#run-chart svg g.node");
      await page.waitForFunction(() => document.body.dataset.selectedSeq !== undefined);

      // Step forwards with the arrow key to the first tool_execution_end.
      let type = "";
      for (let i = 0; i < records.length && type !== "tool_execution_end"; i++) {
        await page.keyboard.press("ArrowRight");
        type = await page.evaluate(() => document.body.dataset.selectedType ?? "");
      }
      expect(type).toBe("tool_execution_end");
      const seq = Number(await page.evaluate(() => document.body.dataset.selectedSeq));
      expect(await page.textContent("#record-json")).toContain('"tool_execution_end"');

      // The highlighted states are the run's last recorded state at that moment.
      const runState = records.filter((r) => r.type === "state" && r.actor === "run" && r.seq <= seq).at(-1)!;
      const expected = pathsOf(runState.value, "run");
      expect(expected).toContain("run.turn.executingTools");
      const classes = await page.evaluate((ids) => ids.map((id) => document.getElementById(id)?.getAttribute("class") ?? null), expected);
      classes.forEach((cls, i) => expect(cls, expected[i]).toMatch(/\bactive\b/));
      expect(classes.at(-1)).toMatch(/\bactive-leaf\b/);
      const leaves = await page.$$eval("#run-chart .active-leaf", (nodes) => nodes.map((node) => node.id));
      expect(leaves).toEqual([expected.at(-1)]);
      // Both tool-call actors are live and marked in the tool-call chart.
      const actors = await page.$$eval("#actors li", (items) => items.map((item) => item.getAttribute("data-actor")));
      expect(actors).toEqual(["run", "tool:0", "tool:1"]);
      expect(await page.$$eval("#tool-chart .active-leaf", (nodes) => nodes.length)).toBeGreaterThan(0);

      // Two tool bars, overlapping in time, drawn side by side (one lane each).
      const bars = await page.$$eval(".timeline .bar.tool", (nodes) =>
        nodes.map((node) => {
          const box = node.getBoundingClientRect();
          const el = node as HTMLElement;
          return { start: Number(el.dataset.start), end: Number(el.dataset.end), lane: el.dataset.lane, left: box.left, right: box.right, top: box.top, text: el.textContent ?? "" };
        }),
      );
      expect(bars).toHaveLength(2);
      const [a, b] = bars;
      expect(a.start < b.end && b.start < a.end).toBe(true);
      expect(a.left < b.right && b.left < a.right).toBe(true);
      expect(a.lane).not.toBe(b.lane);
      expect(a.top).not.toBe(b.top);
      for (const bar of bars) expect(bar.text).toMatch(/\d+(\.\d+)? m?s$/);

      await page.screenshot({ path: screenshotPath("viewer-screenshot.png") });

      // Backwards: the arrow key and the button both step back.
      await page.keyboard.press("ArrowLeft");
      const back = Number(await page.evaluate(() => document.body.dataset.selectedSeq));
      expect(back).toBeLessThan(seq);
      await page.click("#prev");
      expect(Number(await page.evaluate(() => document.body.dataset.selectedSeq))).toBeLessThan(back);

      expect(errors).toEqual([]);
      expect(external).toEqual([]);
    } finally {
      await browser.close();
      await viewer.close();
    }
  });
});

/** Usage of the sample's assistant responses, summed as the viewer must show it. */
function sampleUsage() {
  const usages = records
    .filter((record) => record.event?.type === "message_end" && (record.event.message as { role: string }).role === "assistant")
    .map((record) => (record.event!.message as { usage: { input: number; output: number; totalTokens: number; cost: { total: number } } }).usage);
  return { responses: usages.length, input: usages.reduce((sum, usage) => sum + usage.input, 0), output: usages.reduce((sum, usage) => sum + usage.output, 0), total: usages.reduce((sum, usage) => sum + usage.totalTokens, 0), first: usages[0] };
}

describe.skipIf(skipWithoutChromium)("issue 16: the classic viewer in Chromium", () => {
  let viewer: ViewerServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let dir: string;
  beforeAll(async () => {
    viewer = await startViewerServer({ trace: SAMPLE, port: 0 });
    browser = await launchChromium({ width: 1440, height: 1000 });
    dir = mkdtempSync(join(tmpdir(), "xal-viewer-"));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(url = viewer.url) {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.state === "ready" || document.body.dataset.state === "error");
    return { page, errors };
  }
  const selectedSeq = (page: import("playwright-core").Page) => page.evaluate(() => Number(document.body.dataset.selectedSeq));

  it("the statechart opens at its own size, where its text is readable, and keeps the active state in view", { timeout: 60_000 }, async () => {
    const { page, errors } = await open();
    await page.waitForSelector("#run-chart svg g.node");
    const natural = await page.evaluate(() => {
      const svg = document.querySelector("#run-chart svg")!;
      const label = svg.querySelector("g.node text")!;
      return { width: svg.getBoundingClientRect().width, box: document.getElementById("run-chart")!.clientWidth, text: label.getBoundingClientRect().height };
    });
    // At its natural width (the SVG's own width: 100%, scrolling if wider than its box), and
    // state names at least 10 px high.
    const svgWidth = Number(/<svg[^>]*\bwidth="([\d.]+)/.exec(readFileSync(join(ROOT, "visualizations/run.machine.svg"), "utf8"))![1]);
    expect(Math.abs(natural.width - svgWidth)).toBeLessThan(1);
    expect(natural.text).toBeGreaterThanOrEqual(10);
    expect(await page.textContent("#zoom-level")).toBe("100%");
    // Step to a tool call: the active state is inside the chart's visible box.
    for (let i = 0; i < 30; i++) await page.keyboard.press("ArrowRight");
    const inView = await page.evaluate(() => {
      const leaf = document.querySelector("#run-chart .active-leaf")!.getBoundingClientRect();
      const frame = document.getElementById("run-chart")!.getBoundingClientRect();
      return leaf.left >= frame.left && leaf.right <= frame.right && leaf.top >= frame.top && leaf.bottom <= frame.bottom;
    });
    expect(inView).toBe(true);
    // Fit is still there, on request.
    await page.click("#zoom-fit");
    expect(await page.evaluate(() => document.querySelector("#run-chart svg")!.getBoundingClientRect().width)).toBeLessThanOrEqual(natural.box);
    await page.click("#zoom-reset");
    expect(await page.textContent("#zoom-level")).toBe("100%");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("arrow keys still step after a checkbox is clicked", { timeout: 60_000 }, async () => {
    const { page } = await open();
    await page.keyboard.press("ArrowRight");
    const before = await selectedSeq(page);
    await page.click("#skip-deltas");
    await page.click("#skip-deltas");
    expect(await page.isChecked("#skip-deltas")).toBe(true);
    await page.keyboard.press("ArrowRight");
    expect(await selectedSeq(page)).toBeGreaterThan(before);
    await page.keyboard.press("ArrowLeft");
    expect(await selectedSeq(page)).toBe(before);
    await page.close();
  });

  it("shows tokens and cost: per response in the transcript and the records, and the run's totals", { timeout: 60_000 }, async () => {
    const { page } = await open();
    const usage = sampleUsage();
    const total = await page.$eval("#usage tr.total", (row) => ({ tokens: Number(row.getAttribute("data-total-tokens")), cells: Array.from(row.querySelectorAll("td"), (cell) => cell.textContent) }));
    expect(total.tokens).toBe(usage.total);
    expect(total.cells).toEqual(["all", String(usage.responses), usage.input.toLocaleString("en-US"), usage.output.toLocaleString("en-US"), "0 / 0", usage.total.toLocaleString("en-US"), "$0"]);
    await page.keyboard.press("End");
    const tags = await page.$$eval("#transcript li.assistant .usage-tag", (nodes) => nodes.map((node) => node.textContent));
    expect(tags[0]).toBe(`tokens: ${usage.first.input} in · ${usage.first.output} out · $0`);
    expect(tags).toHaveLength(usage.responses);
    const detail = await page.$$eval("#records li .detail", (nodes) => nodes.map((node) => node.textContent ?? ""));
    expect(detail.filter((text) => text.startsWith("assistant (") && text.includes(" in · "))).toHaveLength(usage.responses);
    await page.close();
  });

  it("filters the records by type and by tool; stepping stays within them", { timeout: 60_000 }, async () => {
    const { page } = await open();
    const shownTypes = () => page.$$eval("#records li .kind", (nodes) => nodes.map((node) => node.textContent));
    await page.selectOption("#filter-type", "tool_execution_end");
    expect(await shownTypes()).toEqual(["tool_execution_end", "tool_execution_end"]);
    expect(await page.textContent("#filter-count")).toBe(`2 of ${records.length} records`);
    await page.selectOption("#filter-type", "");

    await page.selectOption("#filter-tool", "search");
    const shown = await page.$$eval("#records li", (nodes) => nodes.map((node) => Number(node.getAttribute("data-index"))));
    const seqs = new Set(shown.map((index) => records[index].seq));
    const about = (record: TraceRecord) => JSON.stringify(record).includes('"search"') || record.actor === "tool:1";
    // Every record shown concerns the search tool; its events and its actor's states are all there.
    for (const index of shown) expect(about(records[index]), `#${records[index].seq}`).toBe(true);
    for (const record of records.filter((r) => (r.event?.type.startsWith("tool_execution") && JSON.stringify(r).includes('"search"')) || r.actor === "tool:1")) {
      expect(seqs.has(record.seq), `#${record.seq}`).toBe(true);
    }
    expect(records.filter((r) => r.actor === "tool:1").length).toBeGreaterThan(0);
    // The arrow keys step through the filtered records only (the menu keeps its own keys: click away first).
    await page.click("h1");
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press("ArrowRight");
      expect(seqs.has(await selectedSeq(page))).toBe(true);
    }
    await page.selectOption("#filter-tool", "");
    await page.fill("#filter-text", "notes describe");
    expect(await page.$$eval("#records li", (nodes) => nodes.length)).toBeGreaterThan(0);
    await page.close();
  });

  it("a bad trace shows an error page that says what is wrong, not a blank page", { timeout: 60_000 }, async () => {
    const cases: [string, string, RegExp][] = [
      ["garbage.jsonl", "this is not json\n{also not\n", /No line of this file is a trace record\.[\s\S]*line 1: not JSON[\s\S]*line 2: not JSON/],
      ["headless.jsonl", records.slice(1).map((r) => JSON.stringify(r)).join("\n"), /The first record is a “note”, not the trace header/],
      ["future.jsonl", `${JSON.stringify({ ...records[0], version: 2 })}\n`, /This trace is version 2; this viewer reads version 1\./],
      ["empty.jsonl", "", /The file is empty\./],
    ];
    for (const [name, text, message] of cases) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const bad = await startViewerServer({ trace: file, port: 0 });
      try {
        const { page, errors } = await open(bad.url);
        expect(await page.evaluate(() => document.body.dataset.state)).toBe("error");
        expect(await page.isVisible("#error-page")).toBe(true);
        expect(await page.isVisible("#timeline-panel")).toBe(false);
        const shown = await page.textContent("#error-page");
        expect(shown).toContain("This trace cannot be shown");
        expect(shown).toMatch(message);
        expect(shown).toContain("src/trace/FORMAT.md");
        expect(errors).toEqual([]);
        await page.close();
      } finally {
        await bad.close();
      }
    }
  });

  it("a bad line in a good trace is skipped and reported above the panels", { timeout: 60_000 }, async () => {
    const file = join(dir, "one-bad-line.jsonl");
    const lines = records.map((r) => JSON.stringify(r));
    lines.splice(3, 0, '{"type":"event","seq":99}');
    writeFileSync(file, `${lines.join("\n")}\n`);
    const server = await startViewerServer({ trace: file, port: 0 });
    try {
      const { page } = await open(server.url);
      expect(await page.evaluate(() => document.body.dataset.state)).toBe("ready");
      expect(await page.isVisible("#error-page")).toBe(false);
      expect(await page.textContent("#problems")).toContain("line 4: an event record without an event type (skipped)");
      await page.close();
    } finally {
      await server.close();
    }
  });
});
