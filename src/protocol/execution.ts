/**
 * The seams through which a run meets the world, as plain types: its clock and random source
 * (R13), the request limiter (issue 19), the names of the steps a run asks its worker for, and
 * where those steps execute (R90).
 */
import type { AnyAgentEvent } from "./events.js";

/** The run's clock and random source (SPEC R13): the loop reads time and randomness only through these. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch: message timestamps, deadlines. */
  now(): number;
  /** Monotonic milliseconds: durations. */
  monotonic(): number;
  /** Calls `fire` after `ms` milliseconds (R65's tool timeouts); returns the cancel. */
  setTimer(ms: number, fire: () => void): () => void;
}

/** A number in [0, 1). */
export type RandomSource = () => number;

/** A granted slot: `release` once the response ended, with the tokens it used. Idempotent. */
export type RequestSlotRelease = (tokens?: number) => void;

export interface RequestLimiter {
  /** Resolves with the slot's release once one is free; at once (a no-op release) when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<RequestSlotRelease>;
  /** Requests in flight and waiting, for dashboards and tests. */
  readonly stats: { inFlight: number; waiting: number };
}

/**
 * The jobs a run's states and tool calls ask the step worker for (`machines/steps.ts` has each
 * one's input and output; a type test keeps the two lists equal).
 */
export type StepName =
  | "getSteeringMessages"
  | "getFollowUpMessages"
  | "prepareNextTurn"
  | "prepareRequest"
  | "transformContext"
  | "convertToLlm"
  | "resolveApiKey"
  | "streamResponse"
  | "acquireRequestSlot"
  | "drawBackoff"
  | "waitForRetry"
  | "compact"
  | "finishTurn"
  | "preflightCalls"
  | "executeToolCall"
  | "checkToolCall"
  | "preflightToolCall"
  | "finalizeToolCall";

/** An event a job sends its requester (an XState `EventObject`). */
export interface StepMessage {
  type: string;
}

// --- Where a run's jobs execute (the seam for durable execution, SPEC R90) ----------------------
// By default the step worker calls a job itself. A durable-execution engine instead runs each job
// as a journaled step and decides when its outcome is delivered: a worker that replays the run
// after a crash gets each completed step's outcome from the journal, in the order the first
// attempt saw them, so the run takes the same path again. What a job emits is captured with its
// outcome (a replayed step does not run, so it could not emit again), and the time of the outcome
// comes from the journal too (R13: no clock reading outside a step).

/** What one execution of a job produced: its output or its error, what it emitted, and when it ended. */
export type JobOutcome =
  | { readonly ok: true; readonly output: unknown; readonly events: readonly AnyAgentEvent[]; readonly at: number }
  | { readonly ok: false; readonly error: unknown; readonly events: readonly AnyAgentEvent[]; readonly at: number };

/**
 * The job itself, given where to put what it emits and sends, and whether this execution is a
 * re-run (R13's replay rule). `send` is what the job sends its requester while it runs (R70: a
 * streamed call that is ready); only a job run `withParts` sends.
 */
export type JobBody = (emit: (event: AnyAgentEvent) => void, attempt: { reissue: boolean }, send: (event: StepMessage) => void) => Promise<unknown>;

/**
 * R70, R90: a job that sends to its requester while it runs: each send, with what the job
 * emitted before it, is delivered as it happens (in journal order), not with the outcome.
 */
export interface JobParts {
  deliver(events: readonly AnyAgentEvent[], sent: StepMessage): void;
}

/** What the worker tells its executor about the run (so it delivers outcomes only when the run is quiet). */
export interface WorkerProbe {
  /** No job is between its request and its execution, and every event so far reached the sink. */
  quiet(): boolean;
}

export interface JobExecutor {
  /** Called once by the run's worker when it starts. */
  attach(probe: WorkerProbe): void;
  /**
   * Runs `body` for the job `step`; resolves with its outcome when the executor delivers it. With
   * `parts`, the job's sends are delivered through it while the job runs (a job without it never sends).
   */
  execute(step: StepName, body: JobBody, parts?: JobParts): Promise<JobOutcome>;
  /**
   * A timer of the worker itself, outside any job (R67's abort grace): an engine journals it and
   * fires it in journal order, so a replayed attempt abandons the same jobs at the same point.
   * Returns the cancel. Absent: the run's clock. (Timers inside a job, R65's tool timeouts and
   * R60's backoff, are part of the job's step.)
   */
  setTimer?(ms: number, fire: () => void): () => void;
}
