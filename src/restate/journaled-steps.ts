/**
 * The run's jobs as journaled Restate steps (SPEC R90, R81 across workers).
 *
 * Each job is one `ctx.run`: after a worker dies, the next attempt gets every completed job's
 * outcome from Restate's journal instead of running it again. Two rules make the replay take the
 * same path as the first attempt (Restate refuses a replay whose commands differ, error 570):
 *
 * - **Outcomes are delivered one at a time, in journal order.** Completions are awaited through
 *   `RestatePromise.race`, whose winner Restate records, never through plain promise callbacks
 *   (a replay would resolve them in command order instead of completion order: measured).
 * - **Only when the run is quiet.** The next outcome is delivered once the worker has no job
 *   between request and execution and every event reached the sink, so the commands an outcome
 *   causes (the next steps, the events written to state) are issued before the next outcome can
 *   cause any: the same interleaving on every attempt.
 *
 * A tool's `execute` gets an intent step before it (R80): an execution whose intent is journaled
 * but whose outcome is not was in flight when a worker died, so it follows R13's replay rule
 * (`replay: "safe"` runs again as a re-run, any other tool gets the interrupted result).
 */
import { RestatePromise, TerminalError, type ObjectContext } from "@restatedev/restate-sdk";
import type { AnyAgentEvent } from "../types.js";
import type { StepName } from "../../machines/steps.js";
import type { EventObject } from "xstate";
import type { JobBody, JobExecutor, JobOutcome, JobParts, WorkerProbe } from "../actors/job-executor.js";
import type { Clock } from "../loop/clock.js";
import { toPlainData } from "../loop/plain-data.js";

/** An outcome as journaled: plain JSON (an error as its name and message). */
interface JournaledOutcome {
  ok: boolean;
  output?: unknown;
  error?: { name: string; message: string };
  events: AnyAgentEvent[];
  at: number;
}

interface Pending {
  readonly promise: RestatePromise<unknown>;
  deliver(value: unknown): void | Promise<void>;
}


/**
 * Steps answered by a journaled call instead of a `ctx.run` (e.g. the steering poll reads the
 * session's inbox object): the call's result is the job's output.
 */
export type StepCalls = Partial<Record<StepName, () => RestatePromise<unknown>>>;

export class JournaledSteps implements JobExecutor {
  private probe: WorkerProbe | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** Intents whose step ran in this attempt (an execution without one here is a re-run after a crash). */
  private readonly intendedHere = new Set<number>();
  private time: number;

  /** The run's clock: journaled time (the last outcome's), so no reading differs on replay. */
  readonly clock: Clock;

  /**
   * R81: the run's numbering, for a response re-requested after a crash (its retraction): the
   * session object binds it once the run's actor exists.
   */
  numbering: (() => PartsNumbering | undefined) | undefined;

  constructor(
    private readonly ctx: ObjectContext,
    startedAt: number,
    private readonly calls: StepCalls = {},
  ) {
    this.time = startedAt;
    this.clock = {
      now: () => this.time,
      // Durations are measured inside steps (their results are journaled), so local time is fine.
      monotonic: () => performance.now(),
      setTimer: (ms, fire) => {
        const timer = setTimeout(fire, ms);
        return () => clearTimeout(timer);
      },
    };
  }

  attach(probe: WorkerProbe): void {
    this.probe = probe;
  }

  execute(step: StepName, body: JobBody, parts?: JobParts): Promise<JobOutcome> {
    return new Promise<JobOutcome>((resolve) => {
      const id = this.nextId++;
      const settle = (journaled: unknown) => resolve(this.revive(journaled as JournaledOutcome));
      const call = this.calls[step];
      if (call) {
        this.watch(call(), (output) => resolve({ ok: true, output, events: [], at: this.time }));
        return;
      }
      if (step === "executeToolCall") {
        // R80: the intent first; the execution is issued when the intent is delivered.
        const intent = this.ctx.run(`${id} intent`, async () => {
          this.intendedHere.add(id);
          return true;
        });
        this.watch(intent, () => void this.watch(this.step(`${id} ${step}`, body, !this.intendedHere.has(id)).promise, settle));
        return;
      }
      if (parts) return this.inParts(id, step, body, parts, settle);
      const { promise, ran } = this.step(`${id} ${step}`, body, false);
      if (step !== "resolveApiKey") {
        this.watch(promise, settle);
        return;
      }
      // The key lives in the worker's memory only (it never enters the journal): a step replayed
      // from the journal resolves it again on this worker before the request that needs it.
      this.watch(promise, async (value) => {
        if (!ran()) await body(() => {}, { reissue: true }, () => {});
        settle(value);
      });
    });
  }

  /** R67: the abort grace as a journaled sleep, fired when the loop reaches it (the same point on every attempt). */
  setTimer(ms: number, fire: () => void): () => void {
    return this.watch(this.ctx.sleep(ms), () => fire());
  }

  /** Registers an awaited completion; `deliver` runs when the loop reaches it. Returns the cancel. */
  watch<T>(promise: RestatePromise<T>, deliver: (value: T) => void | Promise<void>): () => void {
    const id = this.nextId++;
    this.pending.set(id, { promise, deliver: deliver as Pending["deliver"] });
    return () => this.pending.delete(id);
  }

  /**
   * Delivers outcomes until `done()` holds. Fails (terminally) when the run waits for nothing this
   * loop knows: a defect, never a state a replay could fix.
   */
  async drive(done: () => boolean): Promise<void> {
    for (;;) {
      await this.quiet();
      if (done()) return;
      if (this.pending.size === 0) throw new TerminalError("agent run on Restate: the run waits, but no step is running");
      const entries = [...this.pending];
      const [id, value] = await RestatePromise.race(entries.map(([id, entry]) => entry.promise.map((value) => [id, value] as const)));
      const entry = this.pending.get(id);
      if (!entry) continue;
      this.pending.delete(id);
      await entry.deliver(value);
    }
  }

  /** One job as one `ctx.run`; `ran()` tells whether its body ran in this attempt. */
  private step(name: string, body: JobBody, reissue: boolean): { promise: RestatePromise<unknown>; ran: () => boolean } {
    let ran = false;
    const promise = this.ctx.run(name, async (): Promise<JournaledOutcome> => {
      ran = true;
      const events: AnyAgentEvent[] = [];
      return outcomeOf(() => body((event) => events.push(event), { reissue }, noSends(name)), () => events);
    });
    return { promise, ran: () => ran };
  }

  /**
   * R70 on Restate: a job that sends while it runs (a response whose calls start as it streams) as
   * a chain of journaled steps, one per send and one for the outcome, each issued once the one
   * before was delivered. The body runs once, in the attempt that runs the chain's first
   * unjournaled step, and each step waits for its next send or its end. A replay gets the
   * journaled parts in order and runs nothing; after a crash mid-job the request is made again
   * (R81) and its sends go on from there (the run ignores a ready call it already has, by index).
   */
  private inParts(id: number, step: StepName, body: JobBody, parts: JobParts, settle: (journaled: unknown) => void): void {
    let feed: PartFeed | undefined;
    // R81: where this response's events begin in the session's numbering (its first part's first event).
    let fromSeq: number | undefined;
    const next = (n: number) => {
      const part = this.ctx.run(`${id} ${step} part ${n}`, async (): Promise<JournaledPart> => {
        // The body starts in this attempt after earlier parts were journaled: the response is requested again.
        const restarted = feed === undefined && n > 0;
        const value = await (feed ??= new PartFeed(body)).next();
        return restarted ? { ...value, restarted: true } : value;
      });
      this.watch(part, (journaled) => {
        const numbering = this.numbering?.();
        // R81: the earlier parts came from an answer that will not end: retracted before the new
        // answer's events (the flag is journaled, so every attempt retracts at the same point).
        if (journaled.restarted && numbering && fromSeq !== undefined) numbering.retract(fromSeq);
        if (n === 0 || journaled.restarted) fromSeq = numbering?.nextSeq();
        if (journaled.kind === "end") return settle(journaled.outcome);
        parts.deliver(journaled.events, journaled.sent);
        next(n + 1);
      });
    };
    next(0);
  }

  private revive(journaled: JournaledOutcome): JobOutcome {
    this.time = Math.max(this.time, journaled.at);
    if (journaled.ok) return { ok: true, output: journaled.output, events: journaled.events, at: this.time };
    const error = new Error(journaled.error?.message ?? "step failed");
    error.name = journaled.error?.name ?? "Error";
    return { ok: false, error, events: journaled.events, at: this.time };
  }

  /** Waits until the worker is quiet (see the module comment). */
  private async quiet(): Promise<void> {
    // Microtasks and the sink's deliveries settle within a few turns of the event loop.
    const quiet = () => this.probe?.quiet() ?? true;
    do {
      while (!quiet()) await turn();
      await turn();
    } while (!quiet());
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A part of a job run in parts: what it emitted, then what it sent; or its outcome. */
type JournaledPart = ({ kind: "sent"; events: AnyAgentEvent[]; sent: EventObject } | { kind: "end"; outcome: JournaledOutcome }) & { restarted?: true };

/** What a response run in parts needs of the run's numbering (R81). */
export interface PartsNumbering {
  nextSeq(): number;
  retract(fromSeq: number): void;
}

/** A job body's outcome as journaled; `events` read once it settled. A failure is an outcome (the machine decides what it means), never a Restate retry. */
async function outcomeOf(run: () => Promise<unknown>, events: () => AnyAgentEvent[]): Promise<JournaledOutcome> {
  try {
    const output = await run();
    // `undefined` stays absent in JSON, so it comes back as `undefined`, not `null`.
    return { ok: true, output: output === undefined ? undefined : toPlainData(output), events: events(), at: Date.now() };
  } catch (error) {
    const { name, message } = error instanceof Error ? error : { name: "Error", message: String(error) };
    return { ok: false, error: { name, message }, events: events(), at: Date.now() };
  }
}

/** Only a job run in parts sends while it runs. */
const noSends = (name: string) => (event: EventObject) => {
  throw new Error(`${name}: sent ${event.type} while it ran, but it is not run in parts`);
};

/** A running job body cut into parts at its sends: `next()` resolves with the next part, in order. */
class PartFeed {
  private readonly ready: JournaledPart[] = [];
  private waiting: ((part: JournaledPart) => void) | undefined;
  private events: AnyAgentEvent[] = [];

  constructor(body: JobBody) {
    const emitted = () => this.events.splice(0);
    void outcomeOf(
      () => body((event) => void this.events.push(event), { reissue: false }, (sent) => this.push({ kind: "sent", events: emitted(), sent: toPlainData(sent) })),
      emitted,
    ).then((outcome) => this.push({ kind: "end", outcome }));
  }

  next(): Promise<JournaledPart> {
    const part = this.ready.shift();
    return part ? Promise.resolve(part) : new Promise((resolve) => (this.waiting = resolve));
  }

  private push(part: JournaledPart): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(part);
    else this.ready.push(part);
  }
}
