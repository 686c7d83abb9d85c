/**
 * R83 for what the property scenarios do not generate: tool timeouts (R65) on the injected clock,
 * a run aborted from its signal mid-batch (R29), a throwing hook (R56, its error journaled as
 * `{name, message}`), and a journal that no longer fits the run (a typed `JournalDivergedError`).
 */
import { describe, expect, it } from "vitest";
import type { AgentTool, AnyAgentEvent } from "../../src/index.js";
import { PushAssistantStream, emptyUsage, runAgentLoop, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { replayRun } from "../../src/durable/replay.js";
import { JournalDivergedError } from "../../src/durable/errors.js";
import { baseConfig, user } from "../loop/helpers.js";
import { manualClock } from "../support/manual-clock.js";
import { memoryRunStore } from "../support/memory-run-store.js";

const ticks = () => new Promise((resolve) => setTimeout(resolve, 0));
const tool = (name: string, run: (signal?: AbortSignal) => Promise<string>, extra: Partial<AgentTool> = {}): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: {} },
  execute: async (_id, _params, signal) => ({ content: [{ type: "text", text: await run(signal) }], details: {} }),
  ...extra,
});

async function recorded(run: (durable: { store: ReturnType<typeof memoryRunStore>; sessionId: string }, sink: (e: AnyAgentEvent) => void) => Promise<unknown>, watch?: (event: AnyAgentEvent) => unknown) {
  const store = memoryRunStore();
  const delivered: string[] = [];
  await run({ store, sessionId: "s" }, (event) => {
    delivered.push(JSON.stringify(event));
    watch?.(event);
  });
  const records = store.readSession("s").records();
  const [replayed] = await replayRun(records);
  return { delivered, replayed: replayed.events.map((e) => JSON.stringify(e)), records: records.map((r) => r.record) };
}

describe("R83: replay of timeouts, aborts and failures", () => {
  it("R83, R65: a call that timed out on the injected clock replays with its timed-out result", async () => {
    const { clock, advance, timers } = manualClock();
    const never = tool("slow", () => new Promise(() => {}), { timeoutMs: 300 });
    const quick = tool("quick", async () => "ok");
    const result = await recorded(async (durable, sink) => {
      const run = runAgentLoop([user("go")], { messages: [], tools: [never, quick] }, baseConfig(), sink, undefined, scriptedStreamFn([{ content: [toolCall("slow", {}, "a"), toolCall("quick", {}, "b")] }, { content: [text("done")] }]), { clock, durable });
      while (timers.length === 0) await ticks();
      advance(300);
      return run;
    });
    expect(result.delivered.some((e) => e.includes("Tool slow timed out after 300 ms"))).toBe(true);
    expect(result.replayed).toEqual(result.delivered);
  });

  it("R83, R41: a response of 150 blocks (updates whose content is copied when first read) replays byte-identical", async () => {
    const blocks = Array.from({ length: 150 }, (_, i) => text(`block ${i}`));
    const result = await recorded((durable, sink) => runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig(), sink, undefined, scriptedStreamFn([{ content: blocks }]), { durable }));
    const updates = result.delivered.filter((e) => e.startsWith('{"type":"message_update"'));
    expect(updates.length).toBeGreaterThanOrEqual(450);
    expect(JSON.parse(updates.at(-1)!).message.content).toHaveLength(150);
    expect(result.replayed).toEqual(result.delivered);
  });

  it("R83, R29: a run aborted through its signal while a tool runs replays to the same events", async () => {
    const controller = new AbortController();
    const waits = tool("waits", (signal) => new Promise((resolve) => signal?.addEventListener("abort", () => resolve("stopped"), { once: true })));
    const result = await recorded((durable, sink) =>
      runAgentLoop([user("go")], { messages: [], tools: [waits] }, baseConfig(), (event) => {
        sink(event);
        if (event.type === "tool_execution_start") setTimeout(() => controller.abort(), 0);
      }, controller.signal, scriptedStreamFn([{ content: [toolCall("waits", {}, "w")] }, { content: [text("never")] }]), { durable }),
    );
    expect(result.records.filter((r) => (r as { k: string }).k === "input")).toEqual([{ k: "input", input: "abort" }]);
    expect(result.delivered.at(-1)).toContain('"reason":"aborted"');
    expect(result.replayed).toEqual(result.delivered);
  });

  it("R83, R67: an abort whose grace ran out (a tool that ignores its signal is abandoned) replays to the same events", async () => {
    const { clock, advance, timers } = manualClock();
    const controller = new AbortController();
    const stubborn = tool("stubborn", () => new Promise(() => {}));
    let started = false;
    const result = await recorded(async (durable, sink) => {
      const run = runAgentLoop([user("go")], { messages: [], tools: [stubborn] }, baseConfig({ abortGraceMs: 50 }), sink, controller.signal, scriptedStreamFn([{ content: [toolCall("stubborn", {}, "s")] }, { content: [text("never")] }]), { clock, durable });
      while (!started) await ticks();
      controller.abort();
      while (timers.length === 0) await ticks();
      advance(50);
      return run;
    }, (event) => event.type === "tool_execution_start" && (started = true));
    expect(result.records.filter((r) => (r as { k: string }).k === "input")).toEqual([{ k: "input", input: "abort" }, { k: "input", input: "grace", at: 1050 }]);
    expect(result.delivered.some((e) => e.includes("did not stop within 50 ms"))).toBe(true);
    expect(result.replayed).toEqual(result.delivered);
  });

  it("R83, R56: a hook that throws is journaled as a serialized error and replays to the same failure", async () => {
    const result = await recorded((durable, sink) =>
      runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig({ transformContext: async () => { throw new TypeError("hook broke"); } }), sink, undefined, scriptedStreamFn([{ content: [text("x")] }]), { durable }),
    );
    const failed = result.records.find((r) => (r as { k: string; job?: string }).job === "transformContext");
    expect(failed).toMatchObject({ reply: { ok: false, error: { kind: "error", name: "TypeError", message: "hook broke" } } });
    expect(result.delivered.some((e) => e.includes("hook broke"))).toBe(true);
    expect(result.replayed).toEqual(result.delivered);
  });

  it("R83: a journal whose step inputs no longer match the run is refused with JournalDivergedError", async () => {
    const result = await recorded((durable, sink) => runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig(), sink, undefined, scriptedStreamFn([{ content: [text("x")] }]), { durable }));
    const tampered = result.records.map((r) => ((r as { k: string; job?: string }).job === "streamResponse" ? { ...(r as object), digest: "00000000" } : r));
    await expect(replayRun(tampered)).rejects.toBeInstanceOf(JournalDivergedError);
  });
});

describe("R80: a store that fails", () => {
  it("R80: a store whose append throws mid-run rejects the run with that error (no crash, the lock released); one that fails at once rejects at the start", async () => {
    const store = memoryRunStore();
    const failing = (after: number) => ({
      ...store,
      openSession: (id: string, options?: { create?: boolean }) => {
        const writer = store.openSession(id, options);
        let appends = 0;
        return { ...writer, append: (record: never) => (++appends > after ? (() => { throw new Error("disk full"); })() : writer.append(record)) };
      },
    });
    const run = (durable: { store: never; sessionId: string }) =>
      runAgentLoop([user("go")], { messages: [], tools: [tool("t", async () => "ok")] }, baseConfig(), () => {}, undefined, scriptedStreamFn([{ content: [toolCall("t", {}, "a")] }, { content: [text("done")] }]), { durable });
    await expect(run({ store: failing(3) as never, sessionId: "a" })).rejects.toThrow("disk full");
    expect(() => store.openSession("a").release()).not.toThrow();
    await expect(run({ store: failing(0) as never, sessionId: "b" })).rejects.toThrow("disk full");
    expect(() => store.openSession("b").release()).not.toThrow();
  });
});

describe("R83, R67: an abandoned stream", () => {
  it("R83, R67: a stream function that ignores the abort is abandoned at the grace; the replay closes its message the same way", async () => {
    const { clock, advance, timers } = manualClock();
    const controller = new AbortController();
    // Starts a response, then never ends it.
    const hangingStream = (() => {
      const stream = new PushAssistantStream();
      const partial = { role: "assistant", content: [{ type: "text", text: "Hel" }], api: "x", provider: "x", model: "x", usage: emptyUsage(), stopReason: "stop", timestamp: 5 } as const;
      stream.push({ type: "start", partial: partial as never });
      stream.push({ type: "text_start", contentIndex: 0, partial: partial as never });
      return stream;
    }) as never;
    let started = false;
    const result = await recorded(async (durable, sink) => {
      const run = runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig({ abortGraceMs: 20 }), sink, controller.signal, hangingStream, { clock, durable });
      while (!started) await ticks();
      controller.abort();
      while (timers.length === 0) await ticks();
      advance(20);
      return run;
    }, (event) => event.type === "message_update" && (started = true));
    expect(result.delivered.filter((e) => e.includes('"type":"message_end"') && e.includes('"stopReason":"aborted"')).length).toBeGreaterThan(0);
    expect(result.replayed).toEqual(result.delivered);
  });
});

describe("R80: bad durable options", () => {
  it("R80: a durable option without a store or a session id is an AgentInputError naming the field", async () => {
    const { Agent, AgentInputError } = await import("../../src/index.js");
    const run = (durable: unknown) => runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig(), () => {}, undefined, scriptedStreamFn([{ content: [text("x")] }]), { durable: durable as never });
    await expect(run({ store: {}, sessionId: "s" })).rejects.toMatchObject({ name: "AgentInputError", field: "durable.store" });
    await expect(run({ store: memoryRunStore(), sessionId: "" })).rejects.toMatchObject({ name: "AgentInputError", field: "durable.sessionId" });
    expect(() => new Agent({ streamFn: scriptedStreamFn([]), durable: "x" as never })).toThrow(AgentInputError);
  });
});
