/**
 * Model-based tests of the tool-call machine: every simple path to `settled` of each input variant
 * (see tool-call-model.ts) is played by the REAL runtime with one model-issued call, whose actor
 * (`tool:0`) must go through exactly the path's states, in a run with a well-formed event sequence.
 * `step.reissue` (sent only by a restored worker) is taken by the directed runs (directed-runs.ts).
 * Coverage is measured from the runtime (`@xstate.microstep` of every tool-call actor).
 *
 * Each variant is played once (`memo`), by whichever test asks first: the coverage test asks for
 * every variant itself, so it holds alone (`vitest -t coverage`) and in any order.
 */
import { describe, expect, it } from "vitest";
import { eventProblems } from "../property/invariants.js";
import { Coverage, liveActorProblems, memo, runLoop } from "./harness.js";
import { describeToolPath, describeVariant, realizeTool, toolPaths, toolVariants, type ToolVariant } from "./tool-call-model.js";
import { directedRuns, playDirected } from "./directed-runs.js";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";

interface Played {
  paths: number;
  problems: string[];
  coverage: Coverage;
}

const playVariant = memo(async (variant: ToolVariant): Promise<Played> => {
  const coverage = new Coverage([runMachine, toolCallMachine]);
  const paths = toolPaths(variant);
  const problems: string[] = [];
  for (const path of paths) {
    const run = await runLoop({ ...realizeTool(variant, path), coverage });
    const real = run.trace.toolCalls.find((call) => call.id === "tool:0")?.steps ?? [];
    const model = path.steps.map((step) => `${step.event.type}→${JSON.stringify(step.state.value)}`);
    const runtime = real.map((step) => `${step.event}→${JSON.stringify(step.value)}`);
    const found = JSON.stringify(model) === JSON.stringify(runtime) ? [] : [`runtime: ${runtime.join(" ")}`];
    found.push(...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor));
    if (found.length > 0) problems.push(`${describeToolPath(path)}\n    ${found.slice(0, 4).join("\n    ")}`);
  }
  return { paths: paths.length, problems, coverage };
});

describe("tool-call machine: model-based", () => {
  for (const variant of toolVariants) {
    it(`every path of the model is followed by the runtime (${describeVariant(variant)})`, async () => {
      const { paths, problems } = await playVariant(variant);
      expect(paths).toBeGreaterThan(0);
      expect({ failing: problems.length, first: problems.slice(0, 5) }).toEqual({ failing: 0, first: [] });
    });
  }

  it("coverage: the executed runs took every state and every transition of the tool-call machine", async () => {
    const coverage = new Coverage([toolCallMachine]);
    let paths = 0;
    for (const variant of toolVariants) {
      const played = await playVariant(variant);
      coverage.merge(played.coverage);
      paths += played.paths;
    }
    const directed = Object.keys(directedRuns);
    for (const name of directed) {
      const played = await playDirected(name);
      expect(played.problems, name).toEqual([]);
      coverage.merge(played.coverage);
    }
    const { missing, summary } = coverage.report(toolCallMachine);
    console.log(`tool-call machine: ${paths} paths and ${directed.length} directed runs executed; ${summary}`);
    expect(missing).toEqual({ states: [], transitions: [] });
  }, 120_000);
});
