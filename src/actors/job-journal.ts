/** What a run's journal (src/durable/) sees of its jobs and does at its step worker (SPEC R80–R83). */
import type { AnyActorRef, EventObject } from "xstate";
import type { AnyAgentEvent } from "../types.js";
import type { RunApprovalEvent, StepName, StepReply } from "../../machines/steps.js";

/** A job as its run's journal sees it: what was asked, by whom, and how to answer it from a record. */
export interface JournaledJob {
  readonly name: StepName;
  readonly input: unknown;
  readonly requester: AnyActorRef;
  readonly cancelled: boolean;
  /** Set by the journal before a job goes live: an intent without an outcome is a re-run (R81, R13). */
  reissue: boolean;
  /**
   * Answers the job from a record, in the record's order: pushes each event (not journaled again)
   * and sends each `{ sent }` to the requester, then sends `reply` (when given, and the job is still current).
   */
  replay(output: readonly (AnyAgentEvent | { sent: EventObject })[], reply: StepReply | undefined): void;
  /** Runs the job for real now (the journal has no more records for it). */
  runLive(): void;
}

/**
 * What a run's journal does at the worker. `begin`: "live" runs the job now (its events and reply
 * are reported); "answered": the journal answers it later, in journal order, with `replay` or `runLive`.
 */
export interface JobJournal {
  begin(job: JournaledJob): "live" | "answered";
  emitted(job: JournaledJob, event: AnyAgentEvent): void;
  sent(job: JournaledJob, event: EventObject): void;
  /** The reply a live job is about to send (only a reply that is sent: never a cancelled job's). */
  replied(job: JournaledJob, reply: StepReply): void;
  /** The worker's R67 abandonment, run when the journal says so (a replayed grace); given once, when the worker starts. */
  bindGrace(expire: () => void): void;
  /** R29: the run took `run.abort` (from its signal, the Agent, or the app): an external input. */
  aborted(): void;
  /** R82: the run took an approval decision (an external input). */
  decided(decision: RunApprovalEvent): void;
  /** R67: the grace timer ran out. "live": abandon now (journaled); "answered": the journal decides when. */
  graceExpired(): "live" | "answered";
}
