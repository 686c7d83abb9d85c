/**
 * Model-based testing of an app's own machine (examples/support-desk): the desk statechart
 * invokes an agent run, and its paths are explored across the loop's scripted paths.
 *
 * 1. Each path of `createAgentTestModel` (the loop's: answer, provider error, aborts, steering,
 *    follow-up, per tool success / error / throw / block / terminate / truncation …) runs once,
 *    with the app's tools and hooks: its messages are what the desk's `triage` invoke returns.
 * 2. `xstate/graph` walks the desk machine: traversal is pure (the invoke does not run), so each
 *    loop path's output is fed as a synthetic `xstate.done.actor.triage` event; its shortest
 *    paths reach every app state after every loop path (the loop path is part of the state key).
 * 3. Each app path is played against a real actor whose `triage` is the loop path itself, run
 *    again: after every step the actor's state and context equal the model's.
 */
import { describe, expect, it } from "vitest";
import { createActor, fromPromise, waitFor, type SnapshotFrom } from "xstate";
import { getShortestPaths } from "xstate/graph";
import { z } from "zod";
import { defineTool, type AgentLoopConfig, type AgentMessage } from "../../src/index.js";
import { createAgentTestModel, type AgentTestPath } from "../../src/testing/index.js";
import { deskMachine, type DeskEvent } from "../../examples/support-desk/desk.machine.js";

const lookupOrder = defineTool({
  name: "lookup_order",
  description: "Look an order up",
  parameters: z.object({ order: z.string() }),
  execute: async (_id, { order }) => ({ content: [{ type: "text", text: `Order ${order}: shipped. INTERNAL: margin 12%` }], details: {} }),
});
const escalate = defineTool({
  name: "escalate",
  description: "Hand the ticket to a person",
  parameters: z.object({ reason: z.string() }),
  execute: async (_id, { reason }) => ({ content: [{ type: "text", text: `Escalated: ${reason}` }], details: {} }),
});
// The app's hook under test on every path: internal notes never reach the model.
const config: Partial<AgentLoopConfig> = {
  afterToolCall: async ({ result }) => ({ content: result.content.map((part) => (part.type === "text" ? { ...part, text: part.text.replace(/INTERNAL:.*$/, "") } : part)) }),
};
const loop = createAgentTestModel({ tools: [lookupOrder, escalate], config, arguments: { lookup_order: { order: "42" }, escalate: { reason: "refund" } }, execute: "real" });

const DONE = "xstate.done.actor.triage";
type TriageDone = { type: typeof DONE; output: AgentMessage[]; loopPath: string };
/** The loop path a done event carries (null for the app's own events). */
const loopPathOf = (event: unknown): string | null => ((event as TriageDone | undefined)?.type === DONE ? (event as TriageDone).loopPath : null);

// 1. The loop's paths, once each: their outputs are the invoke's possible results.
const outputs = await Promise.all(loop.paths.map(async (path) => ({ path, output: (await path.run()).messages })));
const byDescription = new Map<string, AgentTestPath>(loop.paths.map((path) => [path.description, path]));

// 2. The desk's paths across them.
const appEvents: DeskEvent[] = [{ type: "ASK", question: "Where is order 42?" }, { type: "CANCEL" }, { type: "ACCEPT" }, { type: "RETRY" }, { type: "GIVE_UP" }, { type: "ASSIGN" }];
// `createTestModel` refuses machines that invoke; the path generator itself walks them (purely).
const paths = getShortestPaths(deskMachine, {
  events: (snapshot) => [
    ...appEvents,
    ...(snapshot.matches("triaging") ? outputs.map(({ path, output }): TriageDone => ({ type: DONE, output, loopPath: path.description })) : []),
  ] as DeskEvent[],
  // Only events the desk takes (an ignored one would make a new key below, with no loop path).
  filterEvents: (snapshot, event) => snapshot.can(event),
  // The loop path that led here is part of the state: every loop path is followed from `triaging`.
  serializeState: (snapshot, event) =>
    JSON.stringify([snapshot.value, snapshot.context, loopPathOf(event)]),
});

type DeskSnapshot = SnapshotFrom<typeof deskMachine>;

/** `ASK → [escalate succeeds] → ASSIGN ⇒ resolved` */
const describePath = (steps: { event: { type: string }; state: DeskSnapshot }[]) =>
  (steps
    .filter((step) => step.event.type !== "xstate.init")
    .map((step) => (loopPathOf(step.event) ? `[${loopPathOf(step.event)}]` : step.event.type))
    .join(" → ") || "(start)") + ` ⇒ ${JSON.stringify(steps.at(-1)!.state.value)}`;
const view = (snapshot: DeskSnapshot) => ({ value: snapshot.value, context: snapshot.context });

/** Plays `steps` on a real actor whose `triage` runs the loop path each done step names. */
async function play(steps: { event: DeskEvent | TriageDone | { type: "xstate.init" }; state: DeskSnapshot }[]) {
  const chosen: ((path: AgentTestPath) => void)[] = [];
  const ran: string[] = [];
  const triage = fromPromise<AgentMessage[], { question: string; attempt: number }>(async () => {
    const path = await new Promise<AgentTestPath>((resolve) => chosen.push(resolve));
    ran.push(path.description);
    return (await path.run()).messages;
  });
  const actor = createActor(deskMachine.provide({ actors: { triage } }));
  actor.start();
  const seen: ReturnType<typeof view>[] = [];
  for (const step of steps) {
    const event = step.event;
    if (event.type === "xstate.init") {
      // The model's first step is the initial state.
    } else if (event.type === DONE) {
      await waitFor(actor, () => chosen.length > 0);
      chosen.shift()!(byDescription.get(loopPathOf(event)!)!);
      await waitFor(actor, (snapshot) => !snapshot.matches("triaging"));
    } else actor.send(event as DeskEvent);
    seen.push(view(actor.getSnapshot()));
  }
  actor.stop();
  return { seen, ran };
}

describe("examples/support-desk: the app's machine across the loop's scripted paths", () => {
  it("the model reaches every desk state, and every loop path from `triaging`", () => {
    const states = new Set(paths.flatMap((path) => path.steps.map((step) => JSON.stringify(step.state.value))));
    expect([...states].sort()).toEqual(['"answered"', '"escalated"', '"failed"', '"idle"', '"resolved"', '"triaging"']);
    const followed = new Set(paths.flatMap((path) => path.steps.map((step) => loopPathOf(step.event)).filter(Boolean)));
    expect([...followed].sort()).toEqual(loop.paths.map((path) => path.description).sort());
    // How the app reads each loop path's result (a table the machine's guards decide).
    const outcomes = Object.fromEntries(
      paths.flatMap((path) => path.steps.filter((step) => loopPathOf(step.event) && step.state.context.attempts === 0).map((step) => [loopPathOf(step.event), step.state.value])),
    );
    expect(outcomes).toMatchObject({
      "the model answers without calling a tool": "answered",
      "the request fails (provider error response)": "failed",
      "the run is aborted while the response streams": "failed",
      "escalate succeeds": "escalated",
      "escalate throws": "answered",
      "beforeToolCall blocks escalate": "answered",
      "lookup_order succeeds": "answered",
      "the run is aborted while lookup_order runs": "failed",
    });
  });

  it.each(paths.map((path) => [describePath(path.steps), path] as const))("%s", async (_description, path) => {
    const steps = path.steps as unknown as Parameters<typeof play>[0];
    const { seen, ran } = await play(steps);
    expect(seen).toEqual(steps.map((step) => view(step.state)));
    // Each done step ran its loop path for real inside the app's actor.
    expect(ran).toEqual(steps.flatMap((step) => loopPathOf(step.event) ?? []));
  });

  it("the app's hook held on every loop path: no internal note in any answer the desk keeps", () => {
    const answers = outputs.flatMap(({ output }) => output.filter((message) => message.role === "toolResult"));
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((message) => JSON.stringify(message.content).includes("INTERNAL"))).toEqual([]);
  });
});
