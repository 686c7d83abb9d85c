import type { AnyActorRef, MachineImplementationsFrom } from "xstate";
import { sessionMachine } from "../../machines/session.machine.js";
import { hostedRunMachine } from "../api/start-run.js";
import type { SessionRuntime } from "./session-runtime.js";
import { createEmitFailureActor, createSettleEventsActor, type SessionResolver } from "./session-actors.js";

/** Each session actor's runtime (weak: it goes with its actor). */
const sessions = new WeakMap<AnyActorRef, SessionRuntime>();

export function bindSession(session: AnyActorRef, runtime: SessionRuntime): void {
  sessions.set(session, runtime);
}

const sessionOf: SessionResolver = (ref) => {
  const runtime = sessions.get(ref);
  if (!runtime) throw new Error("agent: no session runtime bound to this actor");
  return runtime;
};

/** The session machine's implementations; each session's runtime is found through its own actor. */
export function createSessionImplementations(resolve: SessionResolver): MachineImplementationsFrom<typeof sessionMachine> {
  return {
    actors: {
      run: hostedRunMachine(),
      settleEvents: createSettleEventsActor(resolve),
      emitFailure: createEmitFailureActor(resolve),
    },
    actions: {
      abortRun: ({ self }) => resolve(self).abortRun(),
      endAfterDefect: ({ self }, params) => resolve(self).endAfterDefect(params.error),
      finishRun: ({ self }) => resolve(self).finishRun(),
    },
  };
}

let provided: typeof sessionMachine | undefined;

/**
 * The session machine with the default runtime's implementations, provided once per process
 * (providing is costly), so any number of sessions share one actor system.
 */
export function providedSessionMachine(): typeof sessionMachine {
  return (provided ??= sessionMachine.provide(createSessionImplementations(sessionOf)));
}
