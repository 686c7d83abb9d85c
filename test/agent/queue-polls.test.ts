/**
 * R10 with the Agent's own queues: a steering poll's reply says whether the follow-up queue was
 * empty, and the run skips the follow-up poll that would come next with nothing run in between
 * (issue 40.2). R3 with the Agent's own queues: a run whose steering queue is empty as it starts
 * defers its initial steering poll to its first job, whose worker looks at the queue where the
 * poll would drain (once the run's first events reached the listeners) and polls only if something
 * came. What an app observes stays pi-agent-core 1.6's: checked differentially with a listener
 * that steers or queues a follow-up at each event of a run (sync or after an await, both queue
 * modes), against the reference's Agent as a black box. A run whose polls are an app's own hooks
 * polls as the reference does.
 */
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { Agent as ReferenceAgent } from "@earendil-works/pi-agent-core";
import { Agent, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool, type QueueMode, type Script } from "../../src/index.js";
import { ownQueuePolls, ownQueuesOf } from "../../src/actors/own-queues.js";
import { logEntry, summary, tool } from "../loop/helpers.js";
import { says } from "./helpers.js";

/* eslint-disable @typescript-eslint/no-explicit-any */
type Driver = any;
type Act = "steer" | "followUp" | "both";

/** Answers each request with `ok N`; with `tools`, the first request asks for a tool. */
const script = (tools: boolean): Script => (_call, i) => (tools && i === 0 ? { content: [toolCall("read", {}, "c1")] } : { content: [text(`ok ${i + 1}`)] });

interface Case {
  tools: boolean;
  /** `transformContext` (the run's first job) steers on its first call; `early`: something is steered before the prompt. */
  variant?: "steeringHook" | "early";
  mode: QueueMode;
  act: Act;
  /** The listener acts at the n-th event it gets (deltas included). */
  at: number;
  /** Whether the listener acts after an await of its own (it is awaited: R51). */
  awaits: boolean;
}

async function observe(kind: "reference" | "ours", c: Case) {
  let transforms = 0;
  const init = {
    initialState: { model: scriptedModel, ...(c.tools ? { tools: [tool("read")] as AgentTool[] } : {}) },
    streamFn: scriptedStreamFn(script(c.tools)),
    steeringMode: c.mode,
    followUpMode: c.mode,
    ...(c.variant === "steeringHook"
      ? {
          transformContext: async (messages: unknown[]) => {
            if (transforms++ === 0) agent.steer(says("s@transformContext"));
            return messages;
          },
        }
      : {}),
  };
  const agent: Driver = kind === "reference" ? new ReferenceAgent(init as never) : new Agent(init as never);
  if (c.variant === "early") agent.steer(says("s@before"));
  const log: string[] = [];
  let seen = 0;
  agent.subscribe(async (event: AgentEvent) => {
    if (event.type !== "message_update") log.push(logEntry(event));
    if (seen++ !== c.at) return;
    if (c.awaits) await Promise.resolve();
    if (c.act !== "followUp") agent.steer(says(`s@${event.type}`));
    if (c.act !== "steer") agent.followUp(says(`f@${event.type}`));
  });
  await agent.prompt("go");
  await agent.waitForIdle();
  const queued = agent.peekQueuedMessages().map((m: { content: string }) => m.content);
  return { log, transcript: agent.state.messages.map((m: unknown) => summary(m as never)), queued, events: seen };
}

/** Every state of the run an app can see, for the main scenarios (one-turn, or a tool turn and an answer), in `mode`. */
function cases(mode: QueueMode, tools: boolean): Case[] {
  const all: Case[] = [];
  for (const act of ["steer", "followUp", "both"] as const)
    // (A one-turn prompt has 9 events with its one delta; a tool turn and an answer 19.)
    for (let at = 0; at < (tools ? 19 : 9); at++) for (const awaits of [false, true]) all.push({ tools, mode, act, at, awaits });
  return all;
}

/** R3: steering queued by the run's first job itself (an app hook), or before the prompt (the initial poll is not deferred). */
function variantCases(): Case[] {
  const all: Case[] = [];
  for (const variant of ["steeringHook", "early"] as const)
    for (let at = 0; at < 11; at++) all.push({ tools: false, variant, mode: "one-at-a-time", act: "steer", at, awaits: at % 2 === 1 });
  return all;
}

/** Each case against the reference; how many were compared. */
async function compareAll(all: Case[]): Promise<number> {
  let compared = 0;
  for (const c of all) {
    const reference = await observe("reference", c);
    const ours = await observe("ours", c);
    expect(ours, JSON.stringify(c)).toEqual(reference);
    // The listener did act (the case's event exists in both runs).
    expect(reference.events, JSON.stringify(c)).toBeGreaterThan(c.at);
    compared++;
  }
  return compared;
}

describe("R3, R4a, R10: the polls the Agent's own queues answer", () => {
  for (const mode of ["one-at-a-time", "all"] as const)
    for (const tools of [false, true])
      it(`R3, R9, R10, R53: a listener steering or queueing a follow-up at any event (${tools ? "a tool turn and an answer" : "one turn"}, ${mode}): the same events, transcript and queues as the reference`, async () => {
        expect(await compareAll(cases(mode, tools))).toBe(3 * (tools ? 19 : 9) * 2);
      });

  it("R3: steering queued by the run's first job (an app hook) or before the prompt, a listener steering at any event: as the reference", async () => {
    expect(await compareAll(variantCases())).toBe(2 * 11);
  });

  /** The run's poll jobs, in order (each asked of the run's step worker), a job asked for with R3's check (`name?`), and R3's `steeringQueued` replies. */
  function pollsOf(): { inspect: (event: InspectionEvent) => void; polls: string[] } {
    const polls: string[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type !== "@xstate.event") return;
      if (event.event.type === "step.steeringQueued") polls.push("steeringQueued");
      if (event.event.type !== "step.run") return;
      const request = event.event as unknown as { job: { name: string }; checksSteering?: true };
      const name = request.job.name;
      if (name === "getSteeringMessages" || name === "getFollowUpMessages") polls.push(name);
      if (request.checksSteering) polls.push(`${name}?`);
    };
    return { inspect, polls };
  }

  it("R3, R10: a one-turn prompt with nothing queued polls steering once, after its turn: the initial poll is its first job's check", async () => {
    const { inspect, polls } = pollsOf();
    const agent = new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn(script(false)), inspect });
    await agent.prompt("go");
    expect(polls).toEqual(["convertToLlm?", "getSteeringMessages"]);
  });

  it("R3: steering a listener queued at agent_start stops the first job before it begins; the initial poll takes it", async () => {
    const { inspect, polls } = pollsOf();
    const agent = new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn(script(false)), inspect });
    let once = false;
    agent.subscribe((event) => {
      if (event.type === "agent_start" && !once) {
        once = true;
        agent.steer(says("first"));
      }
    });
    await agent.prompt("go");
    expect(polls).toEqual(["convertToLlm?", "steeringQueued", "getSteeringMessages", "getSteeringMessages"]);
    expect(agent.state.messages.map((m) => summary(m as never))).toHaveLength(3);
  });

  it("R3: steering queued before the prompt is polled at the run's start (no deferral)", async () => {
    const { inspect, polls } = pollsOf();
    const agent = new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn(script(false)), inspect });
    agent.steer(says("first"));
    await agent.prompt("go");
    expect(polls).toEqual(["getSteeringMessages", "getSteeringMessages"]);
  });

  it("R10: a follow-up queued by a turn_end listener is polled and taken; the next steering poll then skips the follow-up poll", async () => {
    const { inspect, polls } = pollsOf();
    const agent = new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn(script(false)), inspect });
    let once = false;
    agent.subscribe((event) => {
      if (event.type === "turn_end" && !once) {
        once = true;
        agent.followUp(says("more"));
      }
    });
    await agent.prompt("go");
    expect(polls).toEqual(["convertToLlm?", "getSteeringMessages", "getFollowUpMessages", "getSteeringMessages"]);
    expect(agent.state.messages.map((m) => summary(m as never))).toHaveLength(4);
  });

  it("R10: a run of an app's own queue hooks polls follow-ups after every steering poll that ends the inner loop, as the reference", async () => {
    const { inspect, polls } = pollsOf();
    const config = { model: scriptedModel, convertToLlm: (m: never[]) => m, getSteeringMessages: async () => [], getFollowUpMessages: async () => [] };
    await runAgentLoop([says("go")], { messages: [], tools: [] }, config as never, () => {}, undefined, scriptedStreamFn(script(false)), { inspect });
    expect(polls).toEqual(["getSteeringMessages", "getSteeringMessages", "getFollowUpMessages"]);
  });

  it("R10: only a pair of polls of the same queues is authoritative (a wrapper of either one is an app's hook)", () => {
    const queues = { followUpsEmpty: () => true, steeringEmpty: () => true };
    const own = ownQueuePolls(queues, async () => [], async () => []);
    expect(ownQueuesOf(own.getSteeringMessages, own.getFollowUpMessages)).toBe(queues);
    const wrapped = async () => [...(await own.getFollowUpMessages()), says("extra")];
    expect(ownQueuesOf(own.getSteeringMessages, wrapped)).toBeUndefined();
    const other = ownQueuePolls({ followUpsEmpty: () => true, steeringEmpty: () => true }, async () => [], async () => []);
    expect(ownQueuesOf(own.getSteeringMessages, other.getFollowUpMessages)).toBeUndefined();
    expect(ownQueuesOf(undefined, undefined)).toBeUndefined();
  });

  /**
   * A follow-up or steering message queued by a promise chain a listener left running (not
   * awaited) lands at a drain point that depends on microtask timing, which differs from the
   * reference's. What stays as the reference has it: the follow-up queue is read one microtask
   * after the steering queue was drained, and the steering queue again (R4a, after a turn with tool
   * results) two microtasks after (the reference's polls are that far apart).
   */
  async function deepestTaken(kind: "reference" | "ours", act: "steer" | "followUp", tools = false): Promise<number> {
    let deepest = -1;
    for (let depth = 0; depth <= 12; depth++) {
      const init = { initialState: { model: scriptedModel, ...(tools ? { tools: [tool("read")] as AgentTool[] } : {}) }, streamFn: scriptedStreamFn(script(tools)) };
      const agent: Driver = kind === "reference" ? new ReferenceAgent(init as never) : new Agent(init as never);
      let fired = false;
      agent.subscribe((event: AgentEvent) => {
        if (event.type !== "turn_end" || fired) return;
        fired = true;
        let chain = Promise.resolve();
        for (let i = 0; i < depth; i++) chain = chain.then(() => {});
        void chain.then(() => agent[act](says("late")));
      });
      await agent.prompt("go");
      await agent.waitForIdle();
      const messages: { role: string; content: unknown }[] = agent.state.messages;
      // Taken before the next request: one-turn, at all (the run went on); with tools, right after the results (before their answer).
      const late = messages.findIndex((m) => m.role === "user" && m.content === "late");
      if (late >= 0 && (!tools || messages[late - 1].role === "toolResult")) deepest = depth;
    }
    return deepest;
  }

  it("R10: the follow-up queue is read as many microtasks after the steering drain as the reference's follow-up poll", async () => {
    const gap = async (kind: "reference" | "ours") => (await deepestTaken(kind, "followUp")) - (await deepestTaken(kind, "steer"));
    expect(await gap("ours")).toBe(await gap("reference"));
    expect(await gap("reference")).toBe(1);
  });

  it("R4a: after a tool turn, the steering queue is read again as many microtasks after the steering drain as the reference's re-poll", async () => {
    const gap = async (kind: "reference" | "ours") => (await deepestTaken(kind, "steer", true)) - (await deepestTaken(kind, "steer"));
    expect(await gap("ours")).toBe(await gap("reference"));
    expect(await gap("reference")).toBe(2);
  });

  it("R4a: a tool turn's steering poll that took nothing and left the queue empty answers the re-poll; an app's own hooks are polled again", async () => {
    const { inspect, polls } = pollsOf();
    const agent = new Agent({ initialState: { model: scriptedModel, tools: [tool("read")] as AgentTool[] }, streamFn: scriptedStreamFn(script(true)), inspect });
    await agent.prompt("go");
    expect(polls).toEqual(["convertToLlm?", "getSteeringMessages", "getSteeringMessages"]);
    const own = pollsOf();
    const config = { model: scriptedModel, convertToLlm: (m: never[]) => m, getSteeringMessages: async () => [], getFollowUpMessages: async () => [] };
    await runAgentLoop([says("go")], { messages: [], tools: [tool("read")] }, config as never, () => {}, undefined, scriptedStreamFn(script(true)), { inspect: own.inspect });
    expect(own.polls).toEqual(["getSteeringMessages", "getSteeringMessages", "getSteeringMessages", "getSteeringMessages", "getFollowUpMessages"]);
  });
});
