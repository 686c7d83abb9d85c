/**
 * A stored session as a trace (src/trace/FORMAT.md), so the run viewer opens it (`npm run view --
 * FILE`): the journal is replayed offline (R83) with the trace recorder on the replayed actors, so
 * the trace holds every AgentEvent and every state of the run and tool-call machines, as a trace
 * recorded live would. `t` is journaled time (each reply's clock reading), not replay time. The
 * loop's own events (R66) become notes.
 */
import type { StoredRecord } from "../store/run-store.js";
import type { AgentEvent } from "../types.js";
import { createTraceRecorder } from "../trace/recorder.js";
import { isRuntimeEvent } from "../loop/runtime-events.js";
import { replayRun } from "./replay.js";
import { isJournalRecord, type RunRecord } from "./records.js";

export interface TraceExportOptions {
  /** Receives each trace line (`\n`-terminated), in order. */
  write: (line: string) => void;
  cwd?: string;
  /** Values that must never appear in the trace (the recorder redacts them). */
  secrets?: readonly string[];
}

/** Writes the session's runs as one trace; resolves with the number of runs. */
export async function exportSessionTrace(records: readonly (StoredRecord | unknown)[], options: TraceExportOptions): Promise<number> {
  const plain = records.map((entry) => (typeof entry === "object" && entry !== null && "record" in entry && "seq" in entry ? (entry as StoredRecord).record : entry));
  const first = plain.find((record): record is RunRecord => isJournalRecord(record) && record.k === "run");
  let time = first?.input.startedAt ?? 0;
  const origin = time;
  const recorder = createTraceRecorder({
    write: options.write,
    now: () => time - origin,
    createdAt: new Date(origin),
    ...(first ? { model: { id: first.input.model.id, provider: first.input.model.provider } } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  const runs = await replayRun(plain, {
    inspect: recorder.inspect,
    onTime: (at) => void (time = Math.max(time, at)),
    onEvent: (event) => (isRuntimeEvent(event) ? recorder.note(`${event.type}: ${JSON.stringify(event).slice(0, 200)}`) : recorder.recordEvent(event as AgentEvent)),
  });
  return runs.length;
}
