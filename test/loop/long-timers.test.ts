/**
 * The system clock (used when a run is given none) waits the whole of a delay beyond
 * `setTimeout`'s ≈24.8-day maximum, where a bare timer fires after 1 ms: R60's `retry-after` and
 * R65's tool timeouts. Vitest's fake timers clamp an overlong delay as Node does.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defaultConvertToLlm, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentRuntimeEvent } from "../../src/index.js";
import { systemClock } from "../../src/loop/clock.js";
import { tool, ok, user } from "./helpers.js";

const LONG = 3_000_000_000;
const DAY = 86_400_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("R60/R65: waits longer than setTimeout's maximum", () => {
  it("R65: systemClock.setTimer fires after the whole delay, not after 1 ms, and its cancel holds across the chain", async () => {
    const fired: string[] = [];
    systemClock.setTimer(LONG, () => fired.push("long"));
    const cancel = systemClock.setTimer(LONG, () => fired.push("cancelled"));
    await vi.advanceTimersByTimeAsync(30 * DAY);
    cancel();
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(LONG - 30 * DAY - 1);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(["long"]);
  });

  it("R60: a retry-after of 3e9 ms holds the retry for that long", async () => {
    const streamFn = scriptedStreamFn([{ failure: "rate_limited", retryAfterMs: LONG }, { content: [text("ok")] }]);
    const runtime: AgentRuntimeEvent[] = [];
    const run = runAgentLoop([user("go")], { messages: [], tools: [] }, { model: scriptedModel, convertToLlm: defaultConvertToLlm, retry: {}, onRuntimeEvent: (e) => void runtime.push(e) }, async () => {}, undefined, streamFn);
    await vi.advanceTimersByTimeAsync(1_000);
    expect([streamFn.calls.length, runtime.map((e) => e.type === "retry_scheduled" && e.delayMs)]).toEqual([1, [LONG]]);
    await vi.advanceTimersByTimeAsync(LONG);
    expect(streamFn.calls.length).toBe(2);
    await run;
  });

  it("R65: a toolTimeoutMs of 3e9 ms does not time out a 50 ms tool", async () => {
    const slow = tool("t", () => new Promise((resolve) => setTimeout(() => resolve(ok("done normally")), 50)));
    const streamFn = scriptedStreamFn([{ content: [toolCall("t", {})] }, { content: [text("fin")] }]);
    const ends: unknown[] = [];
    const run = runAgentLoop([user("go")], { messages: [], tools: [slow] }, { model: scriptedModel, convertToLlm: defaultConvertToLlm, toolTimeoutMs: LONG }, async (e: AgentEvent) => {
      if (e.type === "tool_execution_end") ends.push(e.result.content[0]);
    }, undefined, streamFn);
    await vi.advanceTimersByTimeAsync(100);
    await run;
    expect(ends).toEqual([{ type: "text", text: "done normally" }]);
  });
});
