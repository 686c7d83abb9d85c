/** The session machine's actors, one factory each (their placeholders are typed by these). */
import { fromPromise, type AnyActorRef } from "xstate";
import type { SessionRuntime } from "./session-runtime.js";
import type { AgentEvent } from "../types.js";

export type SessionResolver = (session: AnyActorRef) => SessionRuntime;

/**
 * Resolves once the run's listeners have handled every event it produced (R54). Done from the
 * start when none is left to deliver (an Agent without listeners), without the promise's round
 * trip (an abort controller, a microtask and an event per run).
 */
export const createSettleEventsActor = (resolve: SessionResolver) => {
  const waiting = fromPromise<void>(({ self }) => resolve(self._parent!).settleEvents() ?? Promise.resolve());
  const logic: typeof waiting = {
    ...waiting,
    getInitialSnapshot: (scope, input) => {
      if (resolve(scope.self._parent!).settleEvents()) return waiting.getInitialSnapshot(scope, input);
      return { status: "done", output: undefined, error: undefined, input };
    },
  };
  return logic;
};

/** Delivers the failure message, `turn_end` and `agent_end` to the listeners (R55). */
export const createEmitFailureActor = (resolve: SessionResolver) =>
  fromPromise<void, AgentEvent[]>(({ self, input }) => resolve(self._parent!).emitFailure(input));
