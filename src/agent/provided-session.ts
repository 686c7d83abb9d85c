import { fromPromise, type AnyActorRef } from "xstate";
import { sessionMachine } from "../../machines/session.machine.js";
import { hostedRunMachine } from "../api/start-run.js";
import type { SessionRuntime } from "./session-runtime.js";

/** Each session actor's runtime (weak: it goes with its actor). */
const sessions = new WeakMap<AnyActorRef, SessionRuntime>();

export function bindSession(session: AnyActorRef, runtime: SessionRuntime): void {
  sessions.set(session, runtime);
}

function sessionOf(ref: AnyActorRef): SessionRuntime {
  const runtime = sessions.get(ref);
  if (!runtime) throw new Error("agent: no session runtime bound to this actor");
  return runtime;
}

let provided: typeof sessionMachine | undefined;

/**
 * The session machine with the default runtime's implementations, provided once per process
 * (providing is costly). Each session's runtime is found through its own actor, so any number of
 * sessions share one actor system.
 */
export function providedSessionMachine(): typeof sessionMachine {
  return (provided ??= sessionMachine.provide({
    actors: {
      run: hostedRunMachine(),
      settleEvents: fromPromise<void>(({ self }) => sessionOf(self._parent!).settleEvents()),
      emitFailure: fromPromise<void>(({ self }) => sessionOf(self._parent!).emitFailure()),
    },
    actions: {
      abortRun: ({ self }) => sessionOf(self).abortRun(),
      endAfterDefect: ({ self }, params) => sessionOf(self).endAfterDefect(params.error),
      finishRun: ({ self }) => sessionOf(self).finishRun(),
    },
  }));
}
