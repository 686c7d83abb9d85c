/**
 * Model-based tests of the tool-call machine: every simple path to `settled` of each input variant
 * (see tool-call-model.ts) is played by the REAL runtime with one model-issued call, whose actor
 * (`tool:0`) must go through exactly the path's states, in a run with a well-formed event sequence.
 * Coverage is measured from the runtime (`@xstate.microstep` of every tool-call actor).
 */
import { describe, expect, it } from "vitest";
import { eventProblems } from "../property/invariants.js";
import { Coverage, liveActorProblems, machineStates, machineTransitions, runLoop } from "./harness.js";
import { describeToolPath, describeVariant, realizeTool, toolPaths, toolVariants } from "./tool-call-model.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";

const coverage = new Coverage();
let pathCount = 0;

describe("tool-call machine: model-based", () => {
  for (const variant of toolVariants) {
    it(`every path of the model is followed by the runtime (${describeVariant(variant)})`, async () => {
      const paths = toolPaths(variant);
      expect(paths.length).toBeGreaterThan(0);
      pathCount += paths.length;
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
      expect({ failing: problems.length, first: problems.slice(0, 5) }).toEqual({ failing: 0, first: [] });
    });
  }

  it("the executed runs took every state and every transition of the tool-call machine", () => {
    const missing = coverage.missing("toolCall");
    const states = machineStates(toolCallMachine).size;
    const transitions = machineTransitions(toolCallMachine).size;
    console.log(
      `tool-call machine: ${pathCount} paths executed; states ${states - missing.states.length}/${states}, ` +
        `transitions ${transitions - missing.transitions.length}/${transitions} taken by the runtime`,
    );
    expect(missing).toEqual({ states: [], transitions: [] });
  });
});
