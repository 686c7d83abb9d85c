/**
 * The machines' implementations. The run machine and `runToolCall`'s host need only their step
 * worker; the worker finds its run's runtime in `source` by the run's key, so a machine is provided
 * once per way of hosting runs, not once per run (providing re-resolves every transition on first use).
 */
import type { MachineImplementationsFrom } from "xstate";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallHostMachine } from "../../machines/tool-call-host.machine.js";
import { createStepsWorker, type RuntimeSource } from "./steps-worker.js";

export function createRunImplementations(source: RuntimeSource): MachineImplementationsFrom<typeof runMachine> {
  return { actors: { steps: createStepsWorker(source) } };
}

export function createToolCallHostImplementations(source: RuntimeSource): MachineImplementationsFrom<typeof toolCallHostMachine> {
  return { actors: { steps: createStepsWorker(source) } };
}

export function provideRunMachine(source: RuntimeSource): typeof runMachine {
  return runMachine.provide(createRunImplementations(source));
}

export function provideToolCallHost(source: RuntimeSource): typeof toolCallHostMachine {
  return toolCallHostMachine.provide(createToolCallHostImplementations(source));
}
