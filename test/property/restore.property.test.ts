/**
 * R13 as a property: a random scenario (scenario.ts) persisted at a random macrostep of its run,
 * JSON round-tripped, stopped and restored with freshly built implementations finishes as a sound
 * run. Fresh hooks start their counters again, so the restored run may decide differently from an
 * uninterrupted one (test/restore compares outputs for a scenario with a journaled world); what
 * must hold whatever the point: a well-formed event sequence over both processes (R12: agent_end
 * lists every message of the run), exactly one result per call (R26), no execution run twice by a
 * tool that is not replay-safe (R13), no actor left running, nothing delivered by the stopped first
 * process, and each request sees the transcript so far (R40).
 *
 * A restored run that never finishes (a lost event: see regressions.test.ts) fails its case after
 * CASE_TIMEOUT_MS (fast-check's own guard; a sound case takes a few milliseconds).
 *
 * Runs: RESTORE_RUNS (default 300). Seed: FUZZ_SEED, else random; printed either way.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventProblems, transcriptProblems } from "./invariants.js";
import type { AgentMessage } from "../../src/index.js";
import { playRestoredScenario, scenarioArb, type RestoredScenarioRun } from "./scenario.js";
import { liveActorProblems } from "../model/harness.js";

const RUNS = Number(process.env.RESTORE_RUNS ?? 300);
const CASE_TIMEOUT_MS = 2_000;
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;

function restoreProblems(run: RestoredScenarioRun): string[] {
  const problems: string[] = [];
  if (run.rejection !== undefined) problems.push(`the run rejected: ${String(run.rejection)}`);
  problems.push(...eventProblems(run.events, run.messages));
  // R62, R61 over both processes: the rebuilt transcript is the restored run's final context.
  const finalContext = run.actor ? (run.actor.getSnapshot().context as { messages: AgentMessage[] }).messages : undefined;
  problems.push(...transcriptProblems(run.events, [], finalContext));
  problems.push(...(run.actor ? liveActorProblems(run.actor) : ["no actor"]));
  if (run.strayEvents.length > 0) problems.push(`the stopped first process delivered ${run.strayEvents.map((e) => e.type).join(", ")}`);
  const twice = run.executed.filter((id, i) => run.executed.indexOf(id) !== i);
  if (twice.length > 0) problems.push(`R13: ${twice.join(", ")} executed twice (no tool is replay-safe)`);
  problems.push(...run.hookProblems);
  return problems;
}

describe("agent loop: restore at a random point (R13)", () => {
  it(`every random scenario restored at a random macrostep finishes soundly (${RUNS} runs, seed ${SEED})`, async () => {
    console.log(`restore property: ${RUNS} runs, seed ${SEED} (FUZZ_SEED=${SEED} RESTORE_RUNS=${RUNS} to replay)`);
    let restored = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.nat({ max: 30 }), async (scenario, restoreAt) => {
        const run = await playRestoredScenario(scenario, restoreAt);
        if (run.restoredIn !== null) restored++;
        const problems = restoreProblems(run);
        if (problems.length > 0) throw new Error(`restored in ${run.restoredIn}:\n${problems.slice(0, 6).join("\n")}`);
      }),
      // A hanging case is not shrunk (each attempt would wait out the guard): it is reported as found.
      { numRuns: RUNS, seed: SEED, timeout: CASE_TIMEOUT_MS, endOnFailure: true },
    );
    console.log(`restore property: ${restored} of ${RUNS} runs were restored mid-run`);
    // The property is about restores: most scenarios must have been restored before they ended.
    expect(restored).toBeGreaterThan(RUNS / 4);
  }, 30_000 + RUNS * 50);
});
