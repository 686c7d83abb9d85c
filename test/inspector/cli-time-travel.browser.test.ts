/**
 * The acceptance of issue 39 in real Chromium: the terminal agent (in process, on a fake terminal)
 * with `--inspect` and the offline demo model. The page follows the active states through a turn
 * with parallel tools, a steering message and an approval wait (highlighted states and actor tree
 * at each step); then the page forks the saved session from the persisted point before the second
 * request with an edited response, and the fork's transcript differs from the original exactly there.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LiveInspector } from "../../src/inspector/index.js";
import { runCli } from "../../src/node/cli/app.js";
import { launchChromium, skipWithoutChromium, type ChromiumSession } from "../support/chromium.js";
import { SCREENSHOT_DIR } from "../support/screenshots.js";
import { makeRepo, ttyIO } from "../cli/fixture.js";

/** What the page shows: the highlighted leaf states of each visible chart, and the actor tree. */
async function view(page: Page) {
  return page.evaluate(() => ({
    leaves: Array.from(document.querySelectorAll(".chart:not([hidden]) g.active-leaf")).map((node) => node.id).sort(),
    actors: Array.from(document.querySelectorAll<HTMLElement>("#actors li")).map((li) => `${li.dataset.actorId} ${li.dataset.machine} ${li.dataset.state}`),
  }));
}

const RUNNING_CALLS = [
  "run.turn.requesting.streamingWithTools.response.ended",
  "run.turn.requesting.streamingWithTools.runningCalls",
  "session.busy.running.active",
  "toolCall.executing",
];

const shot = (page: Page, name: string) => {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return page.screenshot({ path: join(SCREENSHOT_DIR, name) });
};

describe.skipIf(skipWithoutChromium)("issue 39 acceptance: the CLI's session in the live inspector, then forked from the page", () => {
  let browser: ChromiumSession | undefined;
  let repo: ReturnType<typeof makeRepo>;

  beforeAll(async () => {
    browser = await launchChromium({ width: 1500, height: 950 });
    repo = makeRepo();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    repo?.cleanup();
  });

  it("parallel tools, steering, an approval wait; a fork before the second request with an edited response diverges exactly there", { timeout: 90_000 }, async () => {
    let inspector: LiveInspector | undefined;
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const tty = ttyIO(repo.root, { inspector: { live: { port: 0, onStart: (live) => ((inspector = live), started()) } } });
    // The demo's tools last long enough (search_text 2 s) for the page to be read mid-turn.
    tty.io.demoPace = 2;
    const exit = runCli(["--offline", "--inspect"], tty.io);
    await Promise.all([ready, tty.ready]);

    const page = await browser!.context.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
    await page.route("**/*", (route) => {
      const url = route.request().url();
      requests.push(url);
      return url.startsWith(inspector!.url) ? route.continue() : route.abort();
    });
    await page.goto(inspector!.url);
    expect(tty.output()).toContain(`inspector: watch the session live at ${inspector!.url}`);

    tty.type("summarize this repository\r");

    // 1. The exploring turn: three calls in one parallel batch, each its own actor under the run; the
    // CLI starts them while the response streams (R70), so the run has two regions: the response (ended) and the running calls.
    // (The calls start before the response's last event is delivered: wait for both.)
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#actors li[data-machine="toolCall"][data-state="executing"]').length === 3 &&
        document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "turn.requesting.streamingWithTools.response.ended | runningCalls",
    );
    expect(await view(page)).toEqual({
      leaves: RUNNING_CALLS,
      actors: [
        expect.stringMatching(/^\S+ session busy\.running\.active$/),
        "run run turn.requesting.streamingWithTools.response.ended | runningCalls",
        "steps  ",
        "tool:0 toolCall executing",
        "tool:1 toolCall executing",
        "tool:2 toolCall executing",
      ],
    });
    await page.$eval('.chart[data-machine="run"] g.active-leaf', (node) => node.scrollIntoView({ block: "center" }));
    await shot(page, "live-inspector-parallel.png");

    // 2. A steering line typed while the search runs: the next turn acts on it (one call, list_files of the tests).
    tty.type("count the test files\r");
    await page.waitForFunction(
      () =>
        /Steering received/.test(document.querySelector("#context")!.textContent ?? "") &&
        document.querySelectorAll('#actors li[data-machine="toolCall"][data-state="executing"]').length === 1 &&
        document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "turn.requesting.streamingWithTools.response.ended | runningCalls",
    );
    expect(await view(page)).toEqual({
      leaves: RUNNING_CALLS,
      actors: [expect.stringMatching(/ session busy\.running\.active$/), "run run turn.requesting.streamingWithTools.response.ended | runningCalls", "steps  ", "tool:0 toolCall executing"],
    });

    // 3. The write waits for approval (R82): the call's actor in awaitingApproval, the run waiting for it.
    await page.waitForFunction(
      () =>
        document.querySelector('#actors li[data-machine="toolCall"]')?.getAttribute("data-state") === "awaitingApproval" &&
        document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "turn.requesting.streamingWithTools.response.ended | runningCalls",
    );
    expect(await view(page)).toEqual({
      leaves: [...RUNNING_CALLS.slice(0, 3), "toolCall.awaitingApproval"],
      actors: [expect.stringMatching(/ session busy\.running\.active$/), "run run turn.requesting.streamingWithTools.response.ended | runningCalls", "steps  ", "tool:0 toolCall awaitingApproval"],
    });
    await page.$eval('.chart[data-machine="toolCall"] g.active-leaf', (node) => node.scrollIntoView({ block: "center" }));
    await shot(page, "live-inspector-approval.png");
    tty.type("y");

    // The run ends: its final state marked.
    await page.waitForFunction(() => document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "done");
    expect((await view(page)).leaves).toEqual(expect.arrayContaining(["run.done"]));

    // 4. Time travel: the session's persisted points, the one before the second request chosen, its response edited.
    const original = (await page.textContent("#sessions li.selected b"))!;
    await page.click("#fork-refresh");
    await page.waitForFunction(() => Array.from(document.querySelectorAll("#fork-point option")).some((option) => option.textContent!.includes("before request 4")));
    const label = await page.evaluate(() => {
      const select = document.querySelector<HTMLSelectElement>("#fork-point")!;
      const option = Array.from(select.options).find((candidate) => / before request 2$/.test(candidate.textContent!))!;
      select.value = option.value;
      select.dispatchEvent(new Event("change"));
      return option.textContent;
    });
    expect(label).toMatch(/^#\d+ run 1 · before request 2$/);
    // The recorded response is offered for editing: the steering acknowledgement and its call.
    expect(await page.inputValue("#fork-response")).toBe('Steering received: "count the test files" — on it.');
    expect(await page.textContent("#fork-calls")).toBe("recorded calls: list_files");
    await page.fill("#fork-response", "Edited in the inspector: no need to count them.");
    await page.uncheck("#fork-keep-calls");
    await page.click("#fork-go");

    // The fork runs live beside the original, then its transcript is shown next to the original's.
    await page.waitForSelector("#compare tr.diverged");
    expect(await page.textContent("#fork-status")).toBe(`forked: ${original}~fork1`);
    expect(await page.textContent("#sessions li.selected b")).toBe(`${original}~fork1`);
    expect(await page.textContent("#fork-origin")).toMatch(new RegExp(`^fork of ${original} at #\\d+ \\(before request 2, response edited\\)$`));
    const rows = await page.$$eval("#compare tr[data-i]", (trs) =>
      trs.map((tr) => ({ diverged: tr.classList.contains("diverged"), original: tr.querySelector("td.original")!.textContent, fork: tr.querySelector("td.fork")!.textContent })),
    );
    const at = rows.findIndex((row) => row.diverged);
    // Exactly there: every line before is the same in both, the second response is where they part.
    expect(rows.slice(0, at).every((row) => row.original === row.fork)).toBe(true);
    expect(rows.slice(0, at).filter((row) => row.original!.startsWith("assistant"))).toHaveLength(1);
    expect(rows[at]).toEqual({
      diverged: true,
      original: expect.stringMatching(/^assistant Steering received: "count the test files" — on it\. \[list_files /),
      fork: "assistant Edited in the inspector: no need to count them.",
    });
    // The fork's run is in the page too: its own actor tree, ended.
    await page.waitForFunction(() => document.querySelector('#actors li[data-machine="run"]')?.getAttribute("data-state") === "done");
    await page.$eval("#compare tr.diverged", (row) => row.scrollIntoView({ block: "center" }));
    await shot(page, "live-inspector-fork.png");

    expect(errors).toEqual([]);
    expect(requests.every((url) => url.startsWith(inspector!.url))).toBe(true);
    expect(new Set(requests.map((url) => new URL(url).pathname))).toEqual(new Set(["/", "/events", "/points", "/fork"]));
    await page.close();
    tty.type("/exit\r");
    expect(await exit).toBe(0);
  });
});
