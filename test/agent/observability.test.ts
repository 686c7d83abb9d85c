import { describe, expect, it } from "vitest";
import { filter, map } from "rxjs";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { scriptedModel, text, toolCall, type AgentEvent } from "../../src/index.js";
import { ok, tool } from "../loop/helpers.js";
import { scenario } from "./helpers.js";

const answer = (value: string, usage = { input: 10, output: 4 }) => ({ content: [text(value)], usage });

describe("R50, R51: observing an Agent", () => {
  it("R51: events$ carries every event of every run, in the order the listeners get them", async () => {
    const { agent, events } = scenario([answer("a"), answer("b")]);
    const seen: AgentEvent[] = [];
    const subscription = agent.events$.subscribe((event) => seen.push(event));
    await agent.prompt("one");
    await agent.prompt("two");
    subscription.unsubscribe();
    expect(seen).toEqual(events);
    expect(seen.filter((event) => event.type === "agent_end")).toHaveLength(2);
  });

  it("R51: events$ composes with RxJS operators (here: the streamed text deltas)", async () => {
    const { agent } = scenario([{ content: [text("hello there world")] }]);
    const deltas: string[] = [];
    agent.events$
      .pipe(
        filter((event) => event.type === "message_update"),
        map((event) => (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta" ? event.assistantMessageEvent.delta : "")),
        filter((delta) => delta !== ""),
      )
      .subscribe((delta) => deltas.push(delta));
    await agent.prompt("one");
    expect(deltas).toEqual(["hello ", "there ", "world"]);
  });

  it("R50: usage totals assistant messages and tool results across runs, and survives reset()", async () => {
    const priced = tool("priced", async () =>
      ok("done", {
        usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } },
      }),
    );
    const { agent } = scenario(
      [{ content: [toolCall("priced")], usage: { input: 100, output: 20, cacheRead: 50 } }, answer("a"), answer("b")],
      {},
      { tools: [priced], model: { ...scriptedModel, cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 } } },
    );
    await agent.prompt("one");
    await agent.prompt("two");
    agent.reset();
    const usage = agent.usage;
    expect({ ...usage, cost: undefined }).toEqual({ input: 121, output: 30, cacheRead: 50, cacheWrite: 0, totalTokens: 201, cost: undefined });
    // 121 input at $1/M, 28 output at $2/M, 50 cache reads at $0.1/M, plus the tool's own $0.5.
    expect(usage.cost.total).toBeCloseTo((120 * 1 + 28 * 2 + 50 * 0.1) / 1e6 + 0.5, 12);
  });

  it("R50: the session actor invokes each run; inspection sees the session, its runs and their tool calls", async () => {
    const inspected: InspectionEvent[] = [];
    const { agent } = scenario([{ content: [toolCall("read")] }, answer("done"), answer("again")], { inspect: (event) => void inspected.push(event) }, { tools: [tool("read")] });
    let runChild: unknown;
    agent.subscribe((event) => {
      if (event.type === "agent_start") runChild = agent.actor.getSnapshot().children.run;
    });
    await agent.prompt("one");
    await agent.prompt("two");
    expect(runChild).toBeDefined();
    const actors = inspected.filter((event) => event.type === "@xstate.actor").map((event) => event.actorRef as AnyActorRef);
    const parentOf = (ref: unknown) => (ref as { _parent?: { id: string } })._parent?.id;
    const runs = actors.filter((ref) => ref.id === "run");
    expect(agent.actor.id).toBe("session");
    expect(runs).toHaveLength(2);
    expect(runs.map(parentOf)).toEqual(["session", "session"]);
    expect(actors.filter((ref) => ref.id === "tool:0").map(parentOf)).toEqual(["run"]);
    expect(agent.actor.getSnapshot().value).toBe("idle");
  });
});
