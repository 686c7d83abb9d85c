/**
 * The session machine as the Agent runs it: provided once per process (providing is costly), with
 * implementations built from one `SessionHosts`, where each Agent's session runtime is served
 * under the key its session's context carries (`context.host`).
 */
import type { MachineImplementationsFrom, Snapshot } from "xstate";
import { sessionMachine, type SessionContext } from "../../machines/session.machine.js";
import type { runMachine } from "../../machines/run.machine.js";
import { hostedRuns } from "../api/start-run.js";
import { rehostedRun, type RunHosts } from "../api/run-hosts.js";
import { createEmitFailureActor, createSettleEventsActor, SessionHosts } from "./session-actors.js";

/** The session machine's implementations: each finds its session's runtime in `sessions` by `context.host`. */
export function createSessionImplementations(sessions: SessionHosts, run: typeof runMachine): MachineImplementationsFrom<typeof sessionMachine> {
  return {
    actors: {
      run,
      settleEvents: createSettleEventsActor(sessions),
      emitFailure: createEmitFailureActor(sessions),
    },
    guards: {
      listenersSettled: ({ context }) => sessions.get(context.host).settleEvents() === undefined,
    },
    actions: {
      abortRun: ({ context }) => sessions.get(context.host).abortRun(),
      endAfterDefect: ({ context }, params) => sessions.get(context.host).endAfterDefect(params.error),
      finishRun: ({ context }) => sessions.get(context.host).finishRun(),
    },
  };
}

/** The provided session machine, the session runtimes its implementations serve, and its runs' runtimes. */
export interface SessionHosting {
  machine: typeof sessionMachine;
  sessions: SessionHosts;
  runs: RunHosts;
  /** An idle snapshot of the machine (`idleSnapshot`'s template). */
  idle: Snapshot<unknown>;
}

let shared: SessionHosting | undefined;

/** Snapshots made by `idleSnapshot`, which the provided machine takes as they are. */
const resolved = new WeakSet<object>();

/** The process's session hosting: one provided machine, so any number of Agents share it. */
export function sessionHosting(): SessionHosting {
  if (!shared) {
    const sessions = new SessionHosts();
    const runs = hostedRuns();
    const machine = sessionMachine.provide(createSessionImplementations(sessions, runs.machine));
    // (XState binds `restoreSnapshot` to each machine as an own property: replacing it keeps the
    // machine's shape, which the run machine's shares.)
    const restore = machine.restoreSnapshot.bind(machine);
    machine.restoreSnapshot = (snapshot, scope) => (resolved.has(snapshot) ? (snapshot as ReturnType<typeof restore>) : restore(snapshot, scope));
    shared = { machine, sessions, runs: runs.hosts, idle: machine.resolveState({ value: "idle", context: {} as SessionContext }) };
  }
  return shared;
}

/**
 * An idle session with `context`, which the provided machine takes as it is (issue 40: waking a
 * parked Agent's session from its input ran the machine's initial step, ~70 % of the wake; XState's
 * own restore walks the whole context in depth, the transcript included). Plain data: the same
 * snapshot as the initial step makes (no children, no history, no actions on entering `idle`).
 */
export function idleSnapshot(context: SessionContext): Snapshot<unknown> {
  const snapshot = { ...sessionHosting().idle, context, children: {}, historyValue: {} };
  resolved.add(snapshot);
  return snapshot;
}

/**
 * R13: a persisted session (of this process or another) served by the runtime keyed `host`: its
 * context and the input of its actors in flight name that key, and its run in flight a new key in
 * `runs` (a snapshot from before keys existed gets them). The snapshot is not changed; its copy
 * shares everything else.
 */
export function rehostedSession(snapshot: Snapshot<unknown>, host: string, runs: RunHosts): Snapshot<unknown> {
  const persisted = snapshot as { context?: object; children?: Record<string, PersistedChild> };
  if (!persisted.context) return snapshot;
  const children: Record<string, PersistedChild> = {};
  for (const [id, child] of Object.entries(persisted.children ?? {})) children[id] = rehostedChild(child, host, runs);
  return { ...persisted, context: { ...persisted.context, host }, children } as unknown as Snapshot<unknown>;
}

interface PersistedChild {
  src?: unknown;
  snapshot?: { input?: unknown };
}

function rehostedChild(child: PersistedChild, host: string, runs: RunHosts): PersistedChild {
  const input = child.snapshot?.input;
  if (child.src === "run") return { ...child, snapshot: rehostedRun(child.snapshot, runs.newKey()) };
  if (child.src === "settleEvents") return { ...child, snapshot: { ...child.snapshot, input: { host } } };
  // (Before keys, its input was the events alone.)
  if (child.src === "emitFailure") return { ...child, snapshot: { ...child.snapshot, input: { host, events: Array.isArray(input) ? input : (input as { events: unknown }).events } } };
  return child;
}
