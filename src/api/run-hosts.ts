/**
 * Where a run actor's runtime comes from. A host (the `agentLoop` entry points, an Agent's session,
 * `runToolCall`) registers itself, or the run actor it creates, with a factory; the run's step
 * worker resolves the runtime once, when it starts, and releases it when it stops.
 */
import type { AnyActorRef } from "xstate";
import type { RunRuntime } from "../actors/run-runtime.js";

type RuntimeFactory = (owner: AnyActorRef) => RunRuntime;

const runtimes = new WeakMap<AnyActorRef, RunRuntime>();
const hosts = new WeakMap<AnyActorRef, RuntimeFactory>();

/** `host` creates the runtime of the run actor `host` itself is, or of any run invoked by `host`. */
export function registerRunHost(host: AnyActorRef, factory: RuntimeFactory): void {
  hosts.set(host, factory);
}

export function bindRuntime(owner: AnyActorRef, runtime: RunRuntime): void {
  runtimes.set(owner, runtime);
}

/** The runtime of `owner`, created by its host on first use; undefined when no host knows it. */
export function hostedRuntime(owner: AnyActorRef): RunRuntime | undefined {
  const existing = runtimes.get(owner);
  if (existing) return existing;
  const factory = hosts.get(owner) ?? (owner._parent ? hosts.get(owner._parent) : undefined);
  if (!factory) return undefined;
  const runtime = factory(owner);
  runtimes.set(owner, runtime);
  return runtime;
}

/** Forgets `owner`'s runtime: its step worker stopped (the run ended or was stopped). */
export function releaseRuntime(owner: AnyActorRef): void {
  runtimes.delete(owner);
}

export function requireRuntime(owner: AnyActorRef): RunRuntime {
  const runtime = hostedRuntime(owner);
  if (!runtime) throw new Error("agent loop: this run actor has no host (create it with createAgentRunLogic, agentLoop or an Agent)");
  return runtime;
}
