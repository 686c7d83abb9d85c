/**
 * A run bound to a store (SPEC R80): its writer's lock for as long as it runs (R84), its journal
 * at the step worker, its abort journaled before the run sees it, and at its end the `end` record
 * and the snapshot of that quiet point (the transcript, at the last record's sequence number).
 */
import type { AnyActorRef } from "xstate";
import type { AgentLoopConfig, AgentMessage, AgentTool } from "../types.js";
import type { RunRuntime } from "../actors/run-runtime.js";
import type { RunInput } from "../../machines/run.types.js";
import type { RunContext } from "../../machines/run.types.js";
import type { RunStore, SessionWriter } from "../store/run-store.js";
import { bindJobJournal } from "../actors/steps-worker.js";
import { AgentInputError } from "../boundary/errors.js";
import { RunJournal, type JournalWriter } from "./run-journal.js";
import { JOURNAL_FORMAT, asJson, jsonCopy, isJournalRecord, type JournalRecord, type QueueRecord, type RunRecord } from "./records.js";
import { DeliveryLedger, type EventDelivery, type LedgerDelivery } from "./delivery.js";
import type { AnyAgentEvent } from "../types.js";

/** Where a durable run is journaled: a store and the session (one writer at a time, R84). */
export interface DurableOptions {
  store: RunStore;
  sessionId: string;
}

/** What a session's snapshot holds at a quiet point: the transcript once a run ended, or an Agent's idle session (R13's persisted snapshot). */
export type QuietPointSnapshot = { kind: "transcript"; messages: AgentMessage[] } | { kind: "agent"; snapshot: unknown };

export class JournaledRun {
  private done = false;
  private pendingAbort = false;
  /** `onLive` was called (once a run: when its journal ran out, or as it ended within it). */
  private notified = false;
  /** R81: every event's sequence number, and which ones this run's sink gets. */
  private readonly ledger: DeliveryLedger;

  constructor(
    private readonly writer: SessionWriter,
    readonly journal: RunJournal,
    /** The session's event count before this run, and the first sequence number the sink gets. */
    numbering: { base: number; deliverFrom: number },
    /** R81: the app's callback for the moment a resumed run goes live (`Agent.resume({ onLive })`). */
    private readonly onLive?: (live: LiveAt) => void,
  ) {
    this.ledger = new DeliveryLedger(numbering.base, numbering.deliverFrom);
  }

  /** R81: the event being delivered now: its sequence number, whether it is provisional, whether the sink skips it. */
  delivery(): LedgerDelivery {
    return this.ledger.current();
  }

  /**
   * R81: the run's sink, given each event's delivery as its second argument; a resumed run's sink
   * gets only the events from where delivery resumes (the consumer's `after`, else the first event
   * whose delivery is not known to have completed).
   */
  sinkOf<E extends AnyAgentEvent>(sink: (event: E, delivery: EventDelivery) => void | Promise<void>): (event: E) => void | Promise<void> {
    return (event) => {
      const { seq, provisional, skipped } = this.ledger.current();
      return skipped ? undefined : sink(event, { seq, provisional });
    };
  }

  attach(runtime: RunRuntime, owner: AnyActorRef, signal: AbortSignal | undefined, tools: readonly AgentTool[], onFailure: (error: Error) => void): void {
    this.journal.attach(runtime, owner);
    bindJobJournal(runtime, this.journal);
    numberEvents(runtime, this.journal, this.ledger);
    this.journal.hooks.onFailure = onFailure;
    this.journal.hooks.onLive = () => {
      // The tool set a hook installed came from the journal, not from the hook: resolve it again (R13).
      const toolSet = (owner.getSnapshot() as { context?: Partial<RunContext> }).context?.toolSet;
      if (toolSet) runtime.tools.restore(toolSet.tools.map((tool) => tool.decl.name), tools);
      if (this.pendingAbort) this.abort(runtime, signal?.reason);
      this.ledger.goneLive();
      this.notifyLive();
    };
    if (!signal) return;
    if (signal.aborted) this.abort(runtime, signal.reason);
    else signal.addEventListener("abort", () => this.abort(runtime, signal.reason), { once: true });
  }

  /** App code, called inside the journal's pump: a throw is reported and otherwise ignored, so the run goes on. */
  private notifyLive(): void {
    if (!this.onLive || this.notified) return;
    this.notified = true;
    try {
      this.onLive({ seq: this.ledger.nextSeq });
    } catch (error) {
      console.warn(`xstate-agent-loop: the resume's onLive callback threw (${error instanceof Error ? error.message : String(error)}); the run goes on`);
    }
  }

  /** The run's abort (R29); while a resumed run still replays its journal, once it goes live (the journal's order first). */
  abort(runtime: RunRuntime, reason?: unknown): void {
    if (this.done) return;
    if (!this.journal.isLive) {
      this.pendingAbort = true;
      return;
    }
    this.pendingAbort = false;
    // (The worker journals the `run.abort` this sends.)
    runtime.abort(reason);
  }

  started(): void {
    this.journal.started();
  }

  /** R80: a queue arrival of the Agent that hosts this run. */
  queued(record: QueueRecord): void {
    if (!this.done) this.journal.hostInput(record);
  }

  /** The run ended: its `end` record, the quiet point's snapshot (the transcript), and the lock given up. */
  end(messages: AgentMessage[], transcript: AgentMessage[]): void {
    this.ended(messages);
    this.close({ kind: "transcript", messages: jsonCopy(transcript) });
  }

  /** The run ended (its `end` record); the writer stays open for `close`. */
  ended(messages: AgentMessage[]): void {
    if (this.done) return;
    this.journal.end(messages);
    // A resumed run that ended within its journal is past it now.
    if (this.journal.isLive) this.notifyLive();
  }

  /** Saves the quiet point's snapshot (when the run ended live) and gives up the lock. */
  close(snapshot: QuietPointSnapshot): void {
    if (this.done) return;
    this.done = true;
    try {
      // A failed journal has no quiet point to save: its last records are missing.
      if (this.journal.isLive && !this.journal.failure) this.writer.saveSnapshot(snapshot as never, this.journal.lastSeq);
    } finally {
      this.writer.release();
    }
  }

  /** The run stopped without ending (its sink threw, or it diverged): the journal stays resumable. */
  abandon(): void {
    if (this.done) return;
    this.done = true;
    this.writer.release();
  }
}

/**
 * R81: `ledger` numbers the run's events; the journal learns how far delivery got and how to
 * retract (a replay's journal too). `paced: false` for a journal whose records must be the same on
 * every attempt (Restate's): it notes no `d` and writes no record at a delivery, both of which
 * depend on the sink's pace (Restate's event log is durable before a client reads it).
 */
export function numberEvents(runtime: RunRuntime, journal: RunJournal, ledger: DeliveryLedger, paced = true): void {
  ledger.wrap(runtime.events, () => journal.uncovered, paced ? () => journal.cover() : undefined);
  if (paced) journal.hooks.delivered = () => ledger.deliveredSeq;
  journal.hooks.eventCount = () => ledger.lastSeq;
  journal.hooks.nextSeq = () => ledger.nextSeq;
  // The retracted events keep their numbers; the retraction is numbered next, as any event.
  journal.hooks.retraction = (fromSeq) => ({ type: "message_discarded", reason: "interrupted", fromSeq });
}

/** `durable` as given by an app: a store with the RunStore methods and a non-empty session id, else an `AgentInputError`. */
export function checkDurable(durable: unknown, field: string): asserts durable is DurableOptions {
  const candidate = durable as Partial<DurableOptions> | null;
  if (typeof candidate !== "object" || candidate === null) throw new AgentInputError(field, `${field} must be { store, sessionId }`);
  const store = candidate.store as Partial<RunStore> | undefined;
  if (!store || typeof store.openSession !== "function" || typeof store.readSession !== "function") {
    throw new AgentInputError(`${field}.store`, `${field}.store must be a RunStore (openSession, readSession, …)`);
  }
  if (typeof candidate.sessionId !== "string" || candidate.sessionId.length === 0) throw new AgentInputError(`${field}.sessionId`, `${field}.sessionId must be a non-empty string`);
}

/** R80: a new durable run: takes the session's lock, journals the run's input, records from its first step. */
export function journalRun(durable: DurableOptions, input: RunInput, config: AgentLoopConfig): JournaledRun {
  checkDurable(durable, "durable");
  const writer = durable.store.openSession(durable.sessionId);
  return newJournaledRun(writer, input, config);
}

/** R80: a new durable run on `writer` (released if the run cannot start). */
export function newJournaledRun(writer: SessionWriter, input: RunInput, config: Partial<AgentLoopConfig>): JournaledRun {
  try {
    const base = sessionEventCount(writer);
    return new JournaledRun(writer, recordingJournal(writer, input, config, base), { base, deliverFrom: base + 1 });
  } catch (error) {
    writer.release();
    throw error;
  }
}

/** R80: a journal that records a new run into `writer`, its `run` record (the input, and the session's event count before it) appended. */
export function recordingJournal(writer: JournalWriter, input: RunInput, config: Partial<AgentLoopConfig>, base = 0): RunJournal {
  const journal = new RunJournal(writer, [], "record");
  const record: JournalRecord = { k: "run", v: JOURNAL_FORMAT, input: jsonCopy(input), settings: workerSettings(config), ...(base > 0 ? { e: base } : {}) };
  journal.lastSeq = writer.append(asJson(record));
  return journal;
}

/**
 * R81: the session's event count so far: the last run's `end` record keeps it. It was saved just
 * before the session's quiet-point snapshot, so only the records from there are read.
 */
export function sessionEventCount(reader: Pick<SessionWriter, "snapshot" | "records">): number {
  const snapshot = reader.snapshot();
  const records = reader.records(snapshot ? Math.max(0, snapshot.atSeq - 1) : 0);
  for (let i = records.length - 1; i >= 0; i--) {
    const record: unknown = records[i].record;
    if (isJournalRecord(record) && record.k === "end") return record.e ?? 0;
  }
  return 0;
}

/** Where a resumed run's numbering starts, and where its delivery resumes (R81). */
export interface ResumePoint {
  /**
   * The consumer's last processed sequence number: every later event is delivered exactly once.
   * `"journal"`: the consumer rebuilt its view from the stored session; it gets what follows the
   * journal (from the moment the run goes live, a retraction included).
   */
  after?: number | "journal";
  onLive?: (live: LiveAt) => void;
}

/** R81: where a resumed run went live: `seq` is the number of its first live event (those below it were replayed from the journal). */
export interface LiveAt {
  readonly seq: number;
}

/** A session's last run whose quiet point was not saved (`unfinishedRun` in resume.ts finds it). */
export interface UnfinishedRun {
  run: RunRecord;
  /** The records after its `run` record. */
  after: JournalRecord[];
  /** The sequence number of the last record read: where the quiet point of a run that ends within its records is saved. */
  throughSeq: number;
}

/**
 * A resumed run (R81): its records after its `run` record answer its steps until they run out.
 * Delivery resumes after `after`, or else after the last sequence number the journal knows was
 * delivered (each record notes it): at least once from there.
 */
export function resumedRun(writer: SessionWriter, { run, after: records, throughSeq }: UnfinishedRun, point: ResumePoint = {}): JournaledRun {
  const base = run.e ?? 0;
  let delivered = base;
  for (const record of records) {
    const d = (record as { d?: number }).d;
    if (typeof d === "number" && d > delivered) delivered = d;
  }
  const journal = new RunJournal(writer, records, "resume", throughSeq);
  if (point.after === "journal") return new JournaledRun(writer, journal, { base, deliverFrom: Number.POSITIVE_INFINITY }, point.onLive);
  const after = typeof point.after === "number" && Number.isInteger(point.after) && point.after >= 0 ? point.after : delivered;
  return new JournaledRun(writer, journal, { base, deliverFrom: Math.max(base, after) + 1 }, point.onLive);
}

/** What the step worker reads outside the machine (R67's grace). */
export function workerSettings(config: Partial<AgentLoopConfig>): { abortGraceMs?: number } {
  return typeof config.abortGraceMs === "number" ? { abortGraceMs: config.abortGraceMs } : {};
}
