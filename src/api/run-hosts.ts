/**
 * Where a run's runtime comes from. Each provided run machine (and `runToolCall`'s host machine)
 * is given one `RunHosts` in its step worker's implementation (`provideRunMachine(hosts)`). A host
 * (`startRun`, an Agent's session, an embedded run's logic, `runToolCall`) takes a key, gives it to
 * the run in its input (`RunInput.host`: plain data, in the run's context and its worker's
 * snapshot) and serves the run's runtime under it; the run's step worker takes the runtime when it
 * starts and closes the key when it stops, so a finished run leaves nothing here.
 */
import type { RunRuntime } from "../actors/run-runtime.js";
import type { RuntimeSource } from "../actors/steps-worker.js";

/** A runtime, or what makes it when the run's worker starts (a run actor made by XState has no runtime before). */
interface Served {
  runtime: RunRuntime | undefined;
  create: (() => RunRuntime) | undefined;
  onClose: (() => void) | undefined;
}

/** Keys are unique within the process (an embedded run's event channel is found by its key, `agentEvents`). */
let keys = 0;

export class RunHosts implements RuntimeSource {
  private readonly served = new Map<string, Served>();

  /** A key for a new run (its `RunInput.host`). */
  newKey(): string {
    return `run-${++keys}`;
  }

  /** Serves `runtime`, or the runtime `create` makes on first use, under `key`; `onClose` runs when the key is closed. */
  serve(key: string, runtime: RunRuntime | (() => RunRuntime), onClose?: () => void): void {
    this.served.set(key, typeof runtime === "function" ? { runtime: undefined, create: runtime, onClose } : { runtime, create: undefined, onClose });
  }

  /** The runtime served under `key` (the run's worker started). */
  runtimeOf(key: string): RunRuntime {
    const served = this.served.get(key);
    if (!served) throw new Error("agent loop: this run actor has no host (create it with createAgentRunLogic, agentLoop or an Agent)");
    return (served.runtime ??= served.create!());
  }

  /** Whether a runtime is served under `key` (tests: a finished run's key is closed). */
  serves(key: string): boolean {
    return this.served.has(key);
  }

  /** The run's worker stopped (the run ended or was stopped): nothing is kept for it any more. */
  close(key: string): void {
    const served = this.served.get(key);
    this.served.delete(key);
    served?.onClose?.();
  }
}

/**
 * R13: a persisted run (or `runToolCall` host) served under `key` in this process: its context and
 * its step worker's snapshot name that key (a snapshot from before keys existed gets it). The
 * snapshot is not changed; its copy shares everything else.
 */
export function rehostedRun<S>(snapshot: S, key: string): S {
  const persisted = snapshot as { context?: object; children?: Record<string, { snapshot?: object }> };
  if (!persisted.context) return snapshot;
  const steps = persisted.children?.steps;
  const children = steps ? { ...persisted.children, steps: { ...steps, snapshot: { ...steps.snapshot, host: key } } } : persisted.children;
  return { ...persisted, context: { ...persisted.context, host: key }, children } as S;
}
