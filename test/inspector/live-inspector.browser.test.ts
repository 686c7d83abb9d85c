import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool } from "../../src/index.js";
import { createLiveInspector, type LiveInspector } from "../../src/inspector/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/testing/index.js";
import { launchChromium, skipWithoutChromium, type ChromiumSession } from "../support/chromium.js";

/** A tool that runs until the test lets it finish, so the page can be read mid-turn. */
function gatedTool(name: string, gate: Promise<void>) {
  return defineTool({
    name,
    description: `a gated tool (${name})`,
    parameters: z.object({}),
    execute: async () => {
      await gate;
      return { content: [{ type: "text", text: `${name} done` }], details: {} };
    },
  });
}

/** What the page shows: the highlighted leaf states of each visible chart, and the actor tree. */
async function view(page: Page) {
  return page.evaluate(() => ({
    leaves: Array.from(document.querySelectorAll(".chart:not([hidden]) g.active-leaf")).map((node) => node.id).sort(),
    actors: Array.from(document.querySelectorAll<HTMLElement>("#actors li")).map((li) => `${li.dataset.actorId} ${li.dataset.machine} ${li.dataset.state}`),
  }));
}

describe.skipIf(skipWithoutChromium)("live inspector page in Chromium", () => {
  let browser: ChromiumSession | undefined;
  let context: BrowserContext;
  let inspector: LiveInspector | undefined;

  beforeAll(async () => {
    browser = await launchChromium({ width: 1400, height: 900 });
    context = browser.context;
  }, 120_000);
  afterAll(async () => {
    await inspector?.close();
    await browser?.close();
  });

  it("highlights the active states through a turn with parallel tools, shows the actor tree, loads nothing external", { timeout: 60_000 }, async () => {
    inspector = await createLiveInspector({ port: 0 });
    const page = await context.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
    await page.route("**/*", (route) => {
      const url = route.request().url();
      requests.push(url);
      return url.startsWith(inspector!.url) ? route.continue() : route.abort();
    });
    await page.goto(inspector.url);
    await page.waitForSelector("#sessions li.empty");

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const agent = new Agent({
      sessionId: "demo",
      streamFn: scriptedStreamFn([{ content: [toolCall("search"), toolCall("fetch")] }, { content: [text("done")] }]),
      initialState: { systemPrompt: "terse", model: scriptedModel, tools: [gatedTool("search", gate), gatedTool("fetch", gate)] },
      inspect: [inspector.observer],
    });
    const prompt = agent.prompt("go");

    // Mid-turn: both tool calls run in parallel, each in its own actor under the run.
    await page.waitForFunction(() => document.querySelectorAll('#actors li[data-machine="toolCall"][data-state="executing"]').length === 2);
    expect(await view(page)).toEqual({
      leaves: ["run.turn.executingTools.runningInParallel", "session.busy.running.active", "toolCall.executing"],
      // Depth-first: the session, its run, and the run's children (its I/O step actor, then the tool calls).
      actors: [
        "session session busy.running.active",
        "run run turn.executingTools.runningInParallel",
        "steps  ",
        "tool:0 toolCall executing",
        "tool:1 toolCall executing",
      ],
    });
    expect(await page.textContent("#sessions")).toContain("demo");

    release();
    await prompt;
    await page.waitForFunction(() => document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "done");
    const after = await view(page);
    expect(after.leaves).toEqual(expect.arrayContaining(["run.done", "toolCall.settled"]));
    expect(after.actors.filter((line) => line.includes("toolCall"))).toEqual(["tool:0 toolCall settled", "tool:1 toolCall settled"]);

    // Updates are applied per animation frame: far fewer frames than messages.
    const { frames, applied } = await page.evaluate(() => (window as unknown as { __inspector: { frames: number; applied: number } }).__inspector);
    expect(frames).toBeLessThan(applied);

    // Selecting an event shows the step its target reached by it: the charts and the context go back there.
    await page.click('#log li:has-text("step.preflightCalls.done")'); // the run then runs the two calls
    expect(await page.textContent("#mode")).toMatch(/^step \d+$/);
    expect(await page.textContent("#context-title")).toMatch(/^context of run at #\d+$/);
    expect(JSON.parse((await page.textContent("#context"))!)).toMatchObject({ messages: { count: 3, last: { role: "assistant", preview: "[toolCall search] [toolCall fetch]" } } });
    expect(await view(page)).toMatchObject({ leaves: expect.arrayContaining(["run.turn.executingTools.runningInParallel"]) });
    await page.click("#live");
    expect(await page.textContent("#mode")).toBe("live");

    // Readable diagrams: the wheel zooms the run's chart (around the pointer), a double click resets; a hovered edge is highlighted.
    const chart = page.locator('.chart[data-machine="run"]');
    const box = (await chart.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + 200);
    await page.mouse.wheel(0, -100);
    await page.waitForFunction(() => document.querySelector('.chart[data-machine="run"]')!.getAttribute("data-zoom") === "1.20");
    await chart.dblclick({ position: { x: 20, y: 20 } });
    expect(await chart.getAttribute("data-zoom")).toBe("1.00");
    const edge = chart.locator("g.edge.transition:has(text)").first();
    await edge.locator("text").first().hover({ force: true });
    expect(await edge.locator("path").first().evaluate((path) => getComputedStyle(path).stroke)).toBe("rgb(217, 72, 15)");
    // A clicked state lists its own transitions, with their guards and rule ids, from the machine definitions and their comments.
    await page.locator('.chart g.node.state[id="toolCall.executing"]').dispatchEvent("click");
    expect(await page.textContent("#state-info .rules")).toBe(" (R70, R22)");
    expect(await page.$$eval("#state-info li", (items) => items.map((item) => item.textContent))).toEqual([
      "step.executeToolCall.done [isFinalized] → toolCall.finalizing · R23, R29, R13",
      "step.executeToolCall.done → toolCall.settled",
      "call.cancel → toolCall.settled",
    ]);

    expect(errors).toEqual([]);
    expect(requests.every((url) => url.startsWith(inspector!.url))).toBe(true);
    expect(new Set(requests.map((url) => new URL(url).pathname))).toEqual(new Set(["/", "/events"]));
    await page.close();
  });
});

describe.skipIf(skipWithoutChromium)("live inspector page in Chromium: batched per animation frame", () => {
  let browser: ChromiumSession | undefined;
  let inspector: LiveInspector | undefined;
  beforeAll(async () => {
    browser = await launchChromium({ width: 1200, height: 800 });
  }, 120_000);
  afterAll(async () => {
    await inspector?.close();
    await browser?.close();
  });

  it("a 3,000-delta response: one render per frame with news, and far fewer renders and DOM writes than deltas (deltas stay out of the machines)", { timeout: 60_000 }, async () => {
    inspector = await createLiveInspector({ port: 0 });
    const page = await browser!.context.newPage();
    await page.goto(inspector.url);
    await page.waitForSelector("#sessions li.empty");
    // Every DOM write the page makes from now on (a render replaces lists and text: one record per node written).
    await page.evaluate(() => {
      const w = window as unknown as { __writes: number };
      w.__writes = 0;
      new MutationObserver((records) => (w.__writes += records.length)).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    const before = await page.evaluate(() => ({ ...(window as unknown as { __inspector: { frames: number; renders: number } }).__inspector }));
    const words = Array.from({ length: 3_000 }, (_, i) => `w${i}`).join(" ");
    let deltas = 0;
    const agent = new Agent({
      sessionId: "long",
      streamFn: scriptedStreamFn([{ content: [text(words)], delayMs: 1 }]),
      initialState: { systemPrompt: "terse", model: scriptedModel, tools: [] },
      inspect: [inspector.observer],
    });
    agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") deltas++;
    });
    await agent.prompt("go");
    await page.waitForFunction(() => document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "done");
    const after = await page.evaluate(() => {
      const w = window as unknown as { __inspector: { frames: number; renders: number; applied: number }; __writes: number };
      return { frames: w.__inspector.frames, renders: w.__inspector.renders, applied: w.__inspector.applied, writes: w.__writes };
    });
    const renders = after.renders - before.renders;
    const frames = after.frames - before.frames;
    console.log(`3,000-delta response: ${deltas} deltas, ${after.applied} messages applied in ${frames} frames, ${renders} renders, ${after.writes} DOM mutation records`);
    expect(deltas).toBe(3_000);
    // One render per frame that had something to apply, never one per delta.
    expect(renders).toBe(frames);
    expect(renders).toBeLessThan(deltas / 10);
    expect(after.writes).toBeLessThan(deltas / 10);
    await page.close();
  });
});
