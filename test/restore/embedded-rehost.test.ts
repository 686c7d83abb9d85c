/**
 * R13, R14: an app machine that invokes an embedded run with `forwardEvents: true`, persisted while
 * the run's tool executes, restored twice from the same snapshot: each restored run is served under
 * a key of its own (`context.host`, `rehostedRun`), settles the interrupted call with its own
 * logic's runtime, and forwards the rest of its events to the app machine that restored it.
 */
import { describe, expect, it } from "vitest";
import { assign, createActor, setup, toPromise, type AnyActorRef } from "xstate";
import { createAgentRunLogic, scriptedStreamFn, text, toolCall, type AgentEventForward, type AgentTool, type Script } from "../../src/index.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";

const callThenAnswer = [{ content: [toolCall("work", {}, "c1")] }, { content: [text("done")] }];

/** An app machine invoking an embedded run with `forwardEvents: true`; `script`: the model's responses from here on. */
function appMachine(work: AgentTool, script: Script) {
  const agent = createAgentRunLogic({ streamFn: scriptedStreamFn(script), tools: [work], config: baseConfig() });
  return setup({
    types: { context: {} as { seen: string[] }, events: {} as AgentEventForward },
    actors: { agent },
  }).createMachine({
    context: { seen: [] },
    initial: "running",
    states: {
      running: {
        invoke: { id: "agent", src: "agent", input: { messages: [], prompts: [user("go")], forwardEvents: true }, onDone: "done" },
        on: { "agent.event": { actions: assign({ seen: ({ context, event }) => [...context.seen, event.event.type] }) } },
      },
      done: { type: "final" },
    },
  });
}

const hostOf = (app: AnyActorRef): string => (app.getSnapshot().children.agent.getSnapshot() as { context: { host: string } }).context.host;

describe("R13, R14: an embedded run restored with its app machine", () => {
  it("R13, R14: two restores of one snapshot are served apart and each forwards its events to its own app machine", async () => {
    let started!: () => void;
    const executing = new Promise<void>((resolve) => (started = resolve));
    // The original's tool never finishes: the app is persisted while it executes.
    const original = createActor(appMachine(tool("work", () => (started(), new Promise(() => {}))), callThenAnswer));
    original.start();
    await executing;
    const snapshot = JSON.parse(JSON.stringify(original.getPersistedSnapshot()));
    original.stop();
    expect(snapshot.context.seen).toContain("tool_execution_start");

    const executions: string[] = [];
    const restore = (name: string) => {
      const app = createActor(appMachine(tool("work", async () => (executions.push(name), ok(name))), callThenAnswer.slice(1)), { snapshot });
      app.start();
      return app;
    };
    const first = restore("first");
    const second = restore("second");
    expect(hostOf(first)).not.toBe(hostOf(second));
    expect(hostOf(first)).not.toBe(snapshot.children.agent.snapshot.context.host);
    await Promise.all([toPromise(first), toPromise(second)]);

    // R13: the interrupted call is not run again (its tool is not replay-safe): each run settles it without executing.
    expect(executions).toEqual([]);
    for (const app of [first, second]) {
      const after = app.getSnapshot().context.seen.slice(snapshot.context.seen.length);
      expect(after).toEqual(["tool_execution_end", "message_start", "message_end", "turn_end", "turn_start", "message_start", "message_update", "message_update", "message_update", "message_end", "turn_end", "agent_end"]);
    }
  });
});
