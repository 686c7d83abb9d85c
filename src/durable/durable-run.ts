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
import { JOURNAL_FORMAT, asJson, jsonCopy, type JournalRecord, type QueueRecord } from "./records.js";

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

  constructor(
    private readonly writer: SessionWriter,
    readonly journal: RunJournal,
    /** R81: the app's callback for the moment a resumed run goes live (`Agent.resume({ onLive })`). */
    private readonly onLive?: () => void,
  ) {}

  /** Events pushed while the run replayed its journal (marked when pushed: an async sink gets them later). */
  private readonly replayed = new WeakSet<object>();

  /** R81: an event the resumed run pushed while it replayed its journal (delivered before the crash). */
  isReplayed(event: object): boolean {
    return this.replayed.has(event);
  }

  /** R81: a resumed run's sink gets the events from the moment it goes live, none of those its journal replays. */
  liveOnly<E extends object>(sink: (event: E) => void | Promise<void>): (event: E) => void | Promise<void> {
    return (event) => (this.replayed.has(event) ? undefined : sink(event));
  }

  attach(runtime: RunRuntime, owner: AnyActorRef, signal: AbortSignal | undefined, tools: readonly AgentTool[], onFailure: (error: Error) => void): void {
    this.journal.attach(runtime, owner);
    bindJobJournal(runtime, this.journal);
    if (!this.journal.isLive) {
      // Marked as they enter the run's queue (the machine's own events and the journal's alike).
      const queue = runtime.events;
      const push = queue.push.bind(queue);
      queue.push = (event) => {
        if (!this.journal.isLive) this.replayed.add(event);
        return push(event);
      };
    }
    this.journal.hooks.onFailure = onFailure;
    this.journal.hooks.onLive = () => {
      // The tool set a hook installed came from the journal, not from the hook: resolve it again (R13).
      const toolSet = (owner.getSnapshot() as { context?: Partial<RunContext> }).context?.toolSet;
      if (toolSet) runtime.tools.restore(toolSet.tools.map((tool) => tool.decl.name), tools);
      if (this.pendingAbort) this.abort(runtime, signal?.reason);
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
      this.onLive();
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
  try {
    return new JournaledRun(writer, recordingJournal(writer, input, config));
  } catch (error) {
    writer.release();
    throw error;
  }
}

/** R80: a journal that records a new run into `writer`, its `run` record (the input) appended. */
export function recordingJournal(writer: JournalWriter, input: RunInput, config: Partial<AgentLoopConfig>): RunJournal {
  const journal = new RunJournal(writer, [], "record");
  const record: JournalRecord = { k: "run", v: JOURNAL_FORMAT, input: jsonCopy(input), settings: workerSettings(config) };
  journal.lastSeq = writer.append(asJson(record));
  return journal;
}

/** A resumed run (R81): its records after its `run` record answer its steps until they run out. */
export function resumedRun(writer: SessionWriter, records: readonly JournalRecord[], onLive?: () => void): JournaledRun {
  return new JournaledRun(writer, new RunJournal(writer, records, "resume"), onLive);
}

/** What the step worker reads outside the machine (R67's grace). */
export function workerSettings(config: Partial<AgentLoopConfig>): { abortGraceMs?: number } {
  return typeof config.abortGraceMs === "number" ? { abortGraceMs: config.abortGraceMs } : {};
}
