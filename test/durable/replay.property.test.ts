/**
 * R83: random property-suite runs (test/property/scenario.ts: retries, output-limit recovery,
 * compaction, parallel and sequential batches, hooks that block or throw, aborts, async sinks;
 * every other run with tools that start while the model streams, R70; every third with a tool
 * timeout, R65)
 * recorded on an in-memory store and replayed offline to the byte-identical event sequence.
 *
 * The scenario runner calls `runAgentLoop` itself; the mock below adds the durable option to that
 * call and records each event's JSON at the moment it is delivered (the bytes a consumer saw).
 * REPLAY_RUNS (default 200; `npm run test:replay` sets 1000); REPLAY_SEED, else random, printed.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type * as Index from "../../src/index.js";
import { replayRun } from "../../src/durable/replay.js";
import { memoryRunStore } from "../support/memory-run-store.js";

const recording = vi.hoisted(() => ({ store: undefined as unknown, sessionId: "", delivered: [] as string[], streaming: false, timeouts: false }));

vi.mock("../../src/index.js", async (importOriginal) => {
  const real = await importOriginal<typeof Index>();
  const runAgentLoop: typeof real.runAgentLoop = (prompts, context, config, emit, signal, streamFn, options) => {
    const tap = <E,>(sink: ((event: E) => void | Promise<void>) | undefined) =>
      sink && ((event: E) => (recording.delivered.push(JSON.stringify(event)), sink(event)));
    const durable = { store: recording.store as Index.RunOptions extends { durable?: infer D } ? D extends { store: infer S } ? S : never : never, sessionId: recording.sessionId };
    // Every other run in streaming mode (R70): its mid-stream starts are journaled sends.
    const streaming = recording.streaming ? { streamingToolExecution: true } : {};
    // Every third run with a tool timeout (R65): on the scenario's virtual clock it fires before a
    // tool that takes real time settles, so those calls time out and the quick ones do not.
    const timeouts = recording.timeouts ? { toolTimeoutMs: 1_000 } : {};
    return real.runAgentLoop(prompts, context, { ...config, ...streaming, ...timeouts, onRuntimeEvent: tap(config.onRuntimeEvent) }, tap(emit)!, signal, streamFn, { ...options, durable });
  };
  return { ...real, runAgentLoop };
});

const { playScenario, scenarioArb } = await import("../property/scenario.js");

const RUNS = Number(process.env.REPLAY_RUNS ?? 200);
// CI fixes FUZZ_SEED for the property suites; this one follows it unless REPLAY_SEED is given.
const fixed = process.env.REPLAY_SEED ?? process.env.FUZZ_SEED;
const SEED = fixed !== undefined ? Number(fixed) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;

describe("R83: deterministic replay", () => {
  it(`R83: ${RUNS} recorded property-suite runs replay offline to byte-identical events (seed ${SEED})`, { timeout: 600_000 }, async () => {
    console.log(`replay property: ${RUNS} runs, REPLAY_SEED=${SEED}`);
    const store = memoryRunStore();
    let n = 0;
    let recordsTotal = 0;
    let timedOut = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        recording.store = store;
        recording.sessionId = `run-${n++}`;
        recording.delivered = [];
        recording.streaming = n % 2 === 0;
        recording.timeouts = n % 3 === 0;
        const run = await playScenario(scenario);
        expect(run.rejection).toBeUndefined();
        const records = store.readSession(recording.sessionId).records();
        recordsTotal += records.length;
        timedOut += (run.messages ?? []).filter((message) => message.role === "toolResult" && JSON.stringify(message.content).includes("timed out after")).length;
        const [replayed] = await replayRun(records);
        expect(replayed.events.map((event) => JSON.stringify(event))).toEqual(recording.delivered);
        expect(replayed.messages).toEqual(JSON.parse(JSON.stringify(run.messages)));
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(`replay property: ${n} runs replayed, ${recordsTotal} records, ${timedOut} tool timeouts`);
  });
});
