/**
 * SPEC R60–R62: recovery as states — retries of withheld transient failures (R60), output-limit
 * escalation and recovery messages (R61), compaction on overflow and above a threshold (R62).
 * Each test asserts the whole event sequence (pi's events and the loop's own, in one order) and
 * the transcript. Time and randomness are injected (R13): backoff delays are exact.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import {
  agentEvents,
  CompactionError,
  createAgentRunLogic,
  runAgentLoop,
  scriptedModel,
  scriptedStreamFn,
  summarizingCompactor,
  text,
  toolCall,
  unpairedToolMessages,
  type AgentLoopConfig,
  type AgentMessage,
  type AnyAgentEvent,
  type CompactRequest,
  type Compactor,
  type Script,
} from "../../src/index.js";
import { baseConfig, describe as describeMessage, tool, user, withoutUpdates } from "./helpers.js";
import { manualClock, ticks } from "../support/manual-clock.js";

/** A compact projection that also names the loop's own events. */
function project(event: AnyAgentEvent): string {
  switch (event.type) {
    // (A streamed message's start is its partial: its stop reason is not known yet.)
    case "message_start":
      return `message_start:${describeMessage(event.message).replace(/\((stop|length|error|aborted|toolUse)\)$/, "")}`;
    case "message_end":
      return `message_end:${describeMessage(event.message)}`;
    case "turn_end":
      return `turn_end:${describeMessage(event.message)}`;
    case "tool_execution_start":
    case "tool_execution_end":
      return `${event.type}:${event.toolName}`;
    case "agent_end":
      return `agent_end:${event.reason}`;
    case "retry_scheduled":
      return `retry_scheduled:${event.kind}:${event.attempt}/${event.maxAttempts}:${event.delayMs}ms`;
    case "transcript_replaced":
      return `transcript_replaced:${event.reason}:${event.messages.length}`;
    case "output_limit_escalated":
      return `output_limit_escalated:${event.toMaxTokens}`;
    case "output_limit_recovery":
      return `output_limit_recovery:${event.attempt}/${event.maxRecoveries}`;
    case "message_discarded":
      return event.message ? `message_discarded:${describeMessage(event.message)}` : `message_discarded:${event.reason}`;
    default:
      return event.type;
  }
}

/** One run on the scripted model with a manual clock whose timers fire as soon as they are set. */
async function run(script: Script, config: Partial<AgentLoopConfig>, prompts: AgentMessage[] = [user("go")]) {
  const stream = scriptedStreamFn(script);
  const time = manualClock();
  const timers: number[] = [];
  const clock = {
    ...time.clock,
    // Every timer is recorded and fires at once, moving the clock by its length.
    setTimer: (ms: number, fire: () => void) => {
      timers.push(ms);
      const cancel = time.clock.setTimer(ms, fire);
      queueMicrotask(() => time.advance(ms));
      return cancel;
    },
  };
  const events: AnyAgentEvent[] = [];
  const output = await runAgentLoop(
    prompts,
    { messages: [], tools: config.toolExecution ? [] : [] },
    baseConfig({ ...config, onRuntimeEvent: (event) => void events.push(event) }),
    (event) => void events.push(event),
    undefined,
    stream,
    { clock, random: () => 0.5 },
  );
  return { output, events: withoutUpdates(events as never) as AnyAgentEvent[], stream, timers };
}

const clean = (value: unknown) => JSON.parse(JSON.stringify(value));

describe("R60: transient failures are withheld and retried", () => {
  it("R60: two overloads then success: two retry_scheduled events, nothing of the failed attempts in the events or the transcript, delays from full jitter, provider retries off", async () => {
    const retried = await run([{ failure: "overloaded" }, { failure: "overloaded" }, { content: [text("answer")] }], { retry: { baseDelayMs: 500, maxDelayMs: 10_000 } });
    const plain = await run([{ content: [text("answer")] }], {});
    expect(retried.events.map(project)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      // random 0.5: half of the ceiling, 500 · 2^(n−1).
      "retry_scheduled:overloaded:2/5:250ms",
      "retry_scheduled:overloaded:3/5:500ms",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)",
      "agent_end:completed",
    ]);
    expect(retried.timers).toEqual([250, 500]);
    // The transcript is a clean run's, and no pi event carries the failures' text.
    const piEvents = retried.events.filter((event) => !event.type.startsWith("retry"));
    expect(JSON.stringify(piEvents)).not.toMatch(/overloaded/i);
    expect(clean(retried.output).map(describeMessage)).toEqual(clean(plain.output).map(describeMessage));
    expect(retried.stream.calls.map((call) => call.options.maxRetries)).toEqual([0, 0, 0]);
    expect(plain.stream.calls[0].options.maxRetries).toBeUndefined();
  });

  it("R60, R6: retries exhausted: the last failure surfaces as the response, reason error", async () => {
    const { events, output, stream } = await run([{ failure: "overloaded" }, { failure: "server_error" }, { failure: "overloaded" }], { retry: { maxAttempts: 3, baseDelayMs: 100 } });
    expect(events.map(project)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "retry_scheduled:overloaded:2/3:50ms",
      "retry_scheduled:server_error:3/3:100ms",
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)",
      "agent_end:error",
    ]);
    expect(stream.calls).toHaveLength(3);
    expect((output.at(-1) as { errorMessage?: string }).errorMessage).toMatch(/overloaded/i);
  });

  it("R60: a failure after content is not retried", async () => {
    const { events, stream } = await run([{ failure: "overloaded", afterContent: true }, { content: [text("never")] }], { retry: {} });
    expect(events.map(project)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)",
      "agent_end:error",
    ]);
    expect(stream.calls).toHaveLength(1);
  });

  it("R60: a failure that is not transient is not retried (it surfaces at once)", async () => {
    const { events, stream } = await run([{ stopReason: "error", errorMessage: "Anthropic API error 401 authentication_error: invalid x-api-key" }], { retry: {} });
    expect(events.map(project).slice(4)).toEqual(["message_start:assistant", "message_end:assistant(error)", "turn_end:assistant(error)", "agent_end:error"]);
    expect(stream.calls).toHaveLength(1);
  });

  it("R60: retry-after is honoured over a shorter backoff", async () => {
    const { events, timers } = await run([{ failure: "rate_limited", retryAfterMs: 2_000 }, { content: [text("ok")] }], { retry: { baseDelayMs: 500 } });
    expect(events.map(project)).toContain("retry_scheduled:rate_limited:2/5:2000ms");
    expect(timers).toEqual([2_000]);
  });

  it("R60: after overloadsBeforeFallback consecutive overloads the next attempts use the fallback model", async () => {
    const fallback = { ...scriptedModel, id: "fallback" };
    const { events, stream } = await run([{ failure: "overloaded" }, { failure: "overloaded" }, { content: [text("ok")] }], {
      retry: { baseDelayMs: 0, fallbackModel: fallback, overloadsBeforeFallback: 2 },
    });
    expect(stream.calls.map((call) => call.model.id)).toEqual(["scripted", "scripted", "fallback"]);
    expect(events.filter((event) => event.type === "retry_scheduled").map((event) => (event as { model: string }).model)).toEqual(["scripted", "fallback"]);
  });

  it("R60, R29: an abort during the backoff ends the request as aborted at once, without another attempt", async () => {
    const controller = new AbortController();
    const stream = scriptedStreamFn([{ failure: "overloaded" }, { content: [text("never")] }]);
    const events: AnyAgentEvent[] = [];
    const output = await runAgentLoop(
      [user("go")],
      { messages: [] },
      baseConfig({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 }, onRuntimeEvent: (event) => void (events.push(event), controller.abort()) }),
      (event) => void events.push(event),
      controller.signal,
      stream,
      { random: () => 0.5 },
    );
    expect(withoutUpdates(events as never).map((event) => project(event as AnyAgentEvent))).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "retry_scheduled:overloaded:2/5:30000ms",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)",
      "agent_end:aborted",
    ]);
    expect(stream.calls).toHaveLength(1);
    expect(output.at(-1)).toMatchObject({ stopReason: "aborted", errorMessage: "Operation aborted" });
  });

  it("R60, R13: a run persisted during the backoff resumes the wait with what was left", async () => {
    const time = manualClock();
    // One model across both processes: its first request failed in the first one.
    const model = scriptedStreamFn((_call, index) => (index === 0 ? { failure: "overloaded" as const } : { content: [text("after the wait")] }));
    const options = (clock = time.clock) => ({
      streamFn: model,
      config: baseConfig({ retry: { baseDelayMs: 1_000 } }),
      clock,
      random: () => 0.5,
    });
    const input = { prompts: [user("go")], messages: [] };
    const first = createActor(createAgentRunLogic(options()), { input });
    first.start();
    await ticks();
    expect(first.getSnapshot().value).toEqual({ turn: { requesting: "backingOff" } });
    expect(time.timers.map((timer) => timer.ms)).toEqual([500]);
    time.advance(200);
    const snapshot = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();

    const later = manualClock(time.now());
    const second = createActor(createAgentRunLogic(options(later.clock)), { snapshot, input });
    const events: AnyAgentEvent[] = [];
    agentEvents(second).subscribe((event) => events.push(event));
    second.start();
    await ticks();
    // 500 ms drawn, 200 ms gone before the snapshot: 300 left.
    expect(later.timers.map((timer) => timer.ms)).toEqual([300]);
    later.advance(300);
    const output = await toPromise(second);
    expect(withoutUpdates(events as never).map((event) => project(event as AnyAgentEvent))).toEqual([
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)",
      "agent_end:completed",
    ]);
    expect(output.map(describeMessage)).toEqual(["user(go)", "assistant(stop)"]);
  });
});

describe("R61: output limit", () => {
  const cut = (words: string) => ({ content: [text(words)], stopReason: "length" as const, usage: { output: 100 } });

  it("R61: escalated once (the cut answer closed, then discarded), then kept with a recovery message, then success", async () => {
    const { events, output, stream } = await run([cut("Part one"), cut("Part one, longer"), { content: [text("Part two.")] }], { outputLimit: {} });
    expect(events.map(project)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "message_start:assistant",
      "message_end:assistant(length)",
      "message_discarded:assistant(length)",
      "output_limit_escalated:32000",
      "message_start:assistant",
      "message_end:assistant(length)",
      "turn_end:assistant(length)",
      "output_limit_recovery:1/3",
      "turn_start",
      expect.stringMatching(/^message_start:user\(Output token limit hit/),
      expect.stringMatching(/^message_end:user\(Output token limit hit/),
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)",
      "agent_end:completed",
    ]);
    // Escalated once per run: the later requests keep the higher limit.
    expect(stream.calls.map((call) => call.options.maxTokens)).toEqual([undefined, 32_000, 32_000]);
    // The discarded answer is gone; the kept one and the loop's marked message stay.
    expect(output.map(describeMessage).map((entry) => entry.slice(0, 20))).toEqual(["user(go)", "assistant(length)", "user(Output token li", "assistant(stop)"]);
    expect(output[2]).toMatchObject({ role: "user", recovery: "output_limit" });
  });

  it("R61: three consecutive recoveries, then the run ends with max_output_tokens", async () => {
    const { events, output } = await run([cut("1"), cut("2"), cut("3"), cut("4"), cut("5"), { content: [text("never")] }], { outputLimit: {} });
    const projected = events.map(project);
    expect(projected.filter((entry) => entry.startsWith("output_limit_recovery"))).toEqual(["output_limit_recovery:1/3", "output_limit_recovery:2/3", "output_limit_recovery:3/3"]);
    expect(projected.filter((entry) => entry.startsWith("output_limit_escalated"))).toHaveLength(1);
    expect(projected.slice(-3)).toEqual(["message_end:assistant(length)", "turn_end:assistant(length)", "agent_end:max_output_tokens"]);
    expect(output.filter((message) => (message as { recovery?: string }).recovery === "output_limit")).toHaveLength(3);
  });

  it("R61: no escalation when the request already asked for the model's maximum: the recovery message comes at once", async () => {
    const { events, stream } = await run([cut("a"), { content: [text("b")] }], { outputLimit: {}, maxTokens: 32_000 });
    expect(events.map(project)).not.toContain("output_limit_escalated:32000");
    expect(events.map(project)).toContain("output_limit_recovery:1/3");
    expect(stream.calls).toHaveLength(2);
  });

  it("R61, R28: a truncated response with tool calls gets R28's results, which are its recovery (no extra message)", async () => {
    const stream = scriptedStreamFn([{ content: [text("Let me"), toolCall("look", {}, "t1")], stopReason: "length" }, { content: [text("done")] }]);
    const events: AnyAgentEvent[] = [];
    await runAgentLoop([user("go")], { messages: [], tools: [tool("look")] }, baseConfig({ outputLimit: {}, onRuntimeEvent: (e) => void events.push(e) }), (e) => void events.push(e), undefined, stream);
    const projected = withoutUpdates(events as never).map((event) => project(event as AnyAgentEvent));
    expect(projected.filter((entry) => entry.startsWith("output_limit") || entry.startsWith("message_discarded"))).toEqual([]);
    expect(projected).toContain("tool_execution_end:look");
    expect(stream.calls).toHaveLength(2);
  });
});

describe("R62: context overflow", () => {
  const keepLast = (n: number) => async ({ messages }: CompactRequest) => [user("summary"), ...messages.slice(-n)];

  it("R62: the overflow is withheld, the transcript compacted and announced, the request made again; agent_end has the messages since the replacement", async () => {
    const seen: CompactRequest[] = [];
    const prior = [user("old 1"), user("old 2")];
    const stream = scriptedStreamFn([{ failure: "prompt_too_long" }, { content: [text("fits now")] }]);
    const events: AnyAgentEvent[] = [];
    const output = await runAgentLoop(
      [user("go")],
      { messages: prior },
      baseConfig({
        compact: { compactor: async (request) => (seen.push(request), keepLast(1)(request)) },
        onRuntimeEvent: (event) => void events.push(event),
      }),
      (event) => void events.push(event),
      undefined,
      stream,
    );
    expect(withoutUpdates(events as never).map((event) => project(event as AnyAgentEvent))).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "transcript_replaced:overflow:2",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)",
      "agent_end:completed",
    ]);
    expect(seen.map((request) => [request.reason, request.messages.length])).toEqual([["overflow", 3]]);
    expect(stream.calls[1].context.messages.map((message) => message.role)).toEqual(["user", "user"]);
    // R12 after R62: the messages added since the replacement.
    expect(output.map(describeMessage)).toEqual(["assistant(stop)"]);
  });

  it("R62: a second overflow surfaces with reason prompt_too_long", async () => {
    const { events, stream } = await run([{ failure: "prompt_too_long" }, { failure: "prompt_too_long" }], { compact: { compactor: keepLast(1) } });
    expect(events.map(project)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "transcript_replaced:overflow:2",
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)",
      "agent_end:prompt_too_long",
    ]);
    expect(stream.calls).toHaveLength(2);
  });

  it("R62: a compactor that finds nothing to compact (returns the transcript itself): the overflow surfaces at once", async () => {
    const { events, stream } = await run([{ failure: "prompt_too_long" }, { content: [text("never")] }], { compact: { compactor: async ({ messages }) => messages } });
    expect(events.map(project).slice(4)).toEqual(["message_start:assistant", "message_end:assistant(error)", "turn_end:assistant(error)", "agent_end:prompt_too_long"]);
    expect(stream.calls).toHaveLength(1);
  });

  it("R62: a compactor's result is checked: messages equal to the transcript's are nothing to compact; an empty one, or one that keeps a tool result without its call, is a typed failure naming it", async () => {
    const ending = (events: AnyAgentEvent[]) => events.map(project).slice(-3);
    const copy = await run([{ failure: "prompt_too_long" }, { content: [text("never")] }], { compact: { compactor: async ({ messages }) => messages.map((message) => ({ ...message }) as AgentMessage) } });
    expect([ending(copy.events), copy.stream.calls.length, copy.events.some((event) => event.type === "transcript_replaced")]).toEqual([
      ["message_end:assistant(error)", "turn_end:assistant(error)", "agent_end:prompt_too_long"],
      1,
      false,
    ]);
    const empty = await run([{ failure: "prompt_too_long" }, { content: [text("never")] }], { compact: { compactor: async () => [] } });
    expect([ending(empty.events), empty.stream.calls.length, (empty.output.at(-1) as { errorMessage?: string }).errorMessage]).toEqual([
      ["message_end:assistant(error)", "turn_end:assistant(error)", "agent_end:error"],
      1,
      "The compactor returned an empty transcript",
    ]);
    // The first response calls a tool (unknown here: its result is an error); the compactor drops the call but keeps its result.
    const orphaning = await run([{ content: [toolCall("read", {}, "call-1")] }, { failure: "prompt_too_long" }, { content: [text("never")] }], {
      compact: { compactor: async ({ messages }) => messages.filter((message) => message.role !== "assistant") },
    });
    expect([ending(orphaning.events), orphaning.stream.calls.length, (orphaning.output.at(-1) as { errorMessage?: string }).errorMessage]).toEqual([
      ["message_end:assistant(error)", "turn_end:assistant(error)", "agent_end:error"],
      2,
      "The compactor kept the tool result of read (call-1) without the assistant message that calls it",
    ]);
  });

  it("R62, R56: a compactor that throws ends the run as a failure", async () => {
    const { events, output } = await run([{ failure: "prompt_too_long" }], {
      compact: {
        compactor: async () => {
          throw new Error("summary model unavailable");
        },
      },
    });
    expect(events.map(project).slice(-3)).toEqual(["message_end:assistant(error)", "turn_end:assistant(error)", "agent_end:error"]);
    expect((output.at(-1) as { errorMessage?: string }).errorMessage).toBe("summary model unavailable");
  });

  it("R62, R29: an abort during compaction ends the run aborted, as one during a backoff does; a compactor's own aborted failure while the run was not is a failure (R56)", async () => {
    const controller = new AbortController();
    const rejectsOnAbort: Compactor = (_request, signal) => {
      queueMicrotask(() => controller.abort());
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new DOMException("This operation was aborted", "AbortError")), { once: true }));
    };
    const aborted = new CompactionError("aborted", "Compaction aborted");
    const ends: string[] = [];
    for (const [compactor, signal] of [
      [rejectsOnAbort, controller.signal],
      [() => Promise.reject(aborted), undefined],
    ] as const) {
      const events: AnyAgentEvent[] = [];
      await runAgentLoop([user("go")], { messages: [] }, baseConfig({ compact: { compactor } }), (event) => void events.push(event), signal, scriptedStreamFn([{ failure: "prompt_too_long" }]));
      ends.push(withoutUpdates(events as never).map((event) => project(event as AnyAgentEvent)).slice(-3).join(" "));
    }
    expect(ends).toEqual([
      "message_end:assistant(aborted) turn_end:assistant(aborted) agent_end:aborted",
      "message_end:assistant(error) turn_end:assistant(error) agent_end:error",
    ]);
  });

  it("R62: proactive compaction at a turn boundary above the threshold (estimated from the last usage), not again right after", async () => {
    const seen: string[] = [];
    const look = tool("look");
    const stream = scriptedStreamFn([
      { content: [toolCall("look", {}, "l1")], usage: { input: 5_000, output: 10 } },
      { content: [text("done")], usage: { input: 120, output: 5 } },
    ]);
    const events: AnyAgentEvent[] = [];
    await runAgentLoop(
      [user("go")],
      { messages: [], tools: [look] },
      baseConfig({
        compact: { thresholdTokens: 1_000, compactor: async (request) => (seen.push(`${request.reason}:${request.estimatedTokens >= 5_010}`), keepLast(3)(request)) },
        onRuntimeEvent: (event) => void events.push(event),
      }),
      (event) => void events.push(event),
      undefined,
      stream,
    );
    expect(seen).toEqual(["threshold:true"]);
    const projected = withoutUpdates(events as never).map((event) => project(event as AnyAgentEvent));
    // Between the first turn's end and the second request.
    const replaced = projected.indexOf("transcript_replaced:threshold:4");
    expect(replaced).toBeGreaterThan(projected.indexOf("turn_start", 2));
    expect(replaced).toBeLessThan(projected.lastIndexOf("message_start:assistant"));
    // R30: the compactor dropped the tools' declaration; the run declares them again after the replacement.
    expect(projected.slice(replaced, replaced + 3)).toEqual(["transcript_replaced:threshold:4", "message_start:system", "message_end:system"]);
    expect(stream.calls[1].context.messages.map((message) => message.role)).toEqual(["user", "user", "assistant", "toolResult", "system"]);
  });

  it("R62: a proactive compaction that leaves the transcript above the threshold is not tried again in the run", async () => {
    let calls = 0;
    const stream = scriptedStreamFn([{ content: [toolCall("look", {}, "a")] }, { content: [toolCall("look", {}, "b")] }, { content: [text("done")] }]);
    const events: AnyAgentEvent[] = [];
    await runAgentLoop(
      [user("a prompt long enough to be over ten tokens, surely")],
      { messages: [], tools: [tool("look")] },
      baseConfig({ compact: { thresholdTokens: 10, compactor: async ({ messages }) => (calls++, [user("earlier turns, summarized at length"), ...messages]) }, onRuntimeEvent: (event) => void events.push(event) }),
      (event) => void events.push(event),
      undefined,
      stream,
    );
    expect(calls).toBe(1);
    expect(events.filter((event) => event.type === "transcript_replaced")).toHaveLength(1);
    expect(stream.calls).toHaveLength(3);
  });

  it("R62: the built-in summarizingCompactor over a transcript with parallel tool calls leaves no orphaned tool result", async () => {
    const turn = (n: number): AgentMessage[] => [
      user(`question ${n}`),
      {
        role: "assistant",
        content: [0, 1, 2].map((i) => ({ type: "toolCall" as const, id: `c${n}_${i}`, name: "look", arguments: { i } })),
        api: "scripted",
        provider: "scripted",
        model: "scripted",
        usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "toolUse",
        timestamp: 1,
      },
      ...[0, 1, 2].map((i): AgentMessage => ({ role: "toolResult", toolCallId: `c${n}_${i}`, toolName: "look", content: [{ type: "text", text: `seen ${i}` }], isError: false, timestamp: 1 })),
      { ...assistantText(`answer ${n}`) },
    ];
    const prior = [...turn(1), ...turn(2), ...turn(3), ...turn(4)];
    // The first request overflows; the summary request answers; the request made again succeeds.
    const stream = scriptedStreamFn((call, index) =>
      index === 0 ? { failure: "prompt_too_long" } : call.context.messages.some((m) => m.role === "system" && JSON.stringify(m).includes("ummar")) ? { content: [text("They looked at things.")] } : { content: [text("final")] },
    );
    const events: AnyAgentEvent[] = [];
    await runAgentLoop(
      [user("go")],
      { messages: prior, tools: [tool("look")] },
      baseConfig({ compact: { compactor: summarizingCompactor({ keepTurns: 1 }) }, onRuntimeEvent: (event) => void events.push(event) }),
      (event) => void events.push(event),
      undefined,
      stream,
    );
    const replaced = events.find((event) => event.type === "transcript_replaced") as { messages: AgentMessage[] } | undefined;
    expect(replaced).toBeDefined();
    expect(replaced!.messages.length).toBeLessThan(prior.length + 1);
    expect(unpairedToolMessages(replaced!.messages)).toEqual({ orphanedResults: [], unansweredCalls: [] });
    expect((events.at(-1) as { reason?: string }).reason).toBe("completed");
  });
});

function assistantText(value: string): AgentMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: value }],
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: 1,
  };
}

describe("R60–R67: malformed loop settings are typed errors where they enter", () => {
  it("agentLoop, createAgentRunLogic and the Agent reject them before any event", async () => {
    const { Agent, AgentInputError, agentLoop } = await import("../../src/index.js");
    const bad: Partial<AgentLoopConfig>[] = [{ retry: { maxAttempts: 0 } }, { outputLimit: { maxRecoveries: -1 } }, { compact: { compactor: "no" as never } }, { abortGraceMs: Number.NaN }, { toolTimeoutMs: -5 }, { requestLimiter: {} as never }];
    for (const settings of bad) {
      expect(() => agentLoop([user("go")], { messages: [] }, baseConfig(settings), undefined, scriptedStreamFn([])), JSON.stringify(settings)).toThrow(AgentInputError);
      expect(() => createAgentRunLogic({ streamFn: scriptedStreamFn([]), config: baseConfig(settings) }), JSON.stringify(settings)).toThrow(AgentInputError);
      expect(() => new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn([]), ...(settings as object) }), JSON.stringify(settings)).toThrow(AgentInputError);
    }
  });
});

describe("R60: withholding changes nothing a clean response shows", () => {
  it("R60: with retries on, a response that succeeds at once emits exactly the events of a run without them", async () => {
    const script = [{ content: [text("Hello there, friend")] }];
    const record = async (config: Partial<AgentLoopConfig>) => {
      const events: AnyAgentEvent[] = [];
      await runAgentLoop([user("go")], { messages: [] }, baseConfig(config), (event) => void events.push(event), undefined, scriptedStreamFn(script), { random: () => 0.5 });
      // Times differ between two runs; everything else must not.
      return JSON.parse(JSON.stringify(events, (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value)));
    };
    const withheld = await record({ retry: {}, compact: { compactor: async ({ messages }) => messages } });
    expect(withheld).toEqual(await record({}));
  });
});
