import type { ActorSystem } from "xstate";
import type { RunDeps } from "./run-deps.js";

/**
 * Per-run dependencies keyed by the run's actor system. Machines are provided once (a provided
 * machine re-resolves every transition on first use, so providing per run costs more than the
 * run), and each implementation finds its run's functions through the `system` XState passes to
 * every action and actor. Weak keys: a finished run's dependencies go with its actors.
 */
const bySystem = new WeakMap<ActorSystem<any>, RunDeps>();

export function bindDeps(system: ActorSystem<any>, deps: RunDeps): void {
  bySystem.set(system, deps);
}

export function depsOf(system: ActorSystem<any>): RunDeps {
  const deps = bySystem.get(system);
  if (!deps) throw new Error("agent loop: no run dependencies bound to this actor system");
  return deps;
}
