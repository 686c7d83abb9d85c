import type { ActorSystem } from "xstate";
import type { RunDeps } from "./run-deps.js";

/**
 * Per-actor-system runtime objects. Machines are provided once (a provided machine re-resolves
 * every transition on first use, so providing per run costs more than the run), and each
 * implementation finds what its actor system was started with through the `system` XState passes
 * to every action and actor. Weak keys: a finished system's objects go with its actors.
 */
export function systemRegistry<T>(what: string) {
  const bySystem = new WeakMap<ActorSystem<any>, T>();
  return {
    bind(system: ActorSystem<any>, value: T): void {
      bySystem.set(system, value);
    },
    of(system: ActorSystem<any>): T {
      const value = bySystem.get(system);
      if (value === undefined) throw new Error(`no ${what} bound to this actor system`);
      return value;
    },
  };
}

/** A run's dependencies (its config's functions, sink, signal, tools). */
const runDeps = systemRegistry<RunDeps>("agent loop: run dependencies");

export const bindDeps = runDeps.bind;
export const depsOf = runDeps.of;
