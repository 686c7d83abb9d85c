import { fromPromise } from "xstate";
import { sessionMachine } from "../../machines/session.machine.js";
import { providedRunMachine } from "../api/start-run.js";
import { sessionOf } from "./session-deps.js";

let provided: typeof sessionMachine | undefined;

/**
 * The session machine with the default runtime's implementations, provided once per process
 * (providing is costly; each Agent's runtime is found through its actor system).
 */
export function providedSessionMachine(): typeof sessionMachine {
  return (provided ??= sessionMachine.provide({
    actors: {
      run: providedRunMachine(),
      settleEvents: fromPromise<void>(({ system }) => sessionOf(system).settleEvents()),
      emitFailure: fromPromise<void>(({ system }) => sessionOf(system).emitFailure()),
    },
    actions: {
      observeRun: ({ system }) => sessionOf(system).observeRun(system.get("run")),
      abortRun: ({ system }) => sessionOf(system).abortRun(),
      endAfterDefect: ({ system }, params) => sessionOf(system).endAfterDefect(params.error),
      finishRun: ({ system }) => sessionOf(system).finishRun(),
    },
  }));
}
