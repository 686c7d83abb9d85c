/**
 * The machines' implementations. The run machine and `runToolCall`'s host need only their step
 * worker; the worker finds its run's runtime through `resolve`, so a machine is provided once per
 * way of hosting runs, not once per run (providing re-resolves every transition on first use).
 */
import { runMachine } from "../../machines/run.machine.js";
import { toolCallHostMachine } from "../../machines/tool-call-host.machine.js";
import { createStepsWorker, type RuntimeReleaser, type RuntimeResolver } from "./steps-worker.js";

export function provideRunMachine(resolve: RuntimeResolver, release?: RuntimeReleaser): typeof runMachine {
  return runMachine.provide({ actors: { steps: createStepsWorker(resolve, release) } });
}

export function provideToolCallHost(resolve: RuntimeResolver, release?: RuntimeReleaser): typeof toolCallHostMachine {
  return toolCallHostMachine.provide({ actors: { steps: createStepsWorker(resolve, release) } });
}
