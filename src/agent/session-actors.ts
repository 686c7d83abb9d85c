/** The session machine's actors, one factory each (their placeholders are typed by these). */
import { fromPromise, type AnyActorRef } from "xstate";
import type { SessionRuntime } from "./session-runtime.js";
import type { AgentEvent } from "../types.js";

export type SessionResolver = (session: AnyActorRef) => SessionRuntime;

/** Resolves once the run's listeners have handled every event it produced (R54). */
export const createSettleEventsActor = (resolve: SessionResolver) => fromPromise<void>(({ self }) => resolve(self._parent!).settleEvents());

/** Delivers the failure message, `turn_end` and `agent_end` to the listeners (R55). */
export const createEmitFailureActor = (resolve: SessionResolver) =>
  fromPromise<void, AgentEvent[]>(({ self, input }) => resolve(self._parent!).emitFailure(input));
