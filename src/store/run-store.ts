/**
 * The durable store's contract (SPEC R80–R84): per session, the run's snapshot at quiet points and
 * an append-only journal of every external input and effect outcome.
 *
 * Synchronous on purpose: the embedded engines (SQLite through `node:sqlite` or `better-sqlite3`,
 * and the in-memory store) are synchronous, so a journal record is written before the machine takes
 * its next step and records can never reorder. A networked engine belongs on a durable-execution
 * engine (R90), not behind this interface.
 *
 * The store knows nothing of the records' meaning: a record is plain JSON data, given its sequence
 * number (1, 2, … per session, no gaps) when appended.
 */

/** A JSON value (what a record, a snapshot or a session's metadata may hold). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One journal entry as stored: its sequence number in the session, and what was appended. */
export interface StoredRecord {
  readonly seq: number;
  readonly record: Json;
}

/** A snapshot saved at a quiet point, and how much of the journal it already contains. */
export interface StoredSnapshot {
  readonly snapshot: Json;
  /** The sequence number of the last record the snapshot reflects (0: none). */
  readonly atSeq: number;
}

export interface SessionInfo {
  readonly sessionId: string;
  /** Epoch ms (the store's clock) of creation and of the last write. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly records: number;
  /** Free-form JSON the app keeps with the session (e.g. a title, the working directory). */
  readonly meta: Json;
  /**
   * R84, in `listSessions()` only: the session's row is damaged (the SQLite store: its `meta` is not
   * JSON). This is the error its `info()` throws (`StoreCorruptError`, naming the session), and
   * `meta` is null, not what was stored. The session is listed so that one damaged row does not hide
   * the others (or itself: it can still be read, resumed or deleted).
   */
  readonly damaged?: Error;
}

export interface SizeReport {
  readonly sessions: number;
  readonly records: number;
  /** Bytes on disk (the database file and its WAL), or of the serialized data for the memory store. */
  readonly bytes: number;
}

export interface OpenSessionOptions {
  /** Create the session when it does not exist (default true); false: an unknown id is `UnknownSessionError`. */
  readonly create?: boolean;
  /** Stored when the session is created (default null); an existing session's meta changes only through `setMeta`. */
  readonly meta?: Json;
}

export interface RunStore {
  /**
   * Opens a session for writing: the caller becomes its single writer (R84) until `release()` or
   * its process ends; a second live writer gets `SessionLockedError` and nothing is written.
   * Keep the writer reachable until then: one the program drops may be closed when collected.
   */
  openSession(sessionId: string, options?: OpenSessionOptions): SessionWriter;
  /**
   * R84: who holds the session's writer lock now: `undefined` when nobody does (it can be opened),
   * else the holder's pid when the store knows it. Only a probe: the answer may change at once.
   */
  holderOf?(sessionId: string): { pid?: number } | undefined;
  /** Reads a session without taking its lock (for listing, export and replay). */
  readSession(sessionId: string): SessionReader;
  hasSession(sessionId: string): boolean;
  /** Sessions, most recently updated first. */
  listSessions(): SessionInfo[];
  /** Deletes a session (refused with `SessionLockedError` while another writer holds it). */
  deleteSession(sessionId: string): void;
  /** Deletes sessions last updated before `olderThan` (epoch ms); returns their ids. */
  prune(options: { olderThan: number }): string[];
  sizeReport(): SizeReport;
  /** Releases every lock this store holds and closes it. */
  close(): void;
}

export interface SessionReader {
  readonly sessionId: string;
  info(): SessionInfo;
  /** Records after `afterSeq` (default 0: all), in order. */
  records(afterSeq?: number): StoredRecord[];
  /** The latest saved snapshot, if any. */
  snapshot(): StoredSnapshot | undefined;
}

export interface SessionWriter extends SessionReader {
  /** Appends one record; returns its sequence number. Durable (per the store's mode) when it returns. */
  append(record: Json): number;
  /** Replaces the session's snapshot; `atSeq` is the last record it reflects. */
  saveSnapshot(snapshot: Json, atSeq: number): void;
  setMeta(meta: Json): void;
  /** Gives up the writer's lock; the writer is unusable afterwards. */
  release(): void;
}
