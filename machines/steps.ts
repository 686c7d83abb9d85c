/**
 * The step protocol between the machines and their run's step worker (SPEC R13, R15).
 *
 * Every step that awaits app code (a hook, `convertToLlm`, the stream function, a tool's
 * preparation and `execute`) is a state that asks the run's single step worker (`steps`, invoked
 * at the root of the run machine) for its job and leaves on the reply. One persistent worker costs
 * far less than an invoked actor per step (PERF-NOTES; measured again for this design: 8 µs per
 * step against 18–22 µs), so the protocol gives the guarantees `invoke` would:
 *
 * - **correlation**: a requester has at most one job at a time; a reply is sent only for the
 *   job that is still current (a job superseded or cancelled never replies);
 * - **cancellation**: leaving a step state before its reply cancels the job (its signal aborts);
 * - **re-issue on restore**: a restored worker sends `step.reissue` to its run and to every tool
 *   call; each step state answers it by requesting its job again (`reissue: true`, so a tool
 *   execution can apply its `replay` rule before calling `execute`);
 * - **events before app code**: the worker starts a job only after the step that asked for it, and
 *   once every event produced so far has reached the sink (R15, R21).
 * - **abandonment** (R67): once the run's abort grace runs out, every job still running is
 *   cancelled and its requester gets `step.failed` with a `StepAbandonedError` (the only reply a
 *   cancelled job ever causes); jobs asked for later run as usual.
 *
 * Event names follow one convention, `<subject>.<verb>`: `step.run`, `step.cancel`,
 * `step.reissue`, `step.<job>.done`, `step.failed`, `run.abort`, `grace.expire`; the session's `run.start`, `queue.steer`, …
 */
import { enqueueActions, sendParent, sendTo, type ActionFunction, type ActorLogic, type AnyActorRef, type EventObject, type MachineContext, type Snapshot } from "xstate";
import type { AfterToolCallResult, AgentMessage, AgentToolResult, ApprovalRule, AssistantMessage, Message, Model, ThinkingLevel, ToolCall } from "../src/protocol/index.js";
import type { StateUpdate, StreamedResponse, TurnSnapshot, TurnUpdate } from "./run.types.js";

/**
 * What a call's preflight decided (R21): validated arguments to execute with, or an immediate
 * result (not found, invalid, blocked, aborted) whose `tool_execution_end` was already emitted.
 */
export type Preflight =
  /** `approval`: R82, the call waits for approval before it executes (its reason for whoever decides). */
  | { index: number; ready: true; args: unknown; approval?: { reason: string } }
  | { index: number; ready: false; result: AgentToolResult; settledAt: number };

/** R82: what a preflight knows of approvals; absent where nobody can approve (`runToolCall`), so a call that needs approval is refused. */
export interface PreflightApproval {
  /** The session's "always allow" rules: a matching call does not wait. */
  rules: ApprovalRule[];
}

/** One streamed call's preflight (R70, R21): the arguments to execute with, or its immediate result. */
export type CallPreflight = { ready: true; args: unknown; approval?: { reason: string } } | { ready: false; result: AgentToolResult };

/**
 * R70: the stream job tells its run that a call's `toolcall_end` arrived mid-stream (`index`: its
 * position among the response's calls; `partialMessage`: a copy of the message so far).
 */
export interface StreamToolCallReady {
  type: "stream.toolCallReady";
  index: number;
  toolCall: ToolCall;
  partialMessage: AssistantMessage;
  /** The injected clock's time (R13). */
  at: number;
}

/** What `execute` produced (R22); `executed: false` when it did not run (R29, R13). */
export interface ExecutionOutcome {
  executed: boolean;
  result: AgentToolResult;
  isError: boolean;
  durationMs?: number;
  /** R82: the validated replacement arguments (set when the input asked to `validate`). */
  args?: unknown;
}

export interface ToolStepInput {
  toolCall: ToolCall;
  args: unknown;
}

/** R65: `execute`'s input also says when the call's execution started (a timeout's deadline counts from it, across a restore). */
export interface ExecuteStepInput extends ToolStepInput {
  startedAt: number;
  /** R82: `args` are an approval's replacement: prepared and validated again before `execute` (invalid: the validation error result). */
  validate?: boolean;
}

/**
 * What a steering poll took (R3, R4a, R9). A poll of the Agent's own queues (R53) also says that its
 * follow-up queue was empty as the poll returned (`followUps: "none"`, read where the reference's
 * follow-up poll would drain it, right after the steering poll's promise settles), so the follow-up
 * poll that would come next, with nothing run in between, is known to take nothing (R10). A poll
 * that took nothing also says whether the steering queue was still empty where R4a's re-poll would
 * drain (`steering: "none"`, read one microtask later: the reference's re-poll follows its steering
 * poll two microtasks apart), so the re-poll that would come next is known to take nothing. A poll of
 * an app's own hook knows nothing of its queues: the messages alone. (Journals of format 2 and
 * earlier hold only the array form; of format 3, never `steering`.)
 */
export type SteeringPoll = AgentMessage[] | { messages: AgentMessage[]; followUps?: "none"; steering?: "none" };

/** The messages a steering or follow-up poll took. */
export const polledMessages = (output: SteeringPoll): AgentMessage[] => (Array.isArray(output) ? output : output.messages);

/** R10: did the steering poll's reply say that the Agent's follow-up queue was empty? */
export const saysFollowUpsEmpty = (output: SteeringPoll): boolean => !Array.isArray(output) && output.followUps === "none";

/** R4a: did the (empty) steering poll's reply say that the Agent's steering queue was still empty where the re-poll would drain? */
export const saysSteeringEmpty = (output: SteeringPoll): boolean => !Array.isArray(output) && output.steering === "none";

/** R63: tokens (input + output) and `cost.total` of model responses. */
export interface Spend {
  tokens: number;
  cost: number;
}

/**
 * R62: the compaction's replacement transcript (`messages`; `null` when the compactor returned the
 * transcript itself: nothing to compact) and R63: what its model requests (`complete`) spent. A bare
 * array or `null` is the reply of an earlier version (a journal written before the spend was
 * counted, R81): nothing spent.
 */
export type CompactOutput = { messages: AgentMessage[] | null; spent: Spend } | AgentMessage[] | null;

/** The compaction's reply in its current shape. */
export const compactReply = (output: CompactOutput): { messages: AgentMessage[] | null; spent: Spend } =>
  output === null || Array.isArray(output) ? { messages: output, spent: { tokens: 0, cost: 0 } } : output;

/** Each job: its input and its output. */
export interface StepJobs {
  getSteeringMessages: { input: null; output: SteeringPoll };
  getFollowUpMessages: { input: null; output: AgentMessage[] };
  prepareNextTurn: { input: TurnSnapshot; output: TurnUpdate };
  prepareRequest: { input: { messages: AgentMessage[]; model: Model; thinkingLevel: ThinkingLevel }; output: StateUpdate };
  transformContext: { input: { messages: AgentMessage[] }; output: AgentMessage[] };
  /** `convertToLlm` (R40); the machine normalizes its result in the next state. */
  convertToLlm: { input: { messages: AgentMessage[] }; output: Message[] };
  /** Resolves the next request's key into the runtime; the key never enters a machine. */
  resolveApiKey: { input: { provider: string }; output: null };
  /**
   * Calls the stream function; the worker emits the message events itself (R41). `withhold`
   * (R60, R62: retries or compaction on): `start` is held until the first content or terminal
   * event, and a failure before content emits nothing. `maxTokens`: R61's escalated limit.
   * `loopRetries`: the stream function is given `maxRetries: 0`.
   */
  streamResponse: {
    input: { messages: Message[]; model: Model; thinkingLevel: ThinkingLevel; maxTokens: number | null; withhold: boolean; loopRetries: boolean; streamTools?: boolean };
    output: StreamedResponse;
  };
  /** Waits for a slot of the request limiter; the stream step holds it until its response ended. */
  acquireRequestSlot: { input: null; output: null };
  /** R60: the backoff before the next attempt: a uniform draw below `ceilingMs` (full jitter), from the injected random source. */
  drawBackoff: { input: { ceilingMs: number }; output: number };
  /** R60: waits until `until` on the injected clock (a restored wait resumes with what was left); ends early when the run aborts. */
  waitForRetry: { input: { until: number }; output: null };
  /** R62: the configured compactor's replacement transcript, as plain data, and what it spent (see `CompactOutput`). */
  compact: { input: { messages: AgentMessage[]; model: Model; reason: "overflow" | "threshold"; estimatedTokens: number }; output: CompactOutput };
  finishTurn: { input: TurnSnapshot; output: "continue" | "end" | null };
  /**
   * R21, R24, R25: each call in source order: its `tool_execution_start`, then (once the sink has
   * it) the abort check, lookup, `prepareArguments`, validation of a copy of the arguments and
   * `beforeToolCall` (when `gate`); an immediate result's `tool_execution_end` at once. A
   * sequential batch preflights one call at a time, a parallel batch all of them in one step.
   * R82: then `needsApproval` and the "always allow" rules; a call that must wait comes back
   * ready with its `approval`.
   */
  preflightCalls: { input: { calls: { index: number; toolCall: ToolCall }[]; gate: boolean; approval?: PreflightApproval }; output: Preflight[] };
  executeToolCall: { input: ExecuteStepInput; output: ExecutionOutcome };
  /** R70: may this streamed call run alongside others? `isConcurrencySafe` on a validated copy of its arguments. */
  checkToolCall: { input: { toolCall: ToolCall; sequential: boolean }; output: boolean };
  /**
   * R70, R21: a streamed call's own preflight, once the run started it (its `tool_execution_start`
   * was delivered): the abort check, lookup, `prepareArguments`, validation and `beforeToolCall`
   * (when `gate`; told `streaming` and given `partial` while the response streams).
   */
  preflightToolCall: { input: { toolCall: ToolCall; partial: AssistantMessage | null; gate: boolean; approval: PreflightApproval }; output: CallPreflight };
  finalizeToolCall: { input: ToolStepInput & { result: AgentToolResult; isError: boolean }; output: AfterToolCallResult | undefined };
}

export type StepName = keyof StepJobs;

export type StepJob = { [K in StepName]: { name: K; input: StepJobs[K]["input"] } }[StepName];

/** A state asks for its job. `reissue`: the same step again, after a restore (R13). */
export interface StepRequest {
  type: "step.run";
  job: StepJob;
  replyTo: AnyActorRef;
  reissue: boolean;
  /**
   * R3: the run's first job, asked for while the initial steering poll is deferred to it (the
   * Agent's own steering queue was empty as the run started). Where that poll would drain, once
   * every event so far reached the sink and before the job begins, the worker looks at the queue:
   * something queued meanwhile and the job does not run; its requester gets `step.steeringQueued`
   * and polls.
   */
  checksSteering?: true;
}

/** The state was left before the reply: the job's signal aborts and it never replies. */
export interface StepCancel {
  type: "step.cancel";
  replyTo: AnyActorRef;
}

/** The run's signal was aborted (R29): every job's signal aborts, and later jobs start aborted. */
export interface RunAbort {
  type: "run.abort";
}

/** R67: the abort grace ran out (the worker's own timer): every job still running is abandoned. */
export interface GraceExpire {
  type: "grace.expire";
}

/**
 * R82: an approval decision for a waiting call (the Agent's `approve`/`reject`, or an app that
 * embeds the run): `args` replace the call's arguments (validated again), `always` adds an "always
 * allow" rule for the rest of the run (and allows the batch's other waiting calls it covers). An id
 * that is not waiting is ignored; `approveToolCall`/`rejectToolCall` check it and throw instead.
 */
export type RunApprovalEvent =
  | { type: "approval.approve"; approvalId: string; args?: unknown; always?: true | { path: string }; at?: number }
  | { type: "approval.reject"; approvalId: string; reason: string; at?: number };

/** R80: the run took an approval decision (an external input): the worker's journal records it there. */
export interface RunDecided {
  type: "run.decided";
  decision: RunApprovalEvent;
}

export type StepWorkerEvent = StepRequest | StepCancel | RunAbort | GraceExpire | RunDecided;

/** The reply to a state that ran `job`: `at` is the injected clock's time of the reply (R13). */
export type StepDone = { [K in StepName]: { type: `step.${K}.done`; output: StepJobs[K]["output"]; at: number } }[StepName];
export type StepFailed = { type: "step.failed"; job: StepName; error: unknown; at: number };
/** R3: the reply to a job asked for with `checksSteering` when steering was queued before it began: the job did not run. */
export type StepSteeringQueued = { type: "step.steeringQueued"; at: number };
/** Sent by a restored worker: every state that was waiting for a job asks for it again. */
export type StepReissue = { type: "step.reissue" };
export type StepReply = StepDone | StepFailed | StepSteeringQueued;

export type DoneEvent<K extends StepName> = Extract<StepDone, { type: `step.${K}.done` }>;

export function stepRequest<K extends StepName>(name: K, input: StepJobs[K]["input"], replyTo: AnyActorRef, reissue: boolean): StepRequest {
  return { type: "step.run", job: { name, input } as StepJob, replyTo, reissue };
}

/** `step.run` for a job that a deferred steering poll precedes (R3, see `StepRequest.checksSteering`). */
export function checkingSteering(request: StepRequest): StepRequest {
  request.checksSteering = true;
  return request;
}

/** Is `event` a step's own reply (leaving on it needs no cancel)? */
export const isStepReply = (event: { type: string }): boolean => event.type === "step.failed" || (event.type.startsWith("step.") && event.type.endsWith(".done"));

/** The time a reply carries, or `fallback` for events that carry none (R13: no clock reads in transitions). */
export const timeOf = (event: { type: string; at?: unknown }, fallback: number): number => (typeof event.at === "number" ? event.at : fallback);

/** What the worker is given: the key under which its run's runtime is served in this process (`context.host`). */
export interface StepWorkerInput {
  host: string;
}

/**
 * The worker's snapshot: its run's key (`host`, persisted: a restored worker is re-created
 * without input), that it was restored (its jobs were lost), and R67's abort grace once the run
 * was aborted with one configured (when, on the injected clock; whether it ran out), so a
 * restored run waits only what was left of it.
 */
export type StepWorkerSnapshot = Snapshot<undefined> & { host: string; restored: boolean; grace?: { abortedAt: number; expired: boolean } };

export type StepWorkerLogic = ActorLogic<StepWorkerSnapshot, StepWorkerEvent, StepWorkerInput>;

/**
 * Each job's reply type, built once: guards ask for it on every transition they decide, and the
 * worker replies with this very string (one built per reply would be hashed and compared anew by
 * every lookup of it).
 */
const doneTypes = new Map<StepName, string>();
export const doneType = <K extends StepName>(job: K): `step.${K}.done` => {
  let type = doneTypes.get(job);
  if (type === undefined) doneTypes.set(job, (type = `step.${job}.done`));
  return type as `step.${K}.done`;
};

/** The output of the reply `event` to `job` (a transition taken only on that reply). */
export function replyOutput<K extends StepName>(event: { type: string }, job: K): StepJobs[K]["output"] {
  if (event.type !== doneType(job)) throw new Error(`expected step.${job}.done, got ${event.type}`);
  return (event as unknown as { output: StepJobs[K]["output"] }).output;
}

/** The job of the step state `actor` is in (declared as its `meta.step`), if any. */
export function currentStep<K extends StepName>(actor: AnyActorRef): K | undefined {
  const meta = (actor.getSnapshot() as { getMeta(): Record<string, { step?: K } | undefined> }).getMeta();
  for (const entry of Object.values(meta)) if (entry?.step) return entry.step;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The step plumbing, written once for every machine that has steps
// ---------------------------------------------------------------------------------------------

/** What each of a machine's steps asks for, read from its context. */
export type StepInputs<TContext, TJob extends StepName> = { [J in TJob]: (context: TContext) => StepJobs[J]["input"] };

/**
 * A step state: asks for its job on entry (`requestStep`) and names its job in `meta.step` so that
 * `step.reissue` asks again for it (R13). Spread into the state's config; its transitions are
 * written in the state. A transition that leaves it before the reply (on any event but the job's
 * own `step.<job>.done` or `step.failed`) names `cancelStep` among its actions: the job's signal
 * aborts and it never replies. (Written where a step can be left early, not as the state's exit:
 * most steps are only ever left on their reply, and an exit action ran on every step.
 * test/loop/step-cancel.test.ts checks every machine's transitions for it.)
 */
export const stepState = <TJob extends StepName>(job: TJob) =>
  ({
    entry: { type: "requestStep", params: { job } },
    meta: { step: job },
  }) as const;

/**
 * The three step actions of a machine (`requestStep`, `cancelStep`, `reissueStep`), built from
 * what its steps ask for. `worker` says where the machine's step worker is: its own `steps` child
 * (the run, `runToolCall`'s host), or its parent's, reached through the parent (a tool call: the
 * parent forwards `step.run`/`step.cancel` to its worker, see `forwardsStep`), so no machine reads
 * XState's internals to find it and a restored call is wired again by its parent alone.
 */
export function stepActions<TContext extends MachineContext, TEvent extends EventObject, TJob extends StepName>(
  inputs: StepInputs<TContext, TJob>,
  worker: "child" | "parent",
  /** R3: does the step this request is for follow a deferred steering poll (`StepRequest.checksSteering`)? */
  checksSteering?: (context: TContext, event: TEvent) => boolean,
) {
  type Enqueue = { sendTo(target: "steps", event: StepRequest | StepCancel): void; sendParent(event: StepRequest | StepCancel): void };
  const send = (enqueue: Enqueue, event: StepRequest | StepCancel) => (worker === "child" ? enqueue.sendTo("steps", event) : enqueue.sendParent(event));
  const request = (context: TContext, job: TJob, self: AnyActorRef, reissue: boolean) => stepRequest(job, inputs[job](context) as never, self, reissue);
  // Every step state's entry: a plain sendTo/sendParent, not enqueueActions (which builds its
  // `enqueue` object of closures on every call), as the run had before machines/run/.
  const toRequest = ({ context, event, self }: { context: TContext; event: TEvent; self: AnyActorRef }, { job }: { job: TJob }) => {
    const step = request(context, job, self, event.type === "step.reissue");
    return checksSteering?.(context, event) ? checkingSteering(step) : step;
  };
  return {
    requestStep: (worker === "child" ? sendTo("steps", toRequest as never) : sendParent(toRequest as never)) as unknown as ActionFunction<
      TContext,
      TEvent,
      TEvent,
      { job: TJob },
      never,
      never,
      never,
      never,
      never
    >,
    // On a transition that leaves a step state before its reply (see `stepState`).
    cancelStep: (worker === "child"
      ? sendTo("steps", ({ self }) => ({ type: "step.cancel", replyTo: self }) satisfies StepCancel)
      : sendParent(({ self }) => ({ type: "step.cancel", replyTo: self }) satisfies StepCancel)) as unknown as ActionFunction<
      TContext,
      TEvent,
      TEvent,
      undefined,
      never,
      never,
      never,
      never,
      never
    >,
    // R13: a restored machine asks again for the job of the step it was waiting in.
    reissueStep: enqueueActions<TContext, TEvent, undefined, TEvent, never, never, never, never, never>(({ context, self, enqueue }) => {
      const job = currentStep<TJob>(self);
      if (job) send(enqueue as unknown as Enqueue, request(context, job, self, true));
    }),
  };
}

/** A step event a child sends through its parent (see `stepActions`). */
export type ForwardedStep = StepRequest | StepCancel;

/**
 * The parent's side of a child's steps: `step.run`/`step.cancel` forwarded to its worker; a
 * request only while its sender is still running (`isRequesterActive`: a request a call sent
 * before it settled or was stopped never starts a job). A cancel always goes through: a call that
 * settles on `call.cancel` is done before its parent reads the cancel, and its job must still abort.
 */
export const forwardStep = <TContext extends MachineContext, TEvent extends EventObject>() =>
  sendTo(
    "steps",
    ({ event }: { event: TEvent }) => event as unknown as ForwardedStep,
  ) as unknown as ActionFunction<TContext, TEvent, TEvent, undefined, never, never, never, never, never>;

/**
 * Is the step request's sender still running? (Only a machine's own children send it steps; one
 * that settled or was stopped is no longer active, and a worker would never reply to it.)
 */
export const isRequesterActive = ({ event }: { event: EventObject }): boolean => (event as unknown as ForwardedStep).replyTo.getSnapshot().status === "active";
