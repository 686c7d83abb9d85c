/**
 * The run's step worker: one persistent actor that runs each step's job and replies to the state
 * that asked (`machines/steps.ts` has the protocol and why it replaces an invoke per step).
 *
 * It is custom actor logic rather than `fromCallback` for one reason: it must know whether it was
 * restored. A restored worker (R13) tells its run and the run's tool calls to ask again for the
 * jobs they were waiting for (`step.reissue`); nothing else about a worker needs persisting.
 */
import type { AnyActorRef, EventObject } from "xstate";
import type { AnyAgentEvent } from "../types.js";
import { doneType, type StepName, type StepReply, type StepRequest, type StepWorkerEvent, type StepWorkerLogic, type StepWorkerSnapshot } from "../../machines/steps.js";
import type { RunRuntime } from "./run-runtime.js";
import type { JobScope } from "./job-scope.js";
import type { JobJournal, JournaledJob } from "./job-journal.js";
import type { JobExecutor } from "./job-executor.js";
import { runJobs } from "./run-jobs.js";
import { ownQueuesOf } from "./own-queues.js";
import { toolJobs } from "./tool-jobs.js";
import { redeliverFinishedChildren } from "./finished-children.js";
import { JobTrail, StepAbandonedError, abandonedText, isCallStep } from "../loop/abort-grace.js";

export type { JobScope };

// --- The journal seam (SPEC R80–R83; the journal itself is src/durable/, its interface job-journal.ts)
export type { JobJournal, JournaledJob };

/** Binds a journal to a run's runtime before the run starts (src/durable/). */
export function bindJobJournal(runtime: RunRuntime, journal: JobJournal): void {
  runtime.journal = journal;
}
// --- end of the journal seam --------------------------------------------------------------------

type Job = (runtime: RunRuntime, input: never, scope: JobScope) => unknown;

const jobs: Record<StepName, Job> = { ...runJobs, ...toolJobs };

/**
 * Where a worker finds its run's runtime: by the key its run was given (`RunInput.host`, the
 * worker's input), served by the run's host (`RunHosts`, src/api/run-hosts.ts).
 */
export interface RuntimeSource {
  runtimeOf(host: string): RunRuntime;
  /** The run's worker stopped: the host lets go of the runtime. */
  close?(host: string): void;
}

/**
 * The step worker of the runs whose runtimes `source` serves. A stopped worker drops its runner
 * and closes its run's key at once, so nothing outlives a finished run (`npm run bench:gc`).
 */
export function createStepsWorker(source: RuntimeSource): StepWorkerLogic {
  // Each running worker's runner, by its run's key (a worker's own state that is not plain data).
  const runners = new Map<string, StepRunner>();
  return {
    transition(snapshot, event) {
      if (snapshot.status !== "active") return snapshot;
      if ((event as EventObject).type === "xstate.stop") {
        const runner = runners.get(snapshot.host);
        runners.delete(snapshot.host);
        runner?.stop();
        source.close?.(snapshot.host);
        return { ...snapshot, status: "stopped" } as StepWorkerSnapshot;
      }
      return runners.get(snapshot.host)?.receive(event, snapshot) ?? snapshot;
    },
    start(snapshot, { self }) {
      if (snapshot.status !== "active") return;
      const runtime = source.runtimeOf(snapshot.host);
      const runner = new StepRunner(runtime, self);
      runners.set(snapshot.host, runner);
      runtime.journal?.bindGrace(() => runner.expireGrace());
      // R67, R13: a run restored after its abort waits only what was left of the grace.
      if (snapshot.restored) runner.resumeGrace(snapshot);
      if (snapshot.restored) reissue(runtime.owner, self);
    },
    getInitialSnapshot: (_scope, input) => ({ status: "active", output: undefined, error: undefined, host: input.host, restored: false }),
    getPersistedSnapshot: (snapshot) => snapshot,
    // Restored: this worker replaces one whose jobs were lost.
    restoreSnapshot: (snapshot) => ({ ...(snapshot as StepWorkerSnapshot), restored: true }),
  };
}

/**
 * R13: the run, and each of its tool calls, asks again for the job it was waiting for; a call that
 * had finished unnoticed reports again.
 */
function reissue(owner: AnyActorRef, worker: AnyActorRef): void {
  owner.send({ type: "step.reissue" });
  const children = (owner.getSnapshot() as { children: Record<string, AnyActorRef> }).children;
  for (const child of Object.values(children)) if (child !== worker && child.getSnapshot().status === "active") child.send({ type: "step.reissue" });
  redeliverFinishedChildren(owner, worker);
}

/** One job in flight: its own scope (a class, so its accessors live on the prototype, not per job). */
class RunningJob implements JobScope, JournaledJob {
  controller: AbortController | undefined = undefined;
  cancelled = false;
  /** R67: what the job emitted, kept only when an abort grace may abandon it. */
  readonly trail: JobTrail | undefined;
  /** R90: an executor captures what the job emits and sends, to deliver it with the job's outcome (or its parts). */
  capture: ((event: AnyAgentEvent) => void) | undefined = undefined;
  captureSend: ((event: EventObject) => void) | undefined = undefined;

  constructor(
    private readonly runtime: RunRuntime,
    readonly name: StepName,
    readonly requester: AnyActorRef,
    // Not readonly: a journal or an executor re-running a step after a crash makes it a re-issue (R13, R81, R90).
    public reissue: boolean,
    readonly input: unknown,
    private readonly runner: StepRunner,
    private readonly journal: JobJournal | undefined,
    /** R3: the run's initial steering poll was deferred to this job (`StepRequest.checksSteering`). */
    readonly checksSteering: boolean,
  ) {
    this.trail = graceOf(runtime) === undefined ? undefined : new JobTrail();
  }

  replay(output: readonly (AnyAgentEvent | { sent: EventObject })[], reply: StepReply | undefined): void {
    if (this.cancelled) return;
    for (const item of output) {
      if ("sent" in item) this.requester.send(item.sent);
      else {
        // R67: as when it ran, an abandonment closes what the replayed job had opened.
        this.trail?.note(item);
        this.runtime.events.push(item);
      }
    }
    if (reply) this.runner.reply(this, reply, undefined);
  }

  runLive(): void {
    void (async () => {
      // As any job: after the step that asked, once the sink is idle (R15, R21).
      await undefined;
      for (let settled = this.runtime.events.settled(); settled; settled = this.runtime.events.settled()) await settled;
      if (!this.cancelled) await this.runner.execute(this, this.journal);
    })();
  }

  // Created on first use: most jobs never read it.
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.runtime.aborted || this.cancelled) this.controller.abort();
    }
    return this.controller.signal;
  }

  emit(event: AnyAgentEvent): Promise<void> | undefined {
    if (this.cancelled) return undefined;
    if (this.capture) return void this.capture(event);
    this.trail?.note(event);
    // Journaled before the push: a sink may react to it at once (an abort is journaled after it).
    this.journal?.emitted(this, event);
    return this.runtime.events.push(event);
  }

  send(event: EventObject): void {
    if (this.cancelled || this.requester.getSnapshot().status !== "active") return;
    if (this.captureSend) return this.captureSend(event);
    this.journal?.sent(this, event);
    this.requester.send(event);
  }

  /** R70, R90: a part of a job run by an executor: what it emitted, then what it sent, as if it ran here. */
  deliverPart(events: readonly AnyAgentEvent[], sent: EventObject): void {
    const { capture, captureSend } = this;
    this.capture = this.captureSend = undefined;
    for (const event of events) this.emit(event);
    this.send(sent);
    this.capture = capture;
    this.captureSend = captureSend;
  }

  abortOwn(reason: unknown): void {
    (this.controller ??= new AbortController()).abort(reason);
  }
}

/** R67: the run's abort grace in ms, if one is configured (a value that is not a duration counts as none). */
function graceOf(runtime: RunRuntime): number | undefined {
  const ms = runtime.config.abortGraceMs;
  return typeof ms === "number" && ms >= 0 && Number.isFinite(ms) ? ms : undefined;
}

class StepRunner {
  /** Each requester's current job: at most one (correlation). */
  private readonly current = new Map<AnyActorRef, RunningJob>();
  /** R67: cancels the grace timer while it runs. */
  private cancelGrace: (() => void) | undefined = undefined;
  /** The run took `run.abort` already (R29: later ones change nothing). */
  private abortTaken = false;
  /** Jobs asked for whose execution has not begun yet (an executor delivers outcomes only when there are none). */
  private starting = 0;

  constructor(
    private readonly runtime: RunRuntime,
    private readonly self: AnyActorRef,
  ) {
    runtime.executor?.attach({ quiet: () => this.starting === 0 && !runtime.events.settled() });
  }

  /** Handles `event`; returns the worker's next snapshot (only R67's grace is ever recorded in it). */
  receive(event: StepWorkerEvent, snapshot: StepWorkerSnapshot): StepWorkerSnapshot {
    switch (event.type) {
      case "step.run":
        this.cancel(event.replyTo);
        this.starting++;
        this.run(event);
        return snapshot;
      case "step.cancel":
        this.cancel(event.replyTo);
        return snapshot;
      case "run.abort": {
        // R80: the abort is journaled where the run took it, once (an Agent's abort reaches the
        // run both from the session machine and through the run's signal).
        if (!this.abortTaken) this.runtime.journal?.aborted();
        this.abortTaken = true;
        // R29: every running job sees the abort; later jobs start with an aborted signal.
        this.runtime.abortSignal();
        for (const job of this.current.values()) job.controller?.abort();
        const grace = graceOf(this.runtime);
        if (grace === undefined || snapshot.grace) return snapshot;
        // R67, R13: the abort's time goes into the snapshot, so a restored run resumes the grace.
        this.startGrace(grace);
        return { ...snapshot, grace: { abortedAt: this.runtime.clock.now(), expired: false } };
      }
      // R80, R82: an approval decision the run took, journaled where it took it.
      case "run.decided":
        this.runtime.journal?.decided(event.decision);
        return snapshot;
      // Recorded here; the timer abandons the jobs once the snapshot says so (outside this transition).
      case "grace.expire":
        return { ...snapshot, grace: { abortedAt: snapshot.grace?.abortedAt ?? this.runtime.clock.now(), expired: true } };
    }
  }

  /**
   * R67, R13: a restored worker of an aborted run restarts the grace with what was left of it (the
   * whole grace when the snapshot does not say when the abort came); once expired, never again.
   */
  resumeGrace(snapshot: StepWorkerSnapshot): void {
    const grace = graceOf(this.runtime);
    if (grace === undefined || !this.runtime.aborted || snapshot.grace?.expired) return;
    const left = snapshot.grace ? Math.max(0, snapshot.grace.abortedAt + grace - this.runtime.clock.now()) : grace;
    this.startGrace(left);
  }

  private startGrace(ms: number): void {
    const { executor, clock } = this.runtime;
    const setTimer = executor?.setTimer ? executor.setTimer.bind(executor) : clock.setTimer.bind(clock);
    this.cancelGrace = setTimer(ms, () => {
      this.cancelGrace = undefined;
      // R80: a journaled run's abandonment is a record (a replay runs it where the journal has it).
      if (this.runtime.journal?.graceExpired() === "answered") return;
      this.expireGrace();
    });
  }

  /** R67: the grace ran out: recorded in the snapshot, every job still running abandoned. */
  expireGrace(): void {
    if (this.self.getSnapshot().status !== "active") return;
    this.self.send({ type: "grace.expire" });
    this.abandonAll(graceOf(this.runtime) ?? 0);
  }

  stop(): void {
    // A slot taken for a request that will not come goes back to the limiter.
    this.runtime.requestSlot.held?.();
    this.runtime.requestSlot.held = undefined;
    this.cancelGrace?.();
    this.cancelGrace = undefined;
    for (const requester of [...this.current.keys()]) this.cancel(requester);
  }

  /**
   * R67: every job still running is abandoned: its late result and events are dropped, an
   * assistant message it opened is closed (`aborted`), and its requester gets `step.failed` with a
   * `StepAbandonedError`: a tool call settles with it as its result, the run ends aborted. Jobs
   * asked for later run as usual (with the aborted signal).
   */
  private abandonAll(graceMs: number): void {
    const { runtime } = this;
    for (const [requester, job] of [...this.current]) {
      job.cancelled = true;
      this.current.delete(requester);
      const trail = job.trail;
      // A message whose message_end went out but that the run never got is the run's all the same.
      let partial = isCallStep(job.name) ? undefined : trail?.message;
      if (partial && !trail!.ended) {
        partial = { ...partial, stopReason: "aborted", errorMessage: abandonedText(job.name, graceMs) };
        runtime.events.push({ type: "message_end", message: partial });
      }
      const error = new StepAbandonedError(job.name, graceMs, partial, trail?.started ?? [], trail?.results ?? []);
      if (requester.getSnapshot().status === "active") requester.send({ type: "step.failed", job: job.name, error, at: runtime.clock.now() });
    }
  }

  private cancel(requester: AnyActorRef): void {
    const job = this.current.get(requester);
    if (!job) return;
    job.cancelled = true;
    job.controller?.abort();
    this.current.delete(requester);
  }

  private run({ job: { name, input }, replyTo, reissue, checksSteering }: StepRequest): void {
    const { runtime } = this;
    const job = new RunningJob(runtime, name, replyTo, reissue, input, this, runtime.journal, checksSteering === true);
    this.current.set(replyTo, job);
    // Never inside the step that asked: every event of that step comes first (R21, R25). (Plain
    // promise callbacks, not an async function: a job is asked for on every step.)
    void Promise.resolve().then(() => this.begin(job));
  }

  /**
   * Begins `job` once the sink is idle: not just past the delivery pending now, as a job started
   * by the same delivery may have queued more events meanwhile.
   */
  private begin(job: RunningJob): void {
    const settled = this.runtime.events.settled();
    if (settled) {
      void settled.then(() => this.begin(job));
      return;
    }
    this.starting--;
    if (job.cancelled) return;
    // R81, R83: a journal may answer the job from its records (in journal order) instead.
    const journal = this.runtime.journal;
    if (journal?.begin(job) === "answered") return;
    void this.execute(job, journal);
  }

  /**
   * Runs `job` for real and replies. (Promise callbacks, not an async function: every step runs
   * one. The reply comes one microtask after the job settled, as an `await` of it would; a job
   * that throws at once replies at once.)
   */
  execute(job: RunningJob, journal: JobJournal | undefined): Promise<void> {
    const { runtime } = this;
    const { executor } = runtime;
    const failed = (error: unknown) => this.reply(job, { type: "step.failed", job: job.name, error, at: runtime.clock.now() }, journal);
    // R3: the deferred initial steering poll drains here, where the job would begin (every event so
    // far has reached the sink): something was queued meanwhile, so the run polls first and asks again.
    if (job.checksSteering && ownQueuesOf(runtime.config.getSteeringMessages, runtime.config.getFollowUpMessages)?.steeringEmpty() === false) {
      this.reply(job, { type: "step.steeringQueued", at: runtime.clock.now() }, journal);
      return Promise.resolve();
    }
    let running: unknown;
    try {
      running = executor ? this.executeOn(executor, job) : jobs[job.name](runtime, job.input as never, job);
    } catch (error) {
      failed(error);
      return Promise.resolve();
    }
    return Promise.resolve(running).then(
      executor
        ? (reply) => this.reply(job, reply as StepReply, journal)
        : (output) => this.reply(job, { type: doneType(job.name), output, at: runtime.clock.now() } as StepReply, journal),
      failed,
    );
  }

  /** A job superseded or cancelled meanwhile never replies; nor does one whose requester stopped. */
  reply(job: RunningJob, reply: StepReply, journal: JobJournal | undefined): void {
    const replyTo = job.requester;
    if (job.cancelled || this.current.get(replyTo) !== job) return;
    this.current.delete(replyTo);
    if (replyTo.getSnapshot().status !== "active") return;
    journal?.replied(job, reply);
    // (A journal whose store failed just now has stopped the run.)
    if (replyTo.getSnapshot().status === "active") replyTo.send(reply);
  }

  /**
   * R90: the executor runs the job (capturing what it emits) and delivers its outcome; the events
   * go to the sink then, before the reply, as they would have while it ran.
   */
  private async executeOn(executor: JobExecutor, job: RunningJob): Promise<StepReply> {
    const { runtime } = this;
    // R70: a response that starts calls as it streams sends them while it runs: delivered part by part.
    const parts = job.name === "streamResponse" && (job.input as { streamTools?: boolean }).streamTools ? job : undefined;
    const outcome = await executor.execute(
      job.name,
      (capture, attempt, send) => {
        job.capture = capture;
        job.captureSend = send;
        if (attempt.reissue) job.reissue = true;
        return Promise.resolve(jobs[job.name](runtime, job.input as never, job));
      },
      parts && { deliver: (events, sent) => parts.deliverPart(events, sent) },
    );
    job.capture = undefined;
    job.captureSend = undefined;
    for (const event of outcome.events) job.emit(event);
    return outcome.ok
      ? ({ type: doneType(job.name), output: outcome.output, at: outcome.at } as StepReply)
      : { type: "step.failed", job: job.name, error: outcome.error, at: outcome.at };
  }
}
