/**
 * Model-based tests of the run machine: `xstate/graph` walks the machine with synthetic effect
 * replies and tool-call outcomes (see run-model.ts); every path is then played by the REAL runtime
 * (`runAgentLoop` with a scripted model, hooks and tools chosen to follow it), which must visit the
 * same states and emit a well-formed event sequence. Coverage is measured from the runtime: the
 * transitions the real actors took (`@xstate.microstep` inspection events) against every edge of
 * the machine; a state or transition no executed run takes fails the suite.
 */
import { describe, expect, it } from "vitest";
import { eventProblems } from "../property/invariants.js";
import { Coverage, liveActorProblems, machineStates, machineTransitions, runLoop } from "./harness.js";
import { describePath, eventKind, realize, runPaths, runVariants } from "./run-model.js";
import { runMachine } from "../../machines/run.machine.js";

const coverage = new Coverage();
let pathCount = 0;

describe("run machine: model-based", () => {
  for (const variant of runVariants) {
    it(`every path of the model is followed by the runtime (${variant.name})`, async () => {
      const paths = runPaths(variant);
      pathCount += paths.length;
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
      expect({ failing: problems.length, first: problems.slice(0, 5) }).toEqual({ failing: 0, first: [] });
    });
  }

  it("the executed runs took every state and every transition of the run machine", () => {
    const missing = coverage.missing("run");
    const states = machineStates(runMachine).size;
    const transitions = machineTransitions(runMachine).size;
    console.log(
      `run machine: ${pathCount} paths executed; states ${states - missing.states.length}/${states}, ` +
        `transitions ${transitions - missing.transitions.length}/${transitions} taken by the runtime`,
    );
    expect(missing).toEqual({ states: [], transitions: [] });
  });
});
