import type { ActorSystem } from "xstate";
import type { SessionRuntime } from "./session-runtime.js";

/**
 * Each session's runtime, keyed by the session's actor system, the way run dependencies are
 * (`src/actors/system-deps.ts`): the session machine is provided once per process, and its
 * implementations find their Agent through the `system` XState passes them.
 */
const bySystem = new WeakMap<ActorSystem<any>, SessionRuntime>();

export function bindSession(system: ActorSystem<any>, runtime: SessionRuntime): void {
  bySystem.set(system, runtime);
}

export function sessionOf(system: ActorSystem<any>): SessionRuntime {
  const runtime = bySystem.get(system);
  if (!runtime) throw new Error("agent: no session runtime bound to this actor system");
  return runtime;
}
