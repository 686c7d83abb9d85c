import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startViewerServer, type ViewerServer } from "../../scripts/view.js";
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

describe("viewer server", () => {
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

describe.skipIf(skipWithoutChromium)("viewer in Chromium", () => {
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
