/**
 * Issue 17 acceptance, through the real SDK against the local SSE server: the loop's recovery
 * (R60 retries, R62 compaction) with real sockets, time on an injected manual clock (the backoff's
 * timers fire when the test advances it) and the jitter from an injected random source.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  runAgentLoop,
  summarizingCompactor,
  type AgentLoopConfig,
  type AgentMessage,
  type AnyAgentEvent,
  type AssistantMessage,
  type Message,
  type StreamFn,
} from "../../src/index.js";
import { SUMMARY_HEADER } from "../../src/recovery/index.js";
import { anthropicModel, anthropicStreamFn } from "../../src/providers/anthropic/index.js";
import { errorBody, json, midStreamError, partialText, sse, startSseServer, textResponse, type SseServer } from "../support/sse-server.js";
import { recordingClock as manualClock, type RecordingClock as ManualClock, type ManualTimer } from "../support/recording-clock.js";
import { API_KEY, FIXTURE_MODEL_ID } from "./helpers.js";

let server: SseServer;
beforeAll(async () => {
  server = await startSseServer();
});
afterEach(() => server.clear());
afterAll(() => server.close());

const model = anthropicModel(FIXTURE_MODEL_ID);
const user = (content: string, timestamp = 1): AgentMessage => ({ role: "user", content, timestamp });
const overloaded = () => json(529, errorBody("overloaded_error", "Overloaded"));

/** The random source's draws, in order (then 0.5); records how many were taken. */
function draws(...values: number[]) {
  const taken: number[] = [];
  const random = () => {
    const value = values[taken.length] ?? 0.5;
    taken.push(value);
    return value;
  };
  return { random, taken };
}

interface Played {
  events: AnyAgentEvent[];
  messages: AgentMessage[];
  /** The injected clock's time at each stream-function call (the run's requests, compaction's included). */
  requestTimes: number[];
}

/**
 * Starts a run over the Anthropic provider (the factory's own SDK retries left at their default,
 * so only the loop's per-request `maxRetries: 0` turns them off), every event (pi's and the loop's)
 * into one array, and drives it: each timer the run sets on the clock is handed to `onTimer`.
 */
async function play(args: {
  config?: Partial<AgentLoopConfig>;
  clock: ManualClock;
  random: () => number;
  history?: AgentMessage[];
  prompt?: string;
  onTimer?: (timer: ManualTimer, events: readonly AnyAgentEvent[]) => void;
}): Promise<Played> {
  const events: AnyAgentEvent[] = [];
  const requestTimes: number[] = [];
  const provider = anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY });
  const streamFn: StreamFn = (m, context, options) => {
    requestTimes.push(args.clock.now());
    return provider(m, context, options);
  };
  const config: AgentLoopConfig = {
    model,
    convertToLlm: (messages) => messages as Message[],
    onRuntimeEvent: (event) => void events.push(event),
    ...args.config,
  };
  let settled = false;
  const run = runAgentLoop(
    [user(args.prompt ?? "Hello")],
    { messages: args.history ?? [], tools: [] },
    config,
    (event) => void events.push(event),
    undefined,
    streamFn,
    { clock: args.clock.clock, random: args.random },
  ).finally(() => (settled = true));
  // Each wait of the run is a timer on the manual clock: hand it to the test, which advances time.
  const ended = run.then(() => null);
  for (;;) {
    const timer = await Promise.race([args.clock.nextTimer(), ended]);
    if (timer === null || settled) break;
    if (!args.onTimer) throw new Error(`the run set an unexpected timer of ${timer.ms} ms`);
    args.onTimer(timer, events);
  }
  return { events, messages: await run, requestTimes };
}

/** A message without the fields that differ between runs (times, durations, the response id the server numbers). */
function comparable(message: AgentMessage): unknown {
  const { timestamp: _t, durationMs: _d, responseId: _r, ...rest } = message as AssistantMessage & { responseId?: string };
  return rest;
}

const runtimeTypes = new Set(["retry_scheduled", "message_discarded", "output_limit_escalated", "output_limit_recovery", "transcript_replaced"]);
const piEvents = (events: readonly AnyAgentEvent[]) => events.filter((event) => !runtimeTypes.has(event.type));
const typesOf = (events: readonly AnyAgentEvent[]) => events.map((event) => event.type);
const agentEnd = (events: readonly AnyAgentEvent[]) => events.at(-1) as Extract<AnyAgentEvent, { type: "agent_end" }>;
/** The event type, with the message's role or the update's kind. */
function detailed(event: AnyAgentEvent): string {
  if (event.type === "message_update") return `message_update:${event.assistantMessageEvent.type}`;
  if (event.type === "message_start" || event.type === "message_end") return `${event.type}:${(event.message as { role: string }).role}`;
  return event.type;
}
const retryCount = (i: number) => server.requests[i].headers["x-stainless-retry-count"];

describe("issue 17 acceptance: recovery through the real SDK against the local SSE server", () => {
  it("R60: two 529s then success: the transcript is a clean run's, no error text in any event, two retry_scheduled (attempts 2, 3) within the full-jitter bounds on the injected clock, 3 requests without SDK retries", async () => {
    const retry = { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 1_500 };

    // The clean run: the same answer, no failures.
    server.script(sse(textResponse(["Hello ", "there."])));
    const clean = await play({ config: { retry }, clock: manualClock(), random: draws().random });
    expect(server.requests).toHaveLength(1);
    server.clear();

    server.script(overloaded(), overloaded(), sse(textResponse(["Hello ", "there."])));
    const clock = manualClock();
    const random = draws(0.75, 0.999);
    const requestsWhenFired: number[] = [];
    const retried = await play({
      config: { retry },
      clock,
      random: random.random,
      onTimer: (timer, events) => {
        // The run waits on this timer: the next attempt is not made before it fires.
        const scheduled = events.filter((event) => event.type === "retry_scheduled");
        expect(timer.ms).toBe((scheduled.at(-1) as { delayMs: number }).delayMs);
        requestsWhenFired.push(server.requests.length);
        clock.advance(timer.ms);
      },
    });

    // The transcript and pi's events are a clean run's: the failed attempts left nothing.
    expect(retried.messages.map(comparable)).toEqual(clean.messages.map(comparable));
    expect(agentEnd(retried.events).messages.map(comparable)).toEqual(clean.messages.map(comparable));
    expect(typesOf(piEvents(retried.events))).toEqual(typesOf(clean.events));
    expect(agentEnd(retried.events).reason).toBe("completed");
    // Timings left out: a duration such as 21.52943 would "contain" 529.
    const piText = JSON.stringify(piEvents(retried.events), (key, value) => (key === "durationMs" || key === "timestamp" ? undefined : value));
    for (const needle of ["529", "verloaded", "errorMessage", '"stopReason":"error"']) expect(piText).not.toContain(needle);

    // Exactly two retry events, in order, between the prompt and the answer.
    expect(typesOf(retried.events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "retry_scheduled",
      "retry_scheduled",
      ...typesOf(clean.events).slice(4),
    ]);
    const scheduled = retried.events.filter((event) => event.type === "retry_scheduled");
    expect(scheduled.map((event) => [event.attempt, event.maxAttempts, event.kind, event.model])).toEqual([
      [2, 5, "overloaded", FIXTURE_MODEL_ID],
      [3, 5, "overloaded", FIXTURE_MODEL_ID],
    ]);
    // Full jitter: a uniform draw in [0, ceiling), ceiling = min(maxDelayMs, baseDelayMs·2^(n−1)) for the n-th retry.
    expect(random.taken).toEqual([0.75, 0.999]);
    scheduled.forEach((event, k) => {
      const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** k);
      expect(event.delayMs).toBeGreaterThanOrEqual(0);
      expect(event.delayMs).toBeLessThan(ceiling);
      expect(event.delayMs).toBe(Math.floor(random.taken[k] * ceiling));
    });
    expect(scheduled.map((event) => event.delayMs)).toEqual([750, 1_498]);

    // Measured on the injected clock: each wait is one timer of that delay, and the next request came after it fired.
    expect(clock.timers.map((timer) => [timer.ms, timer.fired])).toEqual([
      [750, true],
      [1_498, true],
    ]);
    expect(requestsWhenFired).toEqual([1, 2]);
    expect(retried.requestTimes.map((at) => at - retried.requestTimes[0])).toEqual([0, 750, 750 + 1_498]);

    // Three requests on the wire, each the SDK's first try (the loop passed maxRetries: 0).
    expect(server.requests).toHaveLength(3);
    expect([0, 1, 2].map(retryCount)).toEqual(["0", "0", "0"]);
    expect(server.requests[1].body).toEqual(server.requests[0].body);
    expect(server.requests[2].body).toEqual(server.requests[0].body);
  });

  it("R60: a 429 with retry-after: 2 waits at least 2000 ms of injected time, then succeeds", async () => {
    server.script(json(429, errorBody("rate_limit_error", "Number of requests has exceeded your rate limit"), { "retry-after": "2" }), sse(textResponse("Done.")));
    const clock = manualClock();
    // The backoff's own draw (below 100 ms) is shorter than the server's ask: retry-after wins.
    const { events, messages, requestTimes } = await play({
      config: { retry: { baseDelayMs: 100, maxDelayMs: 1_000 } },
      clock,
      random: draws(0.5).random,
      onTimer: (timer) => clock.advance(timer.ms),
    });

    const scheduled = events.filter((event) => event.type === "retry_scheduled");
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]).toMatchObject({ attempt: 2, kind: "rate_limited" });
    expect(scheduled[0].delayMs).toBeGreaterThanOrEqual(2_000);
    expect(clock.timers).toHaveLength(1);
    expect(clock.timers[0].ms).toBeGreaterThanOrEqual(2_000);
    expect(clock.timers[0].fired).toBe(true);
    expect(requestTimes).toHaveLength(2);
    expect(requestTimes[1] - requestTimes[0]).toBeGreaterThanOrEqual(2_000);

    expect(server.requests).toHaveLength(2);
    expect([0, 1].map(retryCount)).toEqual(["0", "0"]);
    expect(messages.map((m) => [m.role, (m as AssistantMessage).stopReason])).toEqual([
      ["user", undefined],
      ["assistant", "stop"],
    ]);
    expect((messages[1] as AssistantMessage).content).toEqual([{ type: "text", text: "Done." }]);
    expect(agentEnd(events).reason).toBe("completed");
    expect(JSON.stringify(piEvents(events))).not.toContain("rate limit");
  });

  it("R62: a 400 'prompt is too long' compacts through the same server (summarizingCompactor), announces transcript_replaced and the retried request carries the compacted transcript", async () => {
    const history: AgentMessage[] = [
      user("What is the capital of France?", 1),
      {
        role: "assistant",
        content: [{ type: "text", text: "Paris." }],
        api: "anthropic-messages",
        provider: "anthropic",
        model: FIXTURE_MODEL_ID,
        usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 12, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: 2,
      },
    ];
    server.script(
      json(400, errorBody("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")),
      sse(textResponse("The user asked for the capital of France; it is Paris.")),
      sse(textResponse("Lyon is second.")),
    );
    const clock = manualClock();
    const { events, messages } = await play({
      config: { retry: {}, compact: { compactor: summarizingCompactor({ keepTurns: 1 }) } },
      clock,
      random: draws().random,
      history,
      prompt: "And the second largest city?",
    });

    // (With withholding on, message_start comes with the first content event, R60.)
    expect(events.map(detailed)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "transcript_replaced",
      "message_start:assistant",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_end",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const summaryText = `${SUMMARY_HEADER}\n\nThe user asked for the capital of France; it is Paris.`;
    const replaced = events.find((event) => event.type === "transcript_replaced")!;
    expect(replaced.reason).toBe("overflow");
    expect(replaced.messages).toEqual([
      { role: "user", content: summaryText, timestamp: 2 },
      user("And the second largest city?"),
    ]);
    // The delta starts again at the replacement: only the answer was added after it.
    const answer = messages.at(-1) as AssistantMessage;
    expect(messages).toEqual([answer]);
    expect(agentEnd(events)).toMatchObject({ messages: [answer], reason: "completed" });
    expect(answer).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Lyon is second." }] });
    expect(JSON.stringify(piEvents(events))).not.toContain("prompt is too long");

    // Three requests: the overflowing one, the summary, and the same request over the compacted transcript.
    expect(server.requests).toHaveLength(3);
    const textsOf = (i: number) =>
      (server.requests[i].body as { messages: { role: string; content: string | { type: string; text?: string }[] }[] }).messages.map((message) => [
        message.role,
        typeof message.content === "string" ? [message.content] : message.content.map((block) => block.text ?? block.type),
      ]);
    expect(textsOf(0)).toEqual([
      ["user", ["What is the capital of France?"]],
      ["assistant", ["Paris."]],
      ["user", ["And the second largest city?"]],
    ]);
    expect(JSON.stringify(textsOf(1))).toContain("What is the capital of France?");
    // (The provider sends consecutive user messages as one, block by block.)
    expect(textsOf(2)).toEqual([["user", [summaryText, "And the second largest city?"]]]);
  });

  it("R60: an overloaded error after content is not retried: the message is an error message, reason error, no retry_scheduled", async () => {
    server.script(midStreamError("overloaded_error", "Overloaded", partialText("Half an ans")), sse(textResponse("never sent")));
    const clock = manualClock();
    const { events, messages } = await play({ config: { retry: {} }, clock, random: draws().random });

    expect(server.requests).toHaveLength(1);
    expect(retryCount(0)).toBe("0");
    expect(clock.timers).toEqual([]);
    expect(events.map(detailed)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_update:text_start",
      "message_update:text_delta",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    const last = messages.at(-1) as AssistantMessage;
    expect(last.stopReason).toBe("error");
    expect(last.content).toEqual([{ type: "text", text: "Half an ans" }]);
    expect(last.errorMessage).toMatch(/overloaded/i);
    expect(last.retry?.retryable).toBe(false);
    expect(agentEnd(events)).toMatchObject({ reason: "error", messages });
  });
});
