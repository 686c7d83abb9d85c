/**
 * SPEC R14: `agentEvents` of an invoked or spawned run. The run starts with its parent, before the
 * app can reach the child; its first subscriber still gets every event from `agent_start`, as
 * `forwardEvents` delivers them (it used to miss `agent_start`, `turn_start` and the prompt's messages).
 */
import { describe, expect, it } from "vitest";
import { createActor, setup, toPromise, type AnyActorRef } from "xstate";
import { agentEvents, createAgentRunLogic, scriptedStreamFn, text, type AnyAgentEvent } from "../../src/index.js";
import { MAX_KEPT, RunEventChannel } from "../../src/api/run-event-channel.js";
import { baseConfig, user } from "../loop/helpers.js";

const types = (events: AnyAgentEvent[]) => events.map((event) => event.type).filter((type) => type !== "message_update");

function parentOf(answer: string) {
  const forwarded: AnyAgentEvent[] = [];
  const machine = setup({ actors: { run: createAgentRunLogic({ streamFn: scriptedStreamFn(() => ({ content: [text(answer)] })), config: baseConfig() }) } }).createMachine({
    initial: "running",
    on: { "agent.event": { actions: ({ event }) => void forwarded.push((event as unknown as { event: AnyAgentEvent }).event) } },
    states: { running: { invoke: { id: "run", src: "run", input: { messages: [], prompts: [user("go")], forwardEvents: true }, onDone: "done" } }, done: { type: "final" } },
  });
  return { parent: createActor(machine), forwarded };
}

describe("R14: agentEvents of a run the parent started", () => {
  it("R14: the first subscriber, after the parent started the run, gets every event from agent_start, as forwardEvents does", async () => {
    const { parent, forwarded } = parentOf("hello");
    parent.start();
    const first: AnyAgentEvent[] = [];
    const second: AnyAgentEvent[] = [];
    const child = parent.getSnapshot().children.run as AnyActorRef;
    agentEvents(child).subscribe((event) => first.push(event));
    // A later subscriber gets events from the moment it subscribes.
    agentEvents(child).subscribe((event) => second.push(event));
    await toPromise(parent);
    expect(types(first)).toEqual(types(forwarded));
    expect(types(first).slice(0, 2)).toEqual(["agent_start", "turn_start"]);
    expect(second.length).toBeLessThan(first.length);
    expect(first.slice(first.length - second.length)).toEqual(second);
  });

  it(`R14: the events are kept for the first subscriber only, and none once more than ${MAX_KEPT} came (no stream with a gap)`, () => {
    const event = { type: "turn_start" } as AnyAgentEvent;
    const few = new RunEventChannel();
    few.next({ type: "agent_start" });
    few.next(event);
    const first: AnyAgentEvent[] = [];
    const later: AnyAgentEvent[] = [];
    few.events.subscribe((e) => first.push(e));
    few.events.subscribe((e) => later.push(e));
    few.next(event);
    expect(types(first)).toEqual(["agent_start", "turn_start", "turn_start"]);
    expect(types(later)).toEqual(["turn_start"]);

    const many = new RunEventChannel();
    for (let i = 0; i <= MAX_KEPT; i++) many.next(event);
    const seen: AnyAgentEvent[] = [];
    many.events.subscribe((e) => seen.push(e));
    many.next({ type: "agent_end", messages: [] });
    expect(types(seen)).toEqual(["agent_end"]);
  });
});
