/**
 * The session machine's actors and actions, one factory each (their placeholders are typed by
 * these), and where they find the Agent's side of a session: `SessionHosts`, a map from the
 * plain-data key in the session's context (`context.host`) to the session runtime serving it.
 */
import { fromPromise } from "xstate";
import type { AgentEvent } from "../types.js";
import type { SessionActorInput } from "../../machines/session.machine.js";

/** What the session machine's actors and actions call on the Agent's side (`SessionRuntime`). */
export interface SessionServices {
  /** Settles when every event of the current run has been delivered; undefined when none is pending. */
  settleEvents(): Promise<void> | undefined;
  emitFailure(events: AgentEvent[]): Promise<void>;
  abortRun(): void;
  endAfterDefect(error: unknown): void;
  finishRun(): void;
}

/**
 * The session runtimes of one provided session machine, by key. A runtime is served only while
 * its session is busy (every action and actor of the machine runs then), so an Agent that is
 * dropped idle leaves nothing here.
 */
export class SessionHosts {
  private readonly served = new Map<string, SessionServices>();
  private count = 0;

  /** A key for a new session runtime (its sessions' `context.host`). */
  newKey(): string {
    return `session-${++this.count}`;
  }

  serve(key: string, runtime: SessionServices): void {
    this.served.set(key, runtime);
  }

  retire(key: string): void {
    this.served.delete(key);
  }

  get(key: string): SessionServices {
    const runtime = this.served.get(key);
    if (!runtime) throw new Error(`agent: no session runtime serves "${key}" (a session machine runs only inside an Agent)`);
    return runtime;
  }
}

/**
 * Resolves once the run's listeners have handled every event it produced (R54). (The session
 * invokes it only when some are still on their way: `listenersSettled`.)
 */
export const createSettleEventsActor = (sessions: SessionHosts) =>
  fromPromise<void, SessionActorInput>(({ input }) => sessions.get(input.host).settleEvents() ?? Promise.resolve());

/** Delivers the failure message, `turn_end` and `agent_end` to the listeners (R55). */
export const createEmitFailureActor = (sessions: SessionHosts) =>
  fromPromise<void, SessionActorInput & { events: AgentEvent[] }>(({ input }) => sessions.get(input.host).emitFailure(input.events));
