/**
 * A session's stored events by sequence number (SPEC R81): what the journal's runs delivered,
 * rebuilt by replaying them offline (R83), numbered as they were. Only the runs whose events fall
 * in the range asked for are replayed (each `run` record keeps the session's event count before it).
 */
import type { AnyAgentEvent } from "../types.js";
import type { SessionReader, StoredRecord } from "../store/run-store.js";
import { isJournalRecord, type JournalRecord } from "./records.js";
import { replayRun } from "./replay.js";
import type { EventDelivery } from "./delivery.js";

/** One event of a session with its delivery (its sequence number; whether it was provisional). */
export interface SequencedDelivery {
  readonly event: AnyAgentEvent;
  readonly delivery: EventDelivery;
}

/**
 * The session's head: the event count through its last finished run, and where its unfinished run
 * (if the journal ends inside one) starts. Events after `finished` are the unfinished run's.
 */
export function sessionHead(reader: Pick<SessionReader, "snapshot" | "records">): number {
  // The quiet-point snapshot is saved at a run's `end` record: what follows it is short.
  const snapshot = reader.snapshot();
  const records = reader.records(snapshot ? Math.max(0, snapshot.atSeq - 1) : 0);
  for (let i = records.length - 1; i >= 0; i--) {
    const record: unknown = records[i].record;
    if (!isJournalRecord(record)) continue;
    if (record.k === "end" || record.k === "run") return record.e ?? 0;
  }
  return 0;
}

/**
 * The events numbered in (`after`, `through`] that the stored runs of `records` delivered, in
 * order, flagged as they were delivered: a response that a crash interrupted stays in the journal
 * with its provisional events, followed by the retraction that took them back.
 */
export async function storedEvents(records: readonly StoredRecord[], after: number, through: number): Promise<SequencedDelivery[]> {
  if (through <= after) return [];
  const plain: JournalRecord[] = records.map((entry): unknown => entry.record).filter(isJournalRecord);
  // Each run's first sequence number is 1 past its `e`; a run whose successor starts at or below `after` is skipped.
  const starts: number[] = [];
  for (let i = 0; i < plain.length; i++) if (plain[i].k === "run") starts.push(i);
  const wanted: JournalRecord[] = [];
  starts.forEach((start, n) => {
    const base = (plain[start] as { e?: number }).e ?? 0;
    const next = starts[n + 1];
    const nextBase = next === undefined ? Number.POSITIVE_INFINITY : ((plain[next] as { e?: number }).e ?? 0);
    if (nextBase <= after || base >= through) return;
    wanted.push(...plain.slice(start, next ?? plain.length));
  });
  const out: SequencedDelivery[] = [];
  for (const run of await replayRun(wanted)) {
    run.events.forEach((event, i) => {
      const seq = run.firstSeq + i;
      if (seq > after && seq <= through) out.push({ event, delivery: { seq, provisional: run.provisional[i] === true } });
    });
  }
  return out;
}

/**
 * R81: the events of a session's finished runs after `after`, read without its lock (another
 * process may hold it: a viewer). A run in progress elsewhere is not included until it ends: its
 * provisional events are in its process's memory only (subscribe there, `agent.subscribe(l, { after })`).
 * Poll again with the last `seq` you got to follow the session.
 */
export async function readSessionEvents(reader: Pick<SessionReader, "snapshot" | "records">, options: { after?: number } = {}): Promise<SequencedDelivery[]> {
  const after = options.after ?? 0;
  return storedEvents(reader.records(), after, sessionHead(reader));
}
