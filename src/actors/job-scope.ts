import type { AnyActorRef, EventObject } from "xstate";
import type { AnyAgentEvent } from "../types.js";

/** What a job gets besides its input: its own signal, and whether it is a re-issue after a restore. */
export interface JobScope {
  readonly signal: AbortSignal;
  readonly reissue: boolean;
  /** The actor that asked (the run, or a tool call). */
  readonly requester: AnyActorRef;
  /** The job was cancelled (its state was left, or the run stopped): what it still produces is dropped. */
  readonly cancelled: boolean;
  /** Pushes an event the job produced to the run's queue, unless the job was cancelled meanwhile. */
  emit(event: AnyAgentEvent): Promise<void> | undefined;
  /** Aborts this job's own signal (R65: a tool's timeout); the run's signal is untouched. */
  abortOwn(reason: unknown): void;
  /**
   * Sends `event` to the job's requester while the job runs (R70: a tool call ready mid-stream),
   * unless the job was cancelled or the requester stopped. The one way a job talks to its
   * requester besides its reply.
   */
  send(event: EventObject): void;
}
