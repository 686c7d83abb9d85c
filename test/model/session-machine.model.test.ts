/**
 * Coverage of the session machine by the REAL Agent: a handful of scenarios driven through the
 * public API (scripted model, listeners, tools), with an `inspect` observer recording the session
 * actor's `@xstate.microstep` transitions. Every state and every transition of the machine
 * (`toDirectedGraph` edges plus eventless and targetless ones, keyed as in harness.ts) must be
 * taken by some scenario; those only a runtime defect takes (a run actor that fails, a rejected
 * `settleEvents` or `emitFailure`) by sessions provided with deliberately faulty implementations
 * (`faultySession`).
 *
 * Each scenario is played once (`memo`), by whichever test asks first: the coverage test asks for
 * every scenario itself, so it holds alone (`vitest -t coverage`) and in any order.
 */
import { describe, expect, it } from "vitest";
import { createActor, fromPromise } from "xstate";
import { defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall, Agent, type AgentEvent, type AnyAgentEvent, type AgentLoopConfig, type AgentMessage } from "../../src/index.js";
import { hostedRunMachine } from "../../src/api/start-run.js";
import { sessionHosting } from "../../src/agent/provided-session.js";
import { SessionRuntime } from "../../src/agent/session-runtime.js";
import { sessionMachine } from "../../machines/session.machine.js";
import { Coverage, memo } from "./harness.js";
import { ok, tool, untilAborted } from "../loop/helpers.js";
import { says, scenario } from "../agent/helpers.js";

/**
 * Sessions wired as the Agent wires them (the provided machine, a `SessionRuntime` serving the
 * actor's `host` key, runs hosted by it), but with deliberately faulty implementations, for the transitions
 * only a runtime defect takes:
 * - `rejecting`: `settleEvents` and `emitFailure` reject (the real ones never do:
 *   `EventQueue.settled()` resolves, and `SessionRuntime.emitFailure` catches a listener's second throw);
 * - `crashingRun`: the run machine's `appendAssistant` action throws, so the run actor fails
 *   (`xstate.error.actor.run`) after its first response.
 */
const faultyMachines = {
  rejecting: () => {
    const rejects = <I,>(what: string) => fromPromise<void, I>(() => Promise.reject(new Error(`faulty runtime: ${what} rejected`)));
    return sessionHosting().machine.provide({ actors: { settleEvents: rejects<{ host: string }>("settleEvents"), emitFailure: rejects<{ host: string; events: AgentEvent[] }>("emitFailure") } });
  },
  crashingRun: () => {
    const run = hostedRunMachine().provide({
      actions: {
        appendAssistant: () => {
          throw new Error("faulty runtime: appendAssistant crashed");
        },
      },
    });
    return sessionHosting().machine.provide({ actors: { run } });
  },
};

function faultySession(coverage: Coverage, machine: keyof typeof faultyMachines, failingListener: boolean) {
  const delivered: AnyAgentEvent[] = [];
  const runtime = new SessionRuntime(sessionHosting(), undefined, delivered, {
    dispatch: async (_delivered, event) => {
      delivered.push(event);
      if (failingListener && event.type === "message_end") throw new Error("listener bug");
    },
    idle: () => {},
  });
  const actor = createActor(faultyMachines[machine](), { input: { host: runtime.key, messages: [], model: scriptedModel, thinkingLevel: "off" }, inspect: (event) => coverage.record(event) });
  runtime.attach(actor);
  actor.start();
  const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: defaultConvertToLlm };
  const done = runtime.start({ config, streamFn: scriptedStreamFn([answer("a")]), tools: [], messages: [], prompts: [says("go")], skipInitialSteeringPoll: false });
  return { actor, done, delivered };
}

/** An Agent on the scripted model whose session actor's microsteps are recorded into `coverage`. */
function traced(coverage: Coverage, ...args: Parameters<typeof scenario>) {
  return scenario(args[0], { ...args[1], inspect: (event) => coverage.record(event) }, args[2]);
}

const answer = (value: string) => ({ content: [text(value)] });

async function ended(agent: Agent): Promise<void> {
  await agent.waitForIdle();
  expect(agent.actor.getSnapshot().value).toBe("idle");
  expect(agent.state.isStreaming).toBe(false);
}

type Scenario = (coverage: Coverage) => Promise<void>;

const scenarios: Record<string, Scenario> = {
  async "prompt → idle"(coverage) {
    const run = traced(coverage, [answer("hi")]);
    await run.agent.prompt("hello");
    await ended(run.agent);
  },

  async "R56: a throwing hook ends the run before its failure message reached the listeners: joined once"(coverage) {
    const run = traced(coverage, [answer("never")], {
      convertToLlm: () => {
        throw new Error("convert bug");
      },
    });
    // A listener that takes its time: the run's events are still on their way when it ends.
    run.agent.subscribe(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
    });
    await run.agent.prompt("go");
    await ended(run.agent);
    // The late message_end came while settling, after the run's output was adopted.
    expect(run.agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(run.log.filter((entry) => entry.startsWith("message_end")).length).toBe(2);
  },

  async "an Agent whose actor the app holds records each message as it ends; a listener still busy at the run's end"(coverage) {
    const run = traced(coverage, [answer("hi")]);
    const actor = run.agent.actor;
    const transcriptAtEnds: number[] = [];
    run.agent.subscribe(async (event) => {
      if (event.type === "message_end") transcriptAtEnds.push(actor.getSnapshot().context.messages.length);
      await new Promise<void>((resolve) => setImmediate(resolve));
    });
    await run.agent.prompt("go");
    await ended(run.agent);
    // The held actor's context had each message by its message_end (the prompt, then the answer).
    expect(transcriptAtEnds).toEqual([1, 2]);
  },

  async "steering and follow-up queued during a run are drained"(coverage) {
    const run = traced(coverage, [{ content: [toolCall("read")] }, answer("steered"), answer("followed")], {}, { tools: [tool("read")] });
    run.agent.subscribe((event) => {
      if (event.type === "tool_execution_start") {
        run.agent.steer(says("s1"));
        run.agent.followUp(says("f1"));
      }
    });
    await run.agent.prompt("go");
    expect(run.agent.hasQueuedMessages()).toBe(false);
    expect(run.stream.calls.length).toBe(3);
    await ended(run.agent);
  },

  async "abort mid-stream (twice: the second while already aborting)"(coverage) {
    const run = traced(coverage, [{ content: [text("a long answer that keeps going")], chunkSize: 2 }]);
    run.agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
        run.agent.abort();
        run.agent.abort();
      }
    });
    await run.agent.prompt("go");
    expect(run.agent.state.errorMessage).toBe("Request was aborted");
    await ended(run.agent);
  },

  async "R13: a session persisted mid-run and restored through Agent.restore"(coverage) {
    const script = [{ content: [toolCall("read")] }, answer("done")];
    const run = scenario(script, {}, { tools: [tool("read")] });
    let saved: unknown;
    run.agent.subscribe((event) => {
      if (event.type === "tool_execution_start" && saved === undefined) saved = JSON.parse(JSON.stringify(run.agent.getPersistedSnapshot()));
    });
    await run.agent.prompt("go");
    const restored = Agent.restore(saved, {
      initialState: { model: scriptedModel, tools: [tool("read")] },
      streamFn: scriptedStreamFn(script.slice(1)),
      inspect: (event) => coverage.record(event),
    });
    await ended(restored);
    expect(restored.state.messages.map((message) => message.role)).toEqual(run.agent.state.messages.map((message) => message.role));
  },

  async "R61, R62: an escalated answer is taken back and a compacted transcript replaces state.messages"(coverage) {
    const run = traced(
      coverage,
      [
        { content: [text("cut off")], stopReason: "length" },
        answer("whole answer"),
        { failure: "prompt_too_long" },
        answer("after compaction"),
      ],
      {
        outputLimit: {},
        // Keeps the last message only: the one prompt that overflowed.
        compact: { compactor: async ({ messages }) => messages.slice(-1) },
      },
    );
    await run.agent.prompt("first");
    expect(run.agent.state.messages.map((m) => (m.role === "assistant" ? `assistant:${(m.content[0] as { text: string }).text}` : m.role))).toEqual(["user", "assistant:whole answer"]);
    const replaced: AgentMessage[][] = [];
    run.agent.subscribe((event) => void (event.type === "transcript_replaced" && replaced.push(event.messages)), { runtimeEvents: true });
    await run.agent.prompt("second");
    // The event's transcript is the run's: the Agent's growing transcript must not write into it.
    expect(replaced.map((messages) => messages.length)).toEqual([1]);
    expect(run.agent.state.messages.map((m) => (m.role === "assistant" ? `assistant:${(m.content[0] as { text: string }).text}` : m.role))).toEqual(["user", "assistant:after compaction"]);
    expect(run.agent.lastEndReason).toBe("completed");
    await ended(run.agent);
  },

  async "abort mid-tool"(coverage) {
    const slow = tool("slow", async (_id, _args, signal) => {
      await untilAborted(signal);
      return ok(`aborted=${signal?.aborted}`);
    });
    const run = traced(coverage, [{ content: [toolCall("slow")] }, answer("never")], {}, { tools: [slow] });
    run.agent.subscribe((event) => {
      if (event.type === "tool_execution_start") run.agent.abort();
    });
    await run.agent.prompt("go");
    await ended(run.agent);
  },

  // R82: two calls wait; the Agent approves one (always: the session keeps the rule) and rejects
  // the other, then forgets the rules.
  async "R82: approve (always) and reject waiting calls; clear the rules"(coverage) {
    const guarded = tool("guarded", async () => ok("ran"), { needsApproval: true });
    const other = tool("other", async () => ok("ran too"), { needsApproval: true });
    const run = traced(coverage, [{ content: [toolCall("guarded", {}, "g1"), toolCall("other", {}, "o1")] }, answer("done")], {}, { tools: [guarded, other] });
    run.agent.subscribe(
      (event) => {
        if (event.type !== "tool_approval_requested") return;
        if (event.toolName === "guarded") run.agent.approve(event.approvalId, { always: true });
        else run.agent.reject(event.approvalId, "no");
      },
      { runtimeEvents: true },
    );
    await run.agent.prompt("go");
    expect(run.agent.state.messages.filter((m) => m.role === "toolResult").map((m) => (m as { content: { text: string }[] }).content[0].text)).toEqual(["ran", "no"]);
    expect(run.agent.approvalRules).toEqual([{ toolName: "guarded" }]);
    run.agent.clearApprovalRules();
    expect(run.agent.approvalRules).toEqual([]);
    await ended(run.agent);
  },

  async "a listener that throws: failing"(coverage) {
    const run = traced(coverage, [answer("a")]);
    let thrown = false;
    run.agent.subscribe((event) => {
      if (event.type === "message_end" && !thrown) {
        thrown = true;
        throw new Error("listener bug");
      }
    });
    await run.agent.prompt("go");
    expect(run.agent.state.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: "listener bug" });
    await ended(run.agent);
  },

  // R55: the run actor itself failed; the session closes the run with a failure message.
  async "a defect inside the run actor (a faulty run machine)"(coverage) {
    const session = faultySession(coverage, "crashingRun", false);
    await session.done;
    expect(session.actor.getSnapshot().value).toBe("idle");
    const ends = session.delivered.flatMap((event) => (event.type === "message_end" ? [event.message] : []));
    expect(ends.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "faulty runtime: appendAssistant crashed" });
    expect(session.delivered.at(-1)?.type).toBe("agent_end");
  },

  async "reset and messages set while idle"(coverage) {
    const run = traced(coverage, [answer("a")], {}, { systemPrompt: "be brief" });
    await run.agent.prompt("go");
    run.agent.state.messages = run.agent.state.messages.slice(0, 2);
    run.agent.followUp(says("later"));
    run.agent.reset();
    expect(run.agent.state.messages.map((m) => m.role)).toEqual(["system"]);
    expect(run.agent.hasQueuedMessages()).toBe(false);
    await ended(run.agent);
  },

  async "queue clears and mode/model/thinking changes while busy"(coverage) {
    const run = traced(coverage, [answer("a")]);
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
    await ended(run.agent);
  },

  async "a defect: settleEvents rejects (the session still goes idle)"(coverage) {
    const session = faultySession(coverage, "rejecting", false);
    await session.done;
    expect(session.actor.getSnapshot().value).toBe("idle");
    expect(session.delivered.at(-1)?.type).toBe("agent_end");
  },

  async "a defect: emitFailure rejects after a listener threw (the session still goes idle)"(coverage) {
    const session = faultySession(coverage, "rejecting", true);
    await session.done;
    expect(session.actor.getSnapshot().value).toBe("idle");
  },
};

const play = memo(async (name: string): Promise<Coverage> => {
  const coverage = new Coverage([sessionMachine]);
  await scenarios[name](coverage);
  return coverage;
});

describe("session machine: real sessions take every transition", () => {
  // (A scenario's own assertions count for whichever test plays it first; each test also checks
  // that its scenario drove the session.)
  for (const name of Object.keys(scenarios)) it(name, async () => expect((await play(name)).taken(sessionMachine)).toBeGreaterThan(0));

  it("coverage: every state and transition of the session machine was taken by a scenario", async () => {
    const coverage = new Coverage([sessionMachine]);
    for (const name of Object.keys(scenarios)) coverage.merge(await play(name));
    const { missing, summary } = coverage.report(sessionMachine);
    console.log(`session machine: ${Object.keys(scenarios).length} scenarios; ${summary}`);
    expect(missing).toEqual({ states: [], transitions: [] });
  });
});
