/**
 * The records of the trace format, version 1 (src/trace/FORMAT.md): a JSON Lines file whose first
 * line is a header, then agent events, state values from XState inspection, and notes. Node-free.
 */
import type { JsonObject, JsonValue } from "../types.js";

export const TRACE_FORMAT = "xstate-agent-loop/trace";
export const TRACE_VERSION = 1;

interface RecordBase {
  /** 0, 1, 2, … in file order. */
  seq: number;
  /** Milliseconds since the trace started, from a monotonic clock (fractional). */
  t: number;
}

/** Always the first line. */
export interface TraceHeader extends RecordBase {
  type: "trace";
  version: typeof TRACE_VERSION;
  format: typeof TRACE_FORMAT;
  /** ISO 8601 wall-clock time the trace started. */
  createdAt: string;
  model: { id: string; provider: string } | null;
  cwd: string | null;
}

/** One `AgentEvent`, reduced (see `reduceEventForTrace`). */
export interface TraceEventRecord extends RecordBase {
  type: "event";
  /** Runs are counted in the session from 1. */
  run: number;
  event: JsonObject & { type: string };
}

/** The state value of the run machine or of a tool-call actor after a transition. */
export interface TraceStateRecord extends RecordBase {
  type: "state";
  run: number;
  /** `"run"`, `"tool:<index in batch>"` or `"session"`. */
  actor: string;
  /** The XState `StateValue`. */
  value: JsonValue;
  status: "active" | "done" | "error" | "stopped";
  /** The type of the event that caused the snapshot. */
  cause: string;
}

/** A free-form marker (abort requested, steering queued, …). */
export interface TraceNoteRecord extends RecordBase {
  type: "note";
  run: number;
  text: string;
}

export type TraceRecord = TraceHeader | TraceEventRecord | TraceStateRecord | TraceNoteRecord;
