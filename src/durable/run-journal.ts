/**
 * One run's journal at its step worker (SPEC R80, R81, R83), bound through the worker's journal
 * seam (`bindJobJournal` in src/actors/steps-worker.ts).
 *
 * Recording: every job's outcome (what it emitted and sent, then its reply) is appended when it
 * replies, in completion order; what a job emitted before another record came between is
 * flushed as an `out` record first, so the journal's order is the order things reached the sink
 * and the machine. A tool's `execute` gets an `intent` record before it runs. External inputs
 * (the run's abort, as the worker takes it) are appended where they arrive.
 *
 * Answering (resume, replay): the jobs the machine asks for wait; the record at the cursor is
 * delivered as soon as the job it answers is waiting, so records reach the machine strictly in
 * journal order (parallel completions reproduce). Everything the machine does follows from the
 * records before it, so it asks for the same jobs again. Once the records run out, a resumed run
 * goes live: each job still waiting runs for real (an `execute` whose intent has no outcome as a
 * re-issue: R13's replay rule), and the journal records again. A replay never goes live: jobs
 * left waiting were in flight when the journal ended.
 */
import type { AnyActorRef } from "xstate";
import type { JobJournal, JournaledJob } from "../actors/steps-worker.js";
import type { RunRuntime } from "../actors/run-runtime.js";
import type { AnyAgentEvent, AgentMessage } from "../types.js";
import type { StepReply } from "../../machines/steps.js";
import type { Json } from "../store/run-store.js";
import { asJson, decodeOut, digestOf, encodeUpdate, jsonCopy, reviveReply, serializeReply, type DecisionEvent, type JobOutput, type JournalRecord } from "./records.js";
import { endedResponse } from "../actors/stream-response.js";
import type { AssistantMessage } from "../types.js";
import { JournalDivergedError } from "./errors.js";

/** Where a recording journal appends (a store's `SessionWriter` is one). */
export interface JournalWriter {
  append(record: Json): number;
}

export type JournalMode = "record" | "resume" | "replay";

/** The jobs that emit events while they run (R81: what they delivered before their record was provisional). */
const EMITTING: ReadonlySet<string> = new Set(["streamResponse", "preflightCalls", "executeToolCall"]);

/** A job's key among the partly journaled ones (a run's path asks for several kinds of job). */
const partialKey = (record: { path: string; job: string }) => `${record.path}\u0000${record.job}`;

export class RunJournal implements JobJournal {
  private cursor = 0;
  private readonly waiting: JournaledJob[] = [];
  /** What the job that emitted last emitted since the last record. */
  private open: { job: JournaledJob; out: JobOutput[] } | undefined;
  /**
   * Each job's last update of each kind, for the deltas (update-delta.ts): kept across its records
   * (R81 writes a job's output as it is delivered, so one response may span many records).
   */
  private readonly chains = new WeakMap<JournaledJob, Map<string, Json>>();
  /** The same when answering: the last decoded update of each kind, by path, until the job's reply. */
  private readonly decoded = new Map<string, Map<string, Json>>();
  /** Paths whose `execute` intent has no outcome yet (R81). */
  private readonly openIntents = new Set<string>();
  private readonly digests = new WeakMap<JournaledJob, string>();
  private pumping = false;
  private live: boolean;
  private runtime: RunRuntime | undefined;
  private owner: AnyActorRef | undefined;
  /** Set when the run asked for something the journal does not hold (R83: a diverged replay), or the store failed. */
  failure: Error | undefined;
  /** The sequence number of the last record appended (0: none yet). */
  lastSeq = 0;
  /**
   * Told when the run diverges from its records, and when a resumed run goes live. `delivered`:
   * the last sequence number whose delivery completed (written into records, R81); `retraction`:
   * the event that retracts a crashed process's provisional events from `fromSeq` on (R81), pushed
   * where the journal says, numbered next; `nextSeq`: the number the next event gets.
   */
  readonly hooks: {
    onFailure?: (error: Error) => void;
    onLive?: () => void;
    onTime?: (at: number) => void;
    delivered?: () => number;
    retraction?: (fromSeq: number) => AnyAgentEvent;
    nextSeq?: () => number;
    /** The session's event count so far (the `end` record keeps it for the next run). */
    eventCount?: () => number;
  } = {};
  /** R81: responses whose events through `message_end` a `response` record holds, by the path that asked, with the record's time. */
  private readonly ended = new Map<string, { message: AssistantMessage; at: number }>();

  /** `lastSeq`: a resumed journal's last record read (where a run that appends nothing more saves its quiet point). */
  constructor(
    private readonly writer: JournalWriter | undefined,
    private readonly records: readonly JournalRecord[],
    private readonly mode: JournalMode,
    lastSeq = 0,
  ) {
    this.live = mode === "record";
    this.lastSeq = lastSeq;
  }

  /** Binds the run this journal belongs to (before it starts). */
  attach(runtime: RunRuntime, owner: AnyActorRef): void {
    this.runtime = runtime;
    this.owner = owner;
  }

  /** Whether the run is live (recording): a resumed run's events reach its sink only from then on (R81). */
  get isLive(): boolean {
    return this.live;
  }

  /**
   * R81: whether the run's steps are answered from its records: before it goes live, and just after,
   * while a response whose record outlived its reply is answered from that record (a step an
   * observer saw traced before the crash, not made again). Observers trace only what runs live (R110).
   */
  get replaying(): boolean {
    return !this.live || this.answering;
  }
  private answering = false;

  /** R81: a job's output is not in a record yet: what is pushed now is provisional. */
  get uncovered(): boolean {
    return (this.live && this.open !== undefined) || this.replayingProvisional;
  }
  /** A replayed response event that was provisional when first delivered (it stays so: a retraction may still take it back). */
  private replayingProvisional = false;
  /**
   * R81: jobs journaled in part (`out` records: a response streaming, a preflight's
   * `tool_execution_start`, a tool's updates) whose reply no record holds, by path and job: the
   * sequence number of their first replayed event. Asked for again, they emit those events anew, so
   * what they delivered before the crash is retracted from there (provisional, R81).
   */
  private readonly partialFrom = new Map<string, number>();

  /** Whether records were delivered since the last call (a replay is over once none are). */
  progressed(): boolean {
    const moved = this.cursor !== this.seen;
    this.seen = this.cursor;
    return moved;
  }
  private seen = -1;

  /** Delivers what the records hold that needs no job (an abort at the start); call after the run started. */
  started(): void {
    if (!this.live) this.pump();
  }

  begin(job: JournaledJob): "live" | "answered" {
    if (!this.live) {
      this.waiting.push(job);
      this.pump();
      return "answered";
    }
    this.goingLive(job);
    return "live";
  }

  emitted(job: JournaledJob, event: AnyAgentEvent): void {
    this.note(job, jsonCopy(event));
    // R81's write-ahead: a response's record is durable before its `message_end` is delivered.
    if (this.live && event.type === "message_end" && job.name === "streamResponse") this.flush("response");
  }

  sent(job: JournaledJob, event: { type: string }): void {
    this.note(job, { sent: jsonCopy(event) });
  }

  replied(job: JournaledJob, reply: StepReply): void {
    if (!this.live) return;
    let out: JobOutput[] | undefined;
    if (this.open?.job === job) {
      out = this.open.out;
      this.open = undefined;
    } else this.flush();
    const record: JournalRecord = { k: "job", path: this.pathOf(job), job: job.name, digest: this.digestOf(job), ...(out ? { out } : {}), reply: serializeReply(reply) };
    this.append(record);
  }

  /** R80, R82: an approval decision, journaled as the run is about to take it. */
  decided(event: DecisionEvent): void {
    if (!this.live) return;
    this.flush();
    this.append({ k: "input", input: "decision", event: jsonCopy(event) });
  }

  /**
   * R80: an input of the run's host outside the machine (a durable Agent's queue arrival): appended
   * now; while a resumed run still replays its records, once it goes live (after them).
   */
  hostInput(record: JournalRecord): void {
    if (!this.live) {
      this.heldInputs.push(jsonCopy(record));
      return;
    }
    this.flush();
    this.append(jsonCopy(record));
  }
  private readonly heldInputs: JournalRecord[] = [];

  /** R80: the run took `run.abort` (an external input, whoever sent it). */
  aborted(): void {
    if (!this.live) return;
    this.flush();
    this.append({ k: "input", input: "abort" });
  }

  /**
   * R81, R90: a recording run whose executor re-requested a response after a crash (Restate): the
   * crashed attempt's provisional events from `fromSeq` on are retracted, journaled where it happens.
   */
  retract(fromSeq: number): void {
    if (this.live) this.retractFrom(fromSeq);
  }

  /** R81: the retraction, journaled (with the number it takes, so a replay checks it numbers alike), then pushed. */
  private retractFrom(fromSeq: number): void {
    const retraction = this.hooks.retraction?.(fromSeq);
    if (!retraction) return;
    this.flush();
    const seq = this.hooks.nextSeq?.();
    this.append({ k: "input", input: "retract", fromSeq, ...(seq !== undefined ? { seq } : {}) });
    this.runtime?.events.push(retraction);
  }

  /**
   * R81's write-ahead for what a job emits while it runs: called as the delivery of an event
   * begins, it writes the output not yet in a record (an `out` record), so nothing is delivered
   * that a resume or a replay would not produce. Several events queued behind a slow listener
   * share one record.
   */
  cover(): void {
    if (this.live && this.open) this.flush();
  }

  private expireGrace: (() => void) | undefined;
  /** R67: the grace ran out while the journal still answered: fired on going live unless the journal held it. */
  private graceDue = false;

  bindGrace(expire: () => void): void {
    this.expireGrace = expire;
  }

  graceExpired(): "live" | "answered" {
    if (!this.live) {
      this.graceDue = true;
      return "answered";
    }
    this.flush();
    this.append({ k: "input", input: "grace", at: this.runtime?.clock.now() ?? 0 });
    return "live";
  }

  /** The run ended with `messages` added. */
  end(messages: AgentMessage[]): void {
    if (this.mode === "resume" && this.records[this.cursor]?.k === "end") {
      // R84: the journal ended this run already (the process stopped before its quiet point): that
      // `end` is this one; the run is past its records, and its quiet point is saved next.
      this.cursor++;
      this.goLive();
      return;
    }
    // A resumed run whose last record ended it: nothing is left to replay.
    if (this.mode === "resume" && this.cursor === this.records.length) this.live = true;
    if (!this.live) return;
    this.flush();
    const e = this.hooks.eventCount?.();
    this.append({ k: "end", messages: jsonCopy(messages), ...(e !== undefined ? { e } : {}) });
  }

  private note(job: JournaledJob, item: JobOutput): void {
    if (!this.live) return;
    if (this.open && this.open.job !== job) this.flush();
    const open = (this.open ??= { job, out: [] as JobOutput[] });
    let chain = this.chains.get(job);
    if (!chain) this.chains.set(job, (chain = new Map<string, Json>()));
    open.out.push(encodeUpdate(item, chain));
  }

  private flush(kind: "out" | "response" = "out"): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    const base = { path: this.pathOf(open.job), digest: this.digestOf(open.job), out: open.out };
    if (kind === "response") this.append({ k: "response", job: "streamResponse", ...base, at: this.runtime?.clock.now() ?? 0 });
    else this.append({ k: "out", job: open.job.name, ...base });
  }

  private append(record: JournalRecord): void {
    if (!this.writer || this.failure) return;
    // R81: how far delivery had got (a resume without `after` delivers from just after it).
    if (record.k !== "input" && record.k !== "queue") {
      // (A record of this process's own: steps asked for from now on are new, R81.)
      this.retractPending = false;
      if (this.hooks.delivered && record.k !== "run") (record as { d?: number }).d = this.hooks.delivered();
    }
    try {
      this.lastSeq = this.writer.append(asJson(record));
    } catch (error) {
      // The store failed (full disk, a released writer): the run cannot stay durable; its host decides (it rejects).
      this.fail(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * R81: a resumed run retracts what the crashed process delivered of a response that did not end
   * (its `out` records), journaled so that a replay retracts it too, before the first step that
   * emits runs again. Steps asked for once this process appended a record are new.
   */
  private retractPending = false;

  /** A job about to run for real: R81's retraction, R81's replay rule for an `execute` whose intent had no outcome, then its own intent (R80). */
  private goingLive(job: JournaledJob): void {
    if (this.retractPending && EMITTING.has(job.name)) {
      this.retractPending = false;
      // Every event delivered is in a record: only a job that did not reply has something to take back, from its first.
      if (this.partialFrom.size > 0) {
        const fromSeq = Math.min(...this.partialFrom.values());
        this.partialFrom.clear();
        this.retractFrom(fromSeq);
      }
    }
    if (job.name !== "executeToolCall") return;
    const path = this.pathOf(job);
    if (this.openIntents.delete(path)) job.reissue = true;
    const { toolCall } = job.input as { toolCall: { id: string; name: string } };
    this.flush();
    this.append({ k: "intent", path, job: "executeToolCall", digest: this.digestOf(job), toolCallId: toolCall.id, toolName: toolCall.name });
  }

  private pump(): void {
    if (this.pumping || this.failure) return;
    this.pumping = true;
    try {
      while (this.cursor < this.records.length) {
        const record = this.records[this.cursor];
        if (record.k === "intent") {
          this.openIntents.add(record.path);
          this.cursor++;
          continue;
        }
        if (record.k === "input") {
          this.cursor++;
          if (record.input === "abort") {
            // As the run took it: its signal, then `run.abort` (each one journaled is delivered).
            this.runtime?.abortSignal(new Error("aborted (journaled)"));
            this.owner?.send({ type: "run.abort" });
          } else if (record.input === "decision") {
            // R82: the decision reaches the waiting call where the run took it.
            this.owner?.send(record.event);
          } else if (record.input === "retract") {
            // (It took back every partial response replayed before it: a later resume retracts from after it.)
            this.partialFrom.clear();
            const seq = this.hooks.nextSeq?.();
            if (record.seq !== undefined && seq !== undefined && record.seq !== seq) {
              this.fail(new JournalDivergedError(this.cursor - 1, `the retraction was numbered ${record.seq}, the replay numbers it ${seq}`));
              return;
            }
            // (A record of an older format without `fromSeq` retracted from its own number.)
            const retraction = this.hooks.retraction?.(record.fromSeq ?? seq ?? 0);
            if (retraction) this.runtime?.events.push(retraction);
          } else {
            this.graceDue = false;
            this.hooks.onTime?.(record.at);
            this.expireGrace?.();
          }
          continue;
        }
        // (The run's own `end`, journaled before a crash: `end()` takes it when the run gets there.)
        if (record.k === "end") {
          // A step asked for that the records before the run's end do not answer: the replay diverged (R83).
          if (this.waiting.some((job) => !job.cancelled)) this.fail(new JournalDivergedError(this.cursor, "the run asked for a step its journal does not hold before the run's end"));
          break;
        }
        if (record.k !== "job" && record.k !== "out" && record.k !== "response") {
          this.cursor++;
          continue;
        }
        const index = this.waiting.findIndex((job) => !job.cancelled && job.name === record.job && this.pathOf(job) === record.path);
        if (index < 0) break;
        const job = this.waiting[index];
        if (this.digestOf(job) !== record.digest) {
          this.fail(new JournalDivergedError(this.cursor, `${record.path} asked for ${record.job} with another input than the journal holds`));
          return;
        }
        this.cursor++;
        let chain = this.decoded.get(record.path);
        if (!chain) this.decoded.set(record.path, (chain = new Map<string, Json>()));
        const out = decodeOut(record.out ?? [], chain);
        if (record.k === "out" || record.k === "response") {
          if (record.k === "response") {
            this.partialFrom.delete(partialKey(record));
            const end = out[out.length - 1] as { type?: string; message?: AssistantMessage };
            if (end?.type === "message_end" && end.message) this.ended.set(record.path, { message: end.message, at: record.at });
          } else if (EMITTING.has(record.job) && !this.partialFrom.has(partialKey(record))) {
            this.partialFrom.set(partialKey(record), (this.hooks.eventCount?.() ?? 0) + 1);
          }
          this.replayOutput(job, out);
          continue;
        }
        this.ended.delete(record.path);
        this.partialFrom.delete(partialKey(record));
        this.decoded.delete(record.path);
        this.waiting.splice(index, 1);
        if (record.job === "executeToolCall") this.openIntents.delete(record.path);
        this.hooks.onTime?.(record.reply.at);
        this.replayOutput(job, out);
        job.replay([], reviveReply(record.job, record.reply));
      }
      for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i].cancelled) this.waiting.splice(i, 1);
      if (this.cursor === this.records.length && this.mode === "resume" && !this.live) {
        // R81: the records ran out: the run goes live; the jobs it waits for run for real.
        this.goLive();
        if (this.graceDue && this.graceExpired() === "live") this.expireGrace?.();
        const waiting = this.waiting.splice(0);
        // R81: a response whose record is durable but whose reply was lost ended: it is answered from
        // its record (journaled now), never requested again.
        const answered = waiting.filter((job) => job.name === "streamResponse" && this.ended.has(this.pathOf(job)));
        const rest = waiting.filter((job) => !answered.includes(job));
        for (const job of answered) {
          const { message, at } = this.ended.get(this.pathOf(job))!;
          this.ended.delete(this.pathOf(job));
          const reply = { type: "step.streamResponse.done", output: endedResponse(message), at } as StepReply;
          this.append({ k: "job", path: this.pathOf(job), job: job.name, digest: this.digestOf(job), reply: serializeReply(reply) });
          this.hooks.onTime?.(at);
          // (The pump runs outside any actor's step, so the run takes the reply within this call.)
          this.answering = true;
          try {
            job.replay([], reply);
          } finally {
            this.answering = false;
          }
        }
        // R81: the steps in flight at the crash are those asked for before this process appends a record of its own.
        this.retractPending = true;
        for (const job of rest) {
          this.goingLive(job);
          job.runLive();
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /** R81: from now on the run records: the host's inputs held meanwhile are appended, and the host told. */
  private goLive(): void {
    this.live = true;
    for (const record of this.heldInputs.splice(0)) this.append(record);
    this.hooks.onLive?.();
  }

  /**
   * R81: a job's events replayed with the flags they were first delivered with: what a job emits is
   * provisional, but a response's `message_end` (its record was written before it was delivered),
   * so a consumer given them after a crash can drop them at a retraction, and a replay flags alike.
   */
  private replayOutput(job: JournaledJob, out: ReturnType<typeof decodeOut>): void {
    for (const item of out) {
      this.replayingProvisional = !("sent" in item) && !(item.type === "message_end" && job.name === "streamResponse");
      try {
        job.replay([item], undefined);
      } finally {
        this.replayingProvisional = false;
      }
    }
  }

  private fail(error: Error): void {
    this.failure = error;
    this.hooks.onFailure?.(error);
  }

  private pathOf(job: JournaledJob): string {
    return job.requester === this.owner ? "run" : job.requester.id;
  }

  private digestOf(job: JournaledJob): string {
    let digest = this.digests.get(job);
    if (digest === undefined) this.digests.set(job, (digest = digestOf(job.input)));
    return digest;
  }
}
