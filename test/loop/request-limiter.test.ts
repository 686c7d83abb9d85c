/**
 * Issue 19 item 3: a request limiter shared by the runs of one process. Each request waits for its
 * slot in `turn.requesting.awaitingRequestSlot` and holds it until its response ended.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { Agent, AgentInputError, createAgentRunLogic, createRequestLimiter, runAgentLoop, scriptedModel, type AssistantMessage, type StreamFn } from "../../src/index.js";
import { baseConfig, user } from "./helpers.js";
import { manualClock, ticks } from "../support/manual-clock.js";

/** A stream function that counts the requests in flight and answers after a few macrotasks. */
function countingStream() {
  const stats = { inFlight: 0, max: 0, requests: 0 };
  const streamFn: StreamFn = async (model) => {
    stats.requests++;
    stats.inFlight++;
    stats.max = Math.max(stats.max, stats.inFlight);
    const message: AssistantMessage = {
      role: "assistant",
      content: [{ type: "text", text: "ok" }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      timestamp: 0,
    };
    return {
      async *[Symbol.asyncIterator]() {
        yield { type: "start" as const, partial: { ...message, content: [] } };
        await ticks(2);
        stats.inFlight--;
        yield { type: "done" as const, reason: "stop" as const, message };
      },
      result: async () => message,
    };
  };
  return { streamFn, stats };
}

describe("request limiter (issue 19)", () => {
  it("100 concurrent runs with a limit of 4: never more than 4 requests in flight, every run completes", async () => {
    const limiter = createRequestLimiter({ maxConcurrent: 4 });
    const { streamFn, stats } = countingStream();
    const runs = Array.from({ length: 100 }, (_, i) => runAgentLoop([user(`q${i}`)], { messages: [] }, baseConfig({ requestLimiter: limiter }), () => {}, undefined, streamFn));
    const outputs = await Promise.all(runs);
    expect(stats.requests).toBe(100);
    expect(stats.max).toBe(4);
    expect(outputs.every((messages) => messages.at(-1)?.role === "assistant")).toBe(true);
    expect(limiter.stats).toEqual({ inFlight: 0, waiting: 0 });
  });

  it("a run waits in turn.requesting.awaitingRequestSlot while the slots are taken", async () => {
    const limiter = createRequestLimiter({ maxConcurrent: 1 });
    const held = await limiter.acquire();
    const { streamFn } = countingStream();
    const actor = createActor(createAgentRunLogic({ streamFn, config: baseConfig({ requestLimiter: limiter }) }), { input: { prompts: [user("hi")], messages: [] } });
    actor.start();
    await ticks();
    expect(actor.getSnapshot().value).toEqual({ turn: { requesting: "awaitingRequestSlot" } });
    expect(limiter.stats).toEqual({ inFlight: 1, waiting: 1 });
    held();
    const output = await toPromise(actor);
    expect(output.map((message) => message.role)).toEqual(["user", "assistant"]);
  });

  it("requests and tokens per minute wait on the limiter's clock", async () => {
    const time = manualClock();
    const limiter = createRequestLimiter({ requestsPerMinute: 2, tokensPerMinute: 100, clock: time.clock });
    const first = await limiter.acquire();
    const second = await limiter.acquire();
    let third = false;
    const waited = limiter.acquire().then((release) => ((third = true), release));
    await ticks();
    expect(third).toBe(false);
    expect(time.timers.map((timer) => timer.ms)).toEqual([60_000]);
    // Both responses end 30 s later, with 110 tokens between them.
    time.advance(30_000);
    first(30);
    second(80);
    // At 60 s the request window has room again, but the tokens window is still over its limit
    // until the first response's 30 tokens leave it (30 s later).
    time.advance(30_000);
    await ticks();
    expect(third).toBe(false);
    expect(time.timers.map((timer) => timer.ms)).toEqual([30_000]);
    time.advance(29_999);
    await ticks();
    expect(third).toBe(false);
    time.advance(1);
    (await waited)();
    expect(third).toBe(true);
  });

  it("an abort while waiting gives up the wait (the request then ends aborted) and takes no slot", async () => {
    const limiter = createRequestLimiter({ maxConcurrent: 1 });
    const held = await limiter.acquire();
    const controller = new AbortController();
    const { streamFn } = countingStream();
    const done = runAgentLoop([user("go")], { messages: [] }, baseConfig({ requestLimiter: limiter }), () => {}, controller.signal, streamFn);
    await ticks();
    controller.abort();
    const output = await done;
    expect(limiter.stats).toEqual({ inFlight: 1, waiting: 0 });
    held();
    expect(limiter.stats).toEqual({ inFlight: 0, waiting: 0 });
    expect(output.at(-1)?.role).toBe("assistant");
  });

  it("the Agent takes a requestLimiter option, shared by several Agents", async () => {
    const limiter = createRequestLimiter({ maxConcurrent: 1 });
    const { streamFn, stats } = countingStream();
    const agents = [0, 1, 2].map(() => new Agent({ initialState: { model: scriptedModel }, streamFn, requestLimiter: limiter }));
    await Promise.all(agents.map((agent) => agent.prompt("hello")));
    expect(stats.max).toBe(1);
    expect(agents.map((agent) => (agent.state.messages.at(-1) as { content: { text: string }[] }).content[0].text)).toEqual(["ok", "ok", "ok"]);
  });

  it("malformed limits are typed errors", () => {
    expect(() => createRequestLimiter({ maxConcurrent: 0 })).toThrow(AgentInputError);
    expect(() => createRequestLimiter({ requestsPerMinute: Number.NaN })).toThrow(/requestsPerMinute/);
  });
});
