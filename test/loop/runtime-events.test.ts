/**
 * SPEC R66: the loop's own events (`AgentRuntimeEvent`) are additive: emitted only when their
 * mechanism is configured, delivered to `onRuntimeEvent`, to `Agent.subscribe(listener,
 * {runtimeEvents: true})` and to `agentEvents(actor)`, in order with pi's events, and never to
 * pi's surfaces (an `emit` sink, `agentLoop`'s stream, a plain `subscribe`, `events$`).
 */
import * as reference from "@earendil-works/pi-agent-core";
import { from, lastValueFrom, takeWhile, toArray } from "rxjs";
import { createActor } from "xstate";
import { describe, expect, it } from "vitest";
import {
  Agent,
  agentEvents,
  agentLoop,
  createAgentRunLogic,
  isRuntimeEvent,
  runAgentLoop,
  scriptedModel,
  scriptedStreamFn,
  text,
  type AgentEvent,
  type AgentRuntimeEvent,
  type AnyAgentEvent,
  type AgentMessage,
  type Clock,
  type ScriptedResponse,
} from "../../src/index.js";
import { baseConfig, entries, logEntry, summary, user } from "./helpers.js";

/** pi 1.6's `AgentEvent` types: everything a run may emit with nothing configured. */
const PI_EVENT_TYPES = [
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
] as const satisfies readonly AgentEvent["type"][];

const RUNTIME_EVENT_TYPES = [
  "retry_scheduled",
  "output_limit_escalated",
  "message_discarded",
  "output_limit_recovery",
  "transcript_replaced",
] as const satisfies readonly AgentRuntimeEvent["type"][];

/**
 * A clock whose timers fire at once (on a microtask), moving its time forward by their delay: a
 * backoff costs no real time, and the waits are recorded.
 */
function skippingClock(start = 1_000) {
  let now = start;
  const waits: number[] = [];
  const clock: Clock = {
    now: () => now,
    monotonic: () => now,
    setTimer: (ms, fire) => {
      waits.push(ms);
      now += ms;
      let cancelled = false;
      queueMicrotask(() => cancelled || fire());
      return () => void (cancelled = true);
    },
  };
  return { clock, waits };
}

/** One log of both kinds, as a listener sees them: pi's events projected, the loop's by type and fields. */
function entry(event: AnyAgentEvent): string {
  if (!isRuntimeEvent(event)) return logEntry(event);
  if (event.type === "retry_scheduled") return `retry_scheduled(${event.attempt}/${event.maxAttempts}, ${event.kind}, ${event.delayMs} ms)`;
  return event.type;
}

const withoutDeltas = (events: AnyAgentEvent[]) => events.filter((event) => event.type !== "message_update").map(entry);

/** Two transient failures, then the answer: what a retrying run recovers from. */
const flaky = (): ScriptedResponse[] => [{ failure: "overloaded" }, { failure: "rate_limited", retryAfterMs: 2_000 }, { content: [text("hello")] }];

/** Responses that would start each mechanism if it were configured. */
const triggers: [string, ScriptedResponse[]][] = [
  ["a 529 (R60)", [{ failure: "overloaded" }, { content: [text("never")] }]],
  ["a truncated answer (R61)", [{ content: [text("cut")], stopReason: "length" }, { content: [text("never")] }]],
  ["a prompt that is too long (R62)", [{ failure: "prompt_too_long" }, { content: [text("never")] }]],
];

describe("R66: AgentRuntimeEvent, additive to pi's AgentEvent", () => {
  it("R66: isRuntimeEvent is exported and tells the loop's events from pi's", () => {
    for (const type of RUNTIME_EVENT_TYPES) expect(isRuntimeEvent({ type } as AnyAgentEvent), type).toBe(true);
    for (const type of PI_EVENT_TYPES) expect(isRuntimeEvent({ type } as AnyAgentEvent), type).toBe(false);
  });

  it.each(triggers)("R66: with nothing configured, %s gives exactly pi's events (the reference's), and no runtime event anywhere", async (_name, script) => {
    const ours: AgentEvent[] = [];
    const runtime: AgentRuntimeEvent[] = [];
    const messages = await runAgentLoop([user("hi")], { messages: [] }, baseConfig({ onRuntimeEvent: (event) => void runtime.push(event) }), (event) => void ours.push(event), undefined, scriptedStreamFn(script));
    const theirs: AgentEvent[] = [];
    const referenceMessages = await (reference.runAgentLoop as unknown as typeof runAgentLoop)([user("hi")], { messages: [] }, baseConfig(), (event) => void theirs.push(event), undefined, scriptedStreamFn(script));

    expect(runtime).toEqual([]);
    expect(ours.every((event) => (PI_EVENT_TYPES as readonly string[]).includes(event.type))).toBe(true);
    expect(entries(ours)).toEqual(entries(theirs));
    expect(messages.map(summary)).toEqual(referenceMessages.map(summary));

    // An Agent's opted-in listener gets the same events as a plain one: nothing more.
    const agent = new Agent({ streamFn: scriptedStreamFn(script), initialState: { model: scriptedModel } });
    const plain: AnyAgentEvent[] = [];
    const optedIn: AnyAgentEvent[] = [];
    agent.subscribe((event) => void plain.push(event));
    agent.subscribe((event) => void optedIn.push(event), { runtimeEvents: true });
    await agent.prompt(user("hi"));
    expect(optedIn.filter(isRuntimeEvent)).toEqual([]);
    expect(optedIn.map(entry)).toEqual(plain.map(entry));
    expect(withoutDeltas(plain)).toEqual(entries(ours));
  });

  it("R66: with retries configured, pi's emit sink sees no runtime event while onRuntimeEvent sees them, in order", async () => {
    const { clock, waits } = skippingClock();
    const log: string[] = [];
    const emitted: AgentEvent[] = [];
    const runtime: AgentRuntimeEvent[] = [];
    const config = baseConfig({
      retry: { baseDelayMs: 100 },
      onRuntimeEvent: (event) => {
        runtime.push(event);
        log.push(entry(event));
      },
    });
    const sink = (event: AgentEvent) => {
      emitted.push(event);
      if (event.type !== "message_update") log.push(entry(event));
    };
    const messages = await runAgentLoop([user("hi")], { messages: [] }, config, sink, undefined, scriptedStreamFn(flaky()), { clock, random: () => 0.5 });

    // The sink's events are a clean run's: the failed attempts were withheld (R60).
    const clean: AgentEvent[] = [];
    const cleanMessages = await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), (event) => void clean.push(event), undefined, scriptedStreamFn([{ content: [text("hello")] }]));
    expect(emitted.some((event) => isRuntimeEvent(event as AnyAgentEvent))).toBe(false);
    expect(entries(emitted)).toEqual(entries(clean));
    expect(messages.map(summary)).toEqual(cleanMessages.map(summary));

    // Full jitter at 0.5: 50 ms below the first ceiling (100 ms); the second waits for retry-after.
    expect(runtime).toEqual([
      { type: "retry_scheduled", attempt: 2, maxAttempts: 5, delayMs: 50, kind: "overloaded", errorMessage: "Scripted model: HTTP 529 overloaded_error: Overloaded", model: scriptedModel.id },
      {
        type: "retry_scheduled",
        attempt: 3,
        maxAttempts: 5,
        delayMs: 2_000,
        kind: "rate_limited",
        errorMessage: "Scripted model: HTTP 429 rate_limit_error: Number of requests has exceeded your rate limit (retry after 2000 ms)",
        model: scriptedModel.id,
      },
    ]);
    expect(waits).toEqual([50, 2_000]);
    expect(log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "retry_scheduled(2/5, overloaded, 50 ms)",
      "retry_scheduled(3/5, rate_limited, 2000 ms)",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:2",
    ]);

    // agentLoop's stream is pi's surface too.
    const stream = agentLoop([user("hi")], { messages: [] }, baseConfig({ retry: { baseDelayMs: 100 } }), undefined, scriptedStreamFn(flaky()), { clock: skippingClock().clock, random: () => 0.5 });
    const streamed = await lastValueFrom(from(stream).pipe(toArray()));
    expect(entries(streamed)).toEqual(entries(clean));
  });

  it("R66: Agent.subscribe(listener, {runtimeEvents: true}) gets them interleaved with pi's events; a plain subscribe and events$ do not", async () => {
    const { clock } = skippingClock();
    const agent = new Agent({ streamFn: scriptedStreamFn(flaky()), initialState: { model: scriptedModel }, retry: { baseDelayMs: 100 }, clock, random: () => 0.5 });
    const plain: AnyAgentEvent[] = [];
    const optedIn: AnyAgentEvent[] = [];
    const observed: AgentEvent[] = [];
    agent.subscribe((event) => void plain.push(event));
    agent.subscribe((event) => void optedIn.push(event), { runtimeEvents: true });
    agent.events$.subscribe((event) => observed.push(event));
    await agent.prompt(user("hi"));

    const pis = ["agent_start", "turn_start", "message_start:user(hi)", "message_end:user(hi)", "message_start:assistant", "message_end:assistant(stop)", "turn_end:assistant(stop)+0", "agent_end:2"];
    expect(withoutDeltas(plain)).toEqual(pis);
    expect(withoutDeltas(observed)).toEqual(pis);
    expect(withoutDeltas(optedIn)).toEqual([...pis.slice(0, 4), "retry_scheduled(2/5, overloaded, 50 ms)", "retry_scheduled(3/5, rate_limited, 2000 ms)", ...pis.slice(4)]);
    // With the deltas too, the opted-in listener's pi events are the plain listener's, one for one.
    expect(optedIn.filter((event) => !isRuntimeEvent(event))).toEqual(plain);
    expect(agent.state.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[hello]"]);
  });

  it("R66: agentEvents(actor) carries them too, in the same order", async () => {
    const { clock } = skippingClock();
    const logic = createAgentRunLogic({ streamFn: scriptedStreamFn(flaky()), config: baseConfig({ retry: { baseDelayMs: 100 } }), clock, random: () => 0.5 });
    const run = createActor(logic, { input: { messages: [], prompts: [user("hi")] } });
    // The channel does not complete when the run ends: read up to agent_end.
    const events = lastValueFrom(agentEvents(run).pipe(takeWhile((event) => event.type !== "agent_end", true), toArray()));
    run.start();
    expect(withoutDeltas(await events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "retry_scheduled(2/5, overloaded, 50 ms)",
      "retry_scheduled(3/5, rate_limited, 2000 ms)",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:2",
    ]);
  });

  it("R66: the invariant: message_end appends, message_discarded removes, transcript_replaced replaces; agent_end.messages are the messages since the replacement", async () => {
    const log: string[] = [];
    const all: AnyAgentEvent[] = [];
    const record = (event: AnyAgentEvent) => {
      all.push(event);
      if (event.type !== "message_update") log.push(entry(event));
    };
    const start = [user("earlier", 0)];
    const config = baseConfig({
      maxTokens: 100,
      outputLimit: {},
      compact: { compactor: async ({ messages }) => [user("Summary: the user asked for a long answer."), ...messages.slice(-1)] },
      onRuntimeEvent: record,
    });
    const script: ScriptedResponse[] = [
      { content: [text("cut")], stopReason: "length" },
      { content: [text("cut again")], stopReason: "length" },
      { failure: "prompt_too_long" },
      { content: [text("done")] },
    ];
    const added = await runAgentLoop([user("write a long answer")], { messages: start }, config, record, undefined, scriptedStreamFn(script));

    const RESUME = "Output token limit hit. Resume directly where you stopped, with no apology and no recap; break remaining work into smaller pieces.";
    expect(log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(write a long answer)",
      "message_end:user(write a long answer)",
      "message_start:assistant",
      "message_end:assistant(length)",
      // R61: closed, then taken back, then asked for again with the model's maximum.
      "message_discarded",
      "output_limit_escalated",
      "message_start:assistant",
      "message_end:assistant(length)",
      "turn_end:assistant(length)+0",
      // R61: cut again: the loop's recovery message opens the next turn.
      "output_limit_recovery",
      "turn_start",
      `message_start:user(${RESUME})`,
      `message_end:user(${RESUME})`,
      // R62: the overflow is withheld; the compacted transcript replaces the run's.
      "transcript_replaced",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:1",
    ]);

    // A consumer that applies the three kinds of change to the starting transcript has the run's context.
    let rebuilt: AgentMessage[] = start.slice();
    let since: AgentMessage[] = [];
    for (const event of all) {
      if (event.type === "message_end") (rebuilt.push(event.message), since.push(event.message));
      if (event.type === "message_discarded") {
        expect(rebuilt.at(-1)).toBe(event.message);
        (rebuilt.pop(), since.pop());
      }
      if (event.type === "transcript_replaced") ((rebuilt = event.messages.slice()), (since = []));
    }
    expect(rebuilt.map(summary)).toEqual(["user(Summary: the user asked for a long answer.)", `user(${RESUME})`, "assistant(stop)[done]"]);
    expect(rebuilt[1]).toMatchObject({ role: "user", recovery: "output_limit" });
    const end = all.at(-1);
    expect(end?.type === "agent_end" && end.messages).toEqual(since);
    expect(added).toEqual(since);
  });
});
