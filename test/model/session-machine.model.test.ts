/**
 * Coverage of the session machine by the REAL Agent: a handful of scenarios driven through the
 * public API (scripted model, listeners, tools), with an `inspect` observer recording the session
 * actor's `@xstate.microstep` transitions. Every state and every transition of the machine
 * (`toDirectedGraph` edges plus eventless ones, keyed as in harness.ts) must be taken by some
 * scenario, except the few listed in EXCLUDED with the reason no public call can reach them.
 */
import { describe, expect, it } from "vitest";
import type { AnyStateMachine, InspectionEvent, StateValue } from "xstate";
import { text, toolCall, type Agent } from "../../src/index.js";
import { sessionMachine } from "../../machines/session.machine.js";
import { machineStates, machineTransitions, stateIds, transitionKey } from "./harness.js";
import { ok, tool, untilAborted } from "../loop/helpers.js";
import { says, scenario } from "../agent/helpers.js";

type Root = AnyStateMachine["root"];

/** Transitions of the session machine no public API call can take, with the reason. */
const EXCLUDED: Record<string, string> = {
  "session.busy.settling —xstate.error.actor.0.session.busy.settling[0]→ session.idle":
    "settleEvents never rejects: EventQueue.settled() resolves (delivery failures go to onFailure)",
  "session.busy.failing —xstate.error.actor.0.session.busy.failing[0]→ session.idle":
    "emitFailure never rejects: SessionRuntime.emitFailure catches a listener's second throw",
};

const states = new Set<string>();
const transitions = new Set<string>();
let scenarios = 0;

/** An Agent on the scripted model whose session actor's microsteps are recorded. */
function traced(...args: Parameters<typeof scenario>) {
  const inspected: InspectionEvent[] = [];
  const run = scenario(args[0], { ...args[1], inspect: (event) => void inspected.push(event) }, args[2]);
  const record = () => {
    for (const event of inspected) {
      if (event.type !== "@xstate.microstep" || event.actorRef !== run.agent.actor) continue;
      for (const id of stateIds(sessionMachine.id, (event.snapshot as unknown as { value: StateValue }).value)) states.add(id);
      for (const t of event._transitions) {
        transitions.add(transitionKey(t));
        for (let node: Root | undefined = t.source as Root; node && node.parent; node = node.parent) states.add(node.id);
      }
    }
  };
  return { ...run, record };
}

const answer = (value: string) => ({ content: [text(value)] });

async function ended(run: ReturnType<typeof traced>, agent: Agent = run.agent): Promise<void> {
  await agent.waitForIdle();
  run.record();
  scenarios++;
  expect(agent.actor.getSnapshot().value).toBe("idle");
  expect(agent.state.isStreaming).toBe(false);
}

describe("session machine: the real Agent takes every transition", () => {
  it("prompt → idle", async () => {
    const run = traced([answer("hi")]);
    await run.agent.prompt("hello");
    await ended(run);
  });

  it("steering and follow-up queued during a run are drained", async () => {
    const run = traced([{ content: [toolCall("read")] }, answer("steered"), answer("followed")], {}, { tools: [tool("read")] });
    run.agent.subscribe((event) => {
      if (event.type === "tool_execution_start") {
        run.agent.steer(says("s1"));
        run.agent.followUp(says("f1"));
      }
    });
    await run.agent.prompt("go");
    expect(run.agent.hasQueuedMessages()).toBe(false);
    expect(run.stream.calls.length).toBe(3);
    await ended(run);
  });

  it("abort mid-stream (twice: the second while already aborting)", async () => {
    const run = traced([{ content: [text("a long answer that keeps going")], chunkSize: 2 }]);
    run.agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
        run.agent.abort();
        run.agent.abort();
      }
    });
    await run.agent.prompt("go");
    expect(run.agent.state.errorMessage).toBe("Request was aborted");
    await ended(run);
  });

  it("abort mid-tool", async () => {
    const slow = tool("slow", async (_id, _args, signal) => {
      await untilAborted(signal);
      return ok(`aborted=${signal?.aborted}`);
    });
    const run = traced([{ content: [toolCall("slow")] }, answer("never")], {}, { tools: [slow] });
    run.agent.subscribe((event) => {
      if (event.type === "tool_execution_start") run.agent.abort();
    });
    await run.agent.prompt("go");
    await ended(run);
  });

  it("a listener that throws: failing", async () => {
    const run = traced([answer("a")]);
    let thrown = false;
    run.agent.subscribe((event) => {
      if (event.type === "message_end" && !thrown) {
        thrown = true;
        throw new Error("listener bug");
      }
    });
    await run.agent.prompt("go");
    expect(run.agent.state.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: "listener bug" });
    await ended(run);
  });

  it("a defect inside the run actor (a non-message steered in)", async () => {
    const run = traced([answer("a")]);
    run.agent.steer(null as never);
    await run.agent.prompt("go");
    expect(run.agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
    await ended(run);
  });

  it("reset and messages set while idle", async () => {
    const run = traced([answer("a")], {}, { systemPrompt: "be brief" });
    await run.agent.prompt("go");
    run.agent.state.messages = run.agent.state.messages.slice(0, 2);
    run.agent.followUp(says("later"));
    run.agent.reset();
    expect(run.agent.state.messages.map((m) => m.role)).toEqual(["system"]);
    expect(run.agent.hasQueuedMessages()).toBe(false);
    await ended(run);
  });

  it("queue clears and mode/model/thinking changes while busy", async () => {
    const run = traced([answer("a")]);
    run.agent.subscribe((event) => {
      if (event.type !== "agent_start") return;
      run.agent.steer(says("s"));
      run.agent.followUp(says("f"));
      run.agent.clearSteeringQueue();
      run.agent.clearFollowUpQueue();
      run.agent.followUp(says("f2"));
      run.agent.clearAllQueues();
      run.agent.steeringMode = "all";
      run.agent.followUpMode = "all";
      run.agent.state.thinkingLevel = "high";
      run.agent.state.model = { ...run.agent.state.model, id: "other" };
    });
    await run.agent.prompt("go");
    expect(run.stream.calls.length).toBe(1);
    expect(run.agent.state.thinkingLevel).toBe("high");
    await ended(run);
  });

  it("every state and transition of the session machine was taken by a scenario", () => {
    const allStates = machineStates(sessionMachine);
    const allTransitions = machineTransitions(sessionMachine);
    for (const key of Object.keys(EXCLUDED)) expect(allTransitions, `stale exclusion: ${key}`).toContain(key);
    const missingStates = [...allStates].filter((id) => !states.has(id));
    const missingTransitions = [...allTransitions].filter((key) => !transitions.has(key) && !(key in EXCLUDED));
    const taken = [...allTransitions].filter((key) => transitions.has(key)).length;
    console.log(
      `session machine: ${scenarios} scenarios; states ${allStates.size - missingStates.length}/${allStates.size}, ` +
        `transitions ${taken}/${allTransitions.size} taken by the runtime` +
        ` (excluded: ${Object.keys(EXCLUDED).length} — ${Object.values(EXCLUDED).join("; ")})`,
    );
    expect({ states: missingStates, transitions: missingTransitions }).toEqual({ states: [], transitions: [] });
  });
});
