/**
 * Property suite of streaming mode (SPEC R70–R73), on the injected clock: random responses whose
 * calls complete at random times while the response streams (the scripted model's pauses), random
 * tool durations and failures, unsafe calls, a random concurrency limit, and responses that end
 * well, fail (`error`), are cut off (`length`) or are aborted mid-stream. Invariants:
 * - one `tool_execution_end` per started call, calls started in source order, tool-result
 *   messages only for responses that ended well, in source order (`eventProblems` in streaming mode);
 * - never an unsafe call's execution overlapping another call's, never more than
 *   `maxConcurrentTools` executing at once.
 *
 * Runs: STREAMING_FUZZ_RUNS (default 120, about 6 s). Seed: FUZZ_SEED, else random; printed either way.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pause, runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentMessage, type AgentTool, type ScriptedBlock, type ScriptedResponse } from "../../src/index.js";
import { manualClock, ticks } from "../support/manual-clock.js";
import { eventProblems } from "./invariants.js";

const RUNS = Number(process.env.STREAMING_FUZZ_RUNS ?? 120);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const STEP_MS = 50;

interface CallSpec {
  safe: boolean;
  /** Execution time on the clock. */
  toolMs: number;
  fails: boolean;
  /** Stream time before this call's toolcall_end. */
  pauseMs: number;
}
interface ResponseSpec {
  calls: CallSpec[];
  tailMs: number;
  ending: "toolUse" | "error" | "length";
}
interface Scenario {
  responses: ResponseSpec[];
  maxConcurrentTools: number;
  /** Abort the run at this time on the clock. */
  abortAtMs: number | null;
}

const ms = fc.integer({ min: 0, max: 8 }).map((n) => n * STEP_MS);
const callArb: fc.Arbitrary<CallSpec> = fc.record({ safe: fc.boolean(), toolMs: ms, fails: fc.integer({ min: 0, max: 9 }).map((n) => n < 2), pauseMs: ms });
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  responses: fc.array(
    fc.record({ calls: fc.array(callArb, { minLength: 1, maxLength: 5 }), tailMs: ms, ending: fc.constantFrom("toolUse" as const, "toolUse" as const, "error" as const, "length" as const) }),
    { minLength: 1, maxLength: 3 },
  ),
  maxConcurrentTools: fc.integer({ min: 1, max: 4 }),
  abortAtMs: fc.option(fc.integer({ min: 0, max: 30 }).map((n) => n * STEP_MS), { freq: 3 }),
});

interface Execution {
  id: string;
  safe: boolean;
  start: number;
  end: number | null;
}

async function play(scenario: Scenario) {
  const clock = manualClock(0);
  const executions: Execution[] = [];
  const specs = new Map<string, CallSpec>();
  const script: ScriptedResponse[] = scenario.responses.map((response, r) => {
    const content: ScriptedBlock[] = [text("Working on it.")];
    response.calls.forEach((call, c) => {
      const id = `r${r}c${c}`;
      specs.set(id, call);
      if (call.pauseMs > 0) content.push(pause(call.pauseMs));
      content.push(toolCall(call.safe ? "safe" : "unsafe", { id }, id));
    });
    if (response.tailMs > 0) content.push(pause(response.tailMs));
    content.push(text("done"));
    if (response.ending === "error") return { content, failure: "connection" as const, afterContent: true };
    return { content, ...(response.ending === "length" ? { stopReason: "length" as const } : {}) };
  });
  script.push({ content: [text("The end.")] });
  const execute: AgentTool["execute"] = (id, _args, signal) =>
    new Promise((resolve, reject) => {
      const spec = specs.get(id)!;
      const execution: Execution = { id, safe: spec.safe, start: clock.now(), end: null };
      executions.push(execution);
      const finish = (outcome: () => void) => {
        if (execution.end !== null) return;
        execution.end = clock.now();
        outcome();
      };
      const cancel = clock.clock.setTimer(spec.toolMs, () =>
        finish(() => (spec.fails ? reject(new Error("failed")) : resolve({ content: [{ type: "text", text: "ok" }], details: {} }))),
      );
      signal?.addEventListener("abort", () => finish(() => (cancel(), reject(new Error("aborted")))), { once: true });
    });
  const tool = (name: string, safe: boolean): AgentTool => ({
    name,
    label: name,
    description: name,
    parameters: { type: "object", properties: { id: { type: "string" } } },
    execute,
    ...(safe ? { isConcurrencySafe: () => true } : {}),
    // R73 on the unsafe tool: its failure cancels the rest of the batch.
    ...(!safe ? { cancelSiblingsOnError: true } : {}),
  });
  const controller = new AbortController();
  const events: AgentEvent[] = [];
  let done = false;
  let messages: AgentMessage[] = [];
  const run = runAgentLoop(
    [{ role: "user", content: "go", timestamp: 0 }],
    { messages: [], tools: [tool("safe", true), tool("unsafe", false)] },
    { model: { ...(await import("../../src/index.js")).scriptedModel }, convertToLlm: (m) => m as never, streamingToolExecution: true, maxConcurrentTools: scenario.maxConcurrentTools },
    (event) => void events.push(event),
    controller.signal,
    scriptedStreamFn(script, { clock: clock.clock }),
    { clock: clock.clock },
  ).then((output) => ((messages = output), (done = true)));
  for (let guard = 0; !done && guard < 2_000; guard++) {
    await ticks(2);
    if (done) break;
    clock.advance(STEP_MS);
    if (scenario.abortAtMs !== null && clock.now() >= scenario.abortAtMs) controller.abort();
  }
  await run;
  return { events, messages, executions, maxConcurrentTools: scenario.maxConcurrentTools };
}

function problemsOf(run: Awaited<ReturnType<typeof play>>): string[] {
  const problems = eventProblems(run.events, run.messages, { streamingTools: true });
  const endOf = (execution: Execution) => execution.end ?? Infinity;
  const overlaps = (a: Execution, b: Execution) => a.start < endOf(b) && b.start < endOf(a);
  for (const a of run.executions) {
    if (a.end === null) problems.push(`${a.id} never finished executing`);
    if (a.safe) continue;
    for (const b of run.executions) if (b !== a && overlaps(a, b)) problems.push(`R70: unsafe ${a.id} overlaps ${b.id}`);
  }
  for (const a of run.executions) {
    const concurrent = run.executions.filter((b) => b.start <= a.start && a.start < endOf(b)).length;
    if (concurrent > run.maxConcurrentTools) problems.push(`R70: ${concurrent} calls executing at ${a.start} (limit ${run.maxConcurrentTools})`);
  }
  return problems;
}

describe("R70–R73: streaming mode, random scenarios on the injected clock", () => {
  it(`R70–R73: invariants hold over ${RUNS} random scenarios (seed ${SEED})`, async () => {
    console.log(`streaming property suite: ${RUNS} runs, seed ${SEED}`);
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const run = await play(scenario);
        const problems = problemsOf(run);
        if (problems.length > 0 && process.env.STREAMING_FUZZ_DEBUG) console.log(JSON.stringify(scenario), problems, run.events.filter((e) => e.type !== "message_update").map((e) => e.type + ((e as { toolCallId?: string }).toolCallId ?? "")));
        expect(problems).toEqual([]);
      }),
      { numRuns: RUNS, seed: SEED, ...(process.env.STREAMING_FUZZ_EXAMPLE ? { examples: [[JSON.parse(process.env.STREAMING_FUZZ_EXAMPLE)]] } : {}) },
    );
  }, 120_000);
});
