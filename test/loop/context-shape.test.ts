/**
 * Every machine context stays at most 19 top-level keys. XState copies the context on every
 * `assign` (`Object.assign({}, context, update)`), and V8 makes an object given 20 or more keys
 * that way a dictionary: every later copy then costs ~30 µs on Node 24 instead of ~0.4 µs (the run
 * context reached 20 keys once, and with it a one-turn run cost a third more: bench/README.md,
 * issue 40.2). Every actor's snapshot is checked, through an inspection observer, in a run with
 * parallel tool calls and an Agent's prompt.
 */
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { Agent, runAgentLoop, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { baseConfig, model, tool, user } from "./helpers.js";

const MAX_KEYS = 19;

/** The largest context (by top-level keys) of each kind of actor an observer saw. */
function widestContexts() {
  const widest = new Map<string, number>();
  const inspect = (event: InspectionEvent) => {
    if (event.type !== "@xstate.snapshot") return;
    const context = (event.snapshot as { context?: unknown }).context;
    if (!context || typeof context !== "object") return;
    const id = (event.actorRef as { logic?: { id?: string } }).logic?.id ?? "(logic)";
    widest.set(id, Math.max(widest.get(id) ?? 0, Object.keys(context).length));
  };
  return { widest, inspect };
}

const script = () => scriptedStreamFn([{ content: [toolCall("a"), toolCall("b")] }, { content: [text("done")] }]);

describe("machine contexts stay small enough to copy fast", () => {
  it("the run and its tool calls", async () => {
    const { widest, inspect } = widestContexts();
    await runAgentLoop([user("go")], { messages: [], tools: [tool("a"), tool("b")] }, baseConfig(), () => {}, undefined, script(), { inspect });
    expect([...widest.keys()].sort()).toEqual(expect.arrayContaining(["run", "toolCall"]));
    for (const [id, keys] of widest) expect({ id, keys: Math.min(keys, MAX_KEYS + 1) }).toEqual({ id, keys: Math.min(keys, MAX_KEYS) });
  });

  it("an Agent's session and its run", async () => {
    const { widest, inspect } = widestContexts();
    const agent = new Agent({ initialState: { model, tools: [tool("a"), tool("b")] }, streamFn: script(), inspect });
    await agent.prompt("go");
    expect([...widest.keys()]).toEqual(expect.arrayContaining(["session", "run"]));
    for (const [id, keys] of widest) expect({ id, keys: Math.min(keys, MAX_KEYS + 1) }).toEqual({ id, keys: Math.min(keys, MAX_KEYS) });
  });
});
