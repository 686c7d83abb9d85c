/**
 * Model-based tests of the run machine: `xstate/graph` walks the machine with synthetic step
 * replies and tool-call outcomes (see run-model.ts); every path is then played by the REAL runtime
 * (`runAgentLoop` with a scripted model, hooks and tools chosen to follow it), which must visit the
 * same states and emit a well-formed event sequence. The root transitions whose events no step
 * sends (`run.abort`, `step.reissue`) are taken by the directed runs (directed-runs.ts). Coverage
 * is measured from the runtime: the transitions the real actors took (`@xstate.microstep`
 * inspection events) against every edge of the machine; a state or transition no executed run
 * takes fails the suite.
 *
 * Each variant is played once (`memo`), by whichever test asks first: the coverage test asks for
 * every variant itself, so it holds alone (`vitest -t coverage`) and in any order.
 */
import { describe, expect, it } from "vitest";
import { eventProblems } from "../property/invariants.js";
import { Coverage, liveActorProblems, memo, runLoop } from "./harness.js";
import { describePath, eventKind, realize, runPaths, runVariants, type RunVariant } from "./run-model.js";
import { directedRuns, playDirected } from "./directed-runs.js";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";

interface Played {
  paths: number;
  problems: string[];
  coverage: Coverage;
}

const playVariant = memo(async (variant: RunVariant): Promise<Played> => {
  const coverage = new Coverage([runMachine, toolCallMachine]);
  const paths = runPaths(variant);
  const problems: string[] = [];
  for (const path of paths) {
    const run = await runLoop({ ...realize(variant, path), coverage });
    const found: string[] = [];
    path.steps.forEach((step, i) => {
      const real = run.trace.run[i];
      if (!real) return void found.push(`the run ended before step ${i}`);
      if (eventKind({ type: real.event }) !== eventKind(step.event) || JSON.stringify(real.value) !== JSON.stringify(step.state.value)) {
        found.push(`step ${i}: model ${step.event.type} → ${JSON.stringify(step.state.value)}, runtime ${real.event} → ${JSON.stringify(real.value)}`);
      }
    });
    found.push(...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor));
    if (found.length > 0) problems.push(`${describePath(path)}\n    ${found.slice(0, 4).join("\n    ")}`);
  }
  return { paths: paths.length, problems, coverage };
});

describe("run machine: model-based", () => {
  for (const variant of runVariants) {
    it(`every path of the model is followed by the runtime (${variant.name})`, async () => {
      const { paths, problems } = await playVariant(variant);
      expect(paths).toBeGreaterThan(0);
      expect({ failing: problems.length, first: problems.slice(0, 5) }).toEqual({ failing: 0, first: [] });
    });
  }

  for (const name of Object.keys(directedRuns)) {
    it(`directed run: ${name}`, async () => {
      expect((await playDirected(name)).problems).toEqual([]);
    });
  }

  it("coverage: the executed runs took every state and every transition of the run machine", async () => {
    const coverage = new Coverage([runMachine]);
    let paths = 0;
    for (const variant of runVariants) {
      const played = await playVariant(variant);
      coverage.merge(played.coverage);
      paths += played.paths;
    }
    for (const name of Object.keys(directedRuns)) coverage.merge((await playDirected(name)).coverage);
    const { missing, summary } = coverage.report(runMachine);
    console.log(`run machine: ${paths} paths and ${Object.keys(directedRuns).length} directed runs executed; ${summary}`);
    expect(missing).toEqual({ states: [], transitions: [] });
  }, 300_000);
});
