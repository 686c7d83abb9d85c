/**
 * The embedded durable RunStore on SQLite (R80, R84): one file per store, many sessions in it.
 *
 * Durability: WAL mode with `synchronous=NORMAL`. A transaction is in the WAL when it commits, so
 * it survives the process being killed (SIGKILL, a crash, OOM) at any point; it is fsynced only at
 * checkpoints, so a power loss or OS crash may lose the last transactions before one (never
 * corrupts the file, and never reorders: what survives is a prefix of the journal).
 */
import { linkSync, lstatSync, mkdirSync, readlinkSync, statSync, unlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SessionLockedError, StoreClosedError, StoreCorruptError, StoreInputError, StorePathError, UnknownSessionError, failureText } from "../errors.js";
import { rowChecksum } from "./checksum.js";
import { checkSeq, checkSessionId, decodeJson, encodeJson } from "../json-codec.js";
import type { Json, OpenSessionOptions, RunStore, SessionInfo, SessionReader, SessionWriter, SizeReport, StoredRecord, StoredSnapshot } from "../run-store.js";
import { type Connection, type Connector, type EngineLoaders, type Row, type SqliteEngineName, SQLITE_CANTOPEN, SQLITE_READONLY, loadEngine, sqliteCode } from "./engine.js";
import { checkFileHeader, guardCorruption, prepareSchema, realFile, rollbackQuietly, verifyExistingStore } from "./schema.js";
import { type SessionLock, acquireSessionLock } from "./session-lock.js";

export interface SqliteStoreOptions {
  /** "auto" (default): `node:sqlite` where Node has it (≥ 22.13), else `better-sqlite3`. */
  readonly engine?: SqliteEngineName | "auto";
  /** The store's clock for `createdAt`/`updatedAt` and `prune` (epoch ms; default `Date.now`). */
  readonly clock?: () => number;
  /**
   * How long a write waits for another process's write transaction on the same file (ms; default
   * 5000). Transactions are one append each, so a wait is short; a session's lock never waits.
   */
  readonly busyTimeoutMs?: number;
  /** @internal Replaces how the engines load (tests of the "no engine" error). */
  readonly engineLoaders?: EngineLoaders;
}

export interface SqliteRunStore extends RunStore {
  /** The database file (absolute). Lock files live beside it in `<path>.locks/`. */
  readonly path: string;
  readonly engine: SqliteEngineName;
}

/**
 * Opens (or creates) the store at `path`. Refuses, writing nothing: a corrupt or truncated file
 * or one that is not a session store (`StoreCorruptError`), a newer schema (`StoreSchemaError`), a
 * path that cannot hold a store (`StorePathError`: a directory, a file where a directory goes, no
 * permission, a read-only file system); migrates an older one. No engine: `StoreEngineUnavailableError`.
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteRunStore {
  if (typeof path !== "string" || path === "" || path === ":memory:") {
    throw new StoreInputError(`openSqliteStore needs a file path (got ${JSON.stringify(path)}); an in-memory store is createMemoryStore()`);
  }
  const file = resolve(path);
  const connect = loadEngine(options.engine ?? "auto", options.engineLoaders);
  try {
    return openStoreFile(file, connect, options);
  } catch (error) {
    throw pathProblem(file, error) ?? error;
  }
}

/** File-system errors of the path itself (Node's, or SQLite's "cannot open" and "read-only"), as `StorePathError`. */
const PATH_ERRNOS = new Set(["EISDIR", "ENOTDIR", "EEXIST", "EACCES", "EPERM", "ELOOP", "ENAMETOOLONG", "EROFS"]);
function pathProblem(file: string, error: unknown): StorePathError | undefined {
  const errno = (error as { code?: unknown } | null)?.code;
  const sqlite = sqliteCode(error);
  if (!(typeof errno === "string" && PATH_ERRNOS.has(errno)) && sqlite !== SQLITE_CANTOPEN && sqlite !== SQLITE_READONLY) return undefined;
  return new StorePathError(file, failureText(error));
}

function openStoreFile(file: string, connect: Connector, options: SqliteStoreOptions): SqliteRunStore {
  const busy = `PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`;
  refuseDanglingLink(file);
  if (checkFileHeader(file) === "new") createStoreFile(file, connect, busy);
  refuseDanglingLink(file);
  checkFileHeader(file);
  // R84: a WAL beside the file (its last writer died, or another process has the store open) is
  // read on a read-only connection: a read-write one's close would checkpoint it into the file,
  // rewriting a file the checks refuse.
  const walBeside = lstatSync(`${realFile(file)}-wal`, { throwIfNoEntry: false }) !== undefined;
  if (walBeside) {
    const reader = guardCorruption(file, () => connect(file, { readOnly: true }));
    try {
      reader.exec(busy);
      verifyExistingStore(reader, file);
    } finally {
      reader.close();
    }
  }
  const connection = guardCorruption(file, () => connect(file));
  try {
    // First: the checks' reads may wait on another process's WAL recovery or checkpoint too.
    connection.exec(busy);
    if (!walBeside) verifyExistingStore(connection, file);
    guardCorruption(file, () => {
      const mode = String(Object.values(connection.prepare("PRAGMA journal_mode = WAL").get() ?? {})[0]);
      if (mode !== "wal") throw new Error(`the store at ${file} could not switch to WAL mode (journal_mode ${mode})`);
      connection.exec("PRAGMA synchronous = NORMAL");
      prepareSchema(connection, file);
    });
    // Inside the try: a statement that does not prepare is refused with the connection closed, never leaked.
    return createSqliteStore(file, connection, connect, options.clock ?? Date.now);
  } catch (error) {
    connection.close();
    throw error;
  }
}

/**
 * R84: a symbolic link whose target is missing cannot hold a store. Left to the rest, it would look
 * like a missing path ("new"), the link would refuse the new store (EEXIST, taken for another
 * process winning), and SQLite's open, which follows the link with `O_CREAT`, would create an
 * empty file at the target: refused from then on as "an empty file".
 */
function refuseDanglingLink(file: string): void {
  if (!lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) return;
  // A link loop throws ELOOP here: a StorePathError too (pathProblem).
  if (statSync(file, { throwIfNoEntry: false }) === undefined) throw new StorePathError(file, `a symbolic link to ${readlinkSync(file)}, which does not exist (a dangling link)`);
}

/**
 * R84: a new store is made whole beside `file` and linked into place, so the path never holds an
 * empty or half-made store (an empty file there is refused, never initialized). Two processes
 * making it at once: the first link wins, the other opens that one.
 */
function createStoreFile(file: string, connect: Connector, busy: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.new`;
  try {
    const connection = connect(temporary);
    try {
      connection.exec(busy);
      // Before the first table: deleted sessions' pages can be given back (`incremental_vacuum`).
      connection.exec("PRAGMA auto_vacuum = INCREMENTAL");
      connection.prepare("PRAGMA journal_mode = WAL").get();
      prepareSchema(connection, temporary);
    } finally {
      connection.close();
    }
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } finally {
    for (const leftover of [temporary, `${temporary}-wal`, `${temporary}-shm`]) {
      try {
        unlinkSync(leftover);
      } catch {
        // Not there (closing checkpointed and removed the WAL).
      }
    }
  }
}

function createSqliteStore(path: string, db: Connection, connect: Connector, clock: () => number): SqliteRunStore {
  const sql = {
    begin: db.prepare("BEGIN IMMEDIATE"),
    commit: db.prepare("COMMIT"),
    session: db.prepare("SELECT id, created_at, updated_at, last_seq, meta FROM session_info WHERE id = ?"),
    sessions: db.prepare("SELECT id, created_at, updated_at, last_seq, meta FROM session_info ORDER BY updated_at DESC, row DESC"),
    insertSession: db.prepare("INSERT INTO sessions (id, created_at, updated_at, meta) VALUES (?, ?, ?, ?)"),
    // One statement, so one transaction (autocommit) that writes one row: see schema.ts.
    append: db.prepare("INSERT INTO records (session_id, seq, at, record, crc) VALUES (?, ?, ?, ?, ?)"),
    records: db.prepare("SELECT seq, record, crc FROM records WHERE session_id = ? AND seq > ? ORDER BY seq"),
    snapshot: db.prepare("SELECT at_seq, snapshot, crc FROM snapshots WHERE session_id = ?"),
    saveSnapshot: db.prepare("INSERT OR REPLACE INTO snapshots (session_id, at_seq, snapshot, crc) VALUES (?, ?, ?, ?)"),
    setMeta: db.prepare("UPDATE sessions SET meta = ?, updated_at = ? WHERE id = ?"),
    touch: db.prepare("UPDATE sessions SET updated_at = ? WHERE id = ?"),
    stale: db.prepare("SELECT id FROM session_info WHERE updated_at < ? ORDER BY updated_at"),
    deleteRecords: db.prepare("DELETE FROM records WHERE session_id = ?"),
    deleteSnapshot: db.prepare("DELETE FROM snapshots WHERE session_id = ?"),
    deleteSession: db.prepare("DELETE FROM sessions WHERE id = ?"),
    counts: db.prepare("SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM records) AS records"),
  };
  /** This store's live writers, by session: a second writer in this store is refused before SQLite is asked. */
  const writers = new Map<string, SessionLock>();
  let closed = false;

  const guard = <T>(work: () => T): T => {
    if (closed) throw new StoreClosedError(`the store at ${path} is closed`);
    return guardCorruption(path, work);
  };
  /** One write transaction of several statements: all of it, or nothing. */
  const transaction = (work: () => void) => {
    sql.begin.run();
    try {
      work();
      sql.commit.run();
    } catch (error) {
      rollbackQuietly(db);
      throw error;
    }
  };
  const find = (sessionId: string): Row => {
    const row = sql.session.get(sessionId);
    if (!row) throw new UnknownSessionError(sessionId);
    return row;
  };
  const deleteRows = (sessionId: string) =>
    transaction(() => {
      sql.deleteRecords.run(sessionId);
      sql.deleteSnapshot.run(sessionId);
      sql.deleteSession.run(sessionId);
    });
  /** Takes the session's lock for a deletion, or says it is held (by this store or another process). */
  const lockForDeletion = (sessionId: string): SessionLock => {
    if (writers.has(sessionId)) throw new SessionLockedError(sessionId);
    return acquireSessionLock(connect, path, sessionId);
  };

  const reader = (sessionId: string, checkUsable: () => void): SessionReader => ({
    sessionId,
    info: () =>
      guard(() => {
        checkUsable();
        return infoOf(find(sessionId), path);
      }),
    records: (afterSeq = 0) =>
      guard(() => {
        checkUsable();
        checkSeq(afterSeq, Number.MAX_SAFE_INTEGER, "afterSeq");
        const rows = sql.records.all(sessionId, afterSeq);
        if (rows.length === 0) find(sessionId);
        return rows.map((row, index): StoredRecord => {
          const seq = Number(row.seq);
          // A journal has no gaps: a missing number is damage (R84), never a shorter journal.
          if (seq !== afterSeq + index + 1) throw new StoreCorruptError(path, "is missing", { sessionId, seq: afterSeq + index + 1, what: "record" });
          return { seq, record: verified(path, sessionId, seq, row.record, row.crc, "record") };
        });
      }),
    snapshot: () =>
      guard((): StoredSnapshot | undefined => {
        checkUsable();
        const row = sql.snapshot.get(sessionId);
        if (!row) {
          find(sessionId);
          return undefined;
        }
        const atSeq = Number(row.at_seq);
        return { snapshot: verified(path, sessionId, atSeq, row.snapshot, row.crc, "snapshot"), atSeq };
      }),
  });

  return {
    path,
    engine: db.engine,
    openSession(sessionId: string, { create = true, meta = null }: OpenSessionOptions = {}): SessionWriter {
      return guard(() => {
        checkSessionId(sessionId);
        if (writers.has(sessionId)) throw new SessionLockedError(sessionId);
        const metaText = encodeJson(meta, "the session's meta");
        // The lock first: a refused writer has written nothing, not even the session's row.
        const lock = acquireSessionLock(connect, path, sessionId);
        let lastSeq: number;
        try {
          const row = sql.session.get(sessionId);
          if (row) lastSeq = Number(row.last_seq);
          else if (!create) throw new UnknownSessionError(sessionId);
          else {
            const now = clock();
            sql.insertSession.run(sessionId, now, now, metaText);
            lastSeq = 0;
          }
        } catch (error) {
          lock.release();
          throw error;
        }
        writers.set(sessionId, lock);
        let released = false;
        const checkUsable = () => {
          if (released) throw new StoreClosedError(`the writer of session ${sessionId} was released`);
        };
        return {
          ...reader(sessionId, checkUsable),
          append: (record: Json) =>
            guard(() => {
              checkUsable();
              const text = encodeJson(record, "a journal record");
              const seq = lastSeq + 1;
              sql.append.run(sessionId, seq, clock(), text, rowChecksum(sessionId, seq, text));
              lastSeq = seq;
              return seq;
            }),
          saveSnapshot: (snapshot: Json, atSeq: number) =>
            guard(() => {
              checkUsable();
              checkSeq(atSeq, lastSeq, "a snapshot's atSeq");
              const text = encodeJson(snapshot, "a snapshot");
              transaction(() => {
                sql.saveSnapshot.run(sessionId, atSeq, text, rowChecksum(sessionId, atSeq, text));
                sql.touch.run(clock(), sessionId);
              });
            }),
          setMeta: (newMeta: Json) =>
            guard(() => {
              checkUsable();
              sql.setMeta.run(encodeJson(newMeta, "the session's meta"), clock(), sessionId);
            }),
          release: () => {
            if (released) return;
            released = true;
            writers.delete(sessionId);
            lock.release();
          },
        };
      });
    },
    holderOf: (sessionId: string) =>
      guard(() => {
        checkSessionId(sessionId);
        if (writers.has(sessionId)) return { pid: process.pid };
        try {
          acquireSessionLock(connect, path, sessionId).release();
          return undefined;
        } catch (error) {
          if (error instanceof SessionLockedError) return error.pid !== undefined ? { pid: error.pid } : {};
          throw error;
        }
      }),
    readSession: (sessionId: string) =>
      guard(() => {
        checkSessionId(sessionId);
        find(sessionId);
        return reader(sessionId, () => {});
      }),
    hasSession: (sessionId: string) =>
      guard(() => {
        checkSessionId(sessionId);
        return sql.session.get(sessionId) !== undefined;
      }),
    listSessions: () => guard(() => sql.sessions.all().map((row) => listedInfo(row, path))),
    deleteSession: (sessionId: string) =>
      guard(() => {
        checkSessionId(sessionId);
        find(sessionId);
        const lock = lockForDeletion(sessionId);
        try {
          deleteRows(sessionId);
        } finally {
          lock.release();
        }
        db.exec("PRAGMA incremental_vacuum");
      }),
    prune: ({ olderThan }: { olderThan: number }) =>
      guard(() => {
        if (typeof olderThan !== "number" || Number.isNaN(olderThan)) throw new StoreInputError(`prune needs olderThan in epoch ms (got ${String(olderThan)})`);
        const pruned: string[] = [];
        for (const row of sql.stale.all(olderThan)) {
          const sessionId = String(row.id);
          let lock: SessionLock;
          try {
            lock = lockForDeletion(sessionId);
          } catch (error) {
            // A session with a live writer is in use, whatever its age: it stays.
            if (error instanceof SessionLockedError) continue;
            throw error;
          }
          try {
            deleteRows(sessionId);
            pruned.push(sessionId);
          } finally {
            lock.release();
          }
        }
        if (pruned.length > 0) db.exec("PRAGMA incremental_vacuum");
        return pruned;
      }),
    sizeReport: () =>
      guard((): SizeReport => {
        const counts = sql.counts.get() ?? {};
        const bytes = [path, `${path}-wal`].reduce((sum, file) => sum + (statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0);
        return { sessions: Number(counts.sessions), records: Number(counts.records), bytes };
      }),
    close: () => {
      if (closed) return;
      closed = true;
      for (const lock of writers.values()) lock.release();
      writers.clear();
      db.close();
    },
  };
}

/** R84: a row's JSON, if its checksum matches (else `StoreCorruptError` naming the session and number: never served). */
function verified(path: string, sessionId: string, seq: number, text: unknown, crc: unknown, what: "record" | "snapshot"): Json {
  if (typeof text !== "string" || rowChecksum(sessionId, seq, text) !== Number(crc)) {
    throw new StoreCorruptError(path, "does not match its checksum", { sessionId, seq, what });
  }
  try {
    return decodeJson(text);
  } catch (error) {
    throw new StoreCorruptError(path, `is not JSON (${error instanceof Error ? error.message : String(error)})`, { sessionId, seq, what });
  }
}

/**
 * A session's info; a `meta` that is not JSON is `StoreCorruptError` naming the session. (`meta` has
 * no checksum: schema 3's rows carry one for records and snapshots only, and adding one is a schema
 * change. A `meta` edited to other JSON is not detected.)
 */
function infoOf(row: Row, path: string): SessionInfo {
  let meta: Json;
  try {
    meta = decodeJson(String(row.meta));
  } catch (error) {
    throw new StoreCorruptError(path, `session ${JSON.stringify(String(row.id))}'s meta is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  return { sessionId: String(row.id), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at), records: Number(row.last_seq), meta };
}

/** R84: in a listing, one session's damaged row is that session's: listed with its error (`damaged`, `meta` null), the others as they are. */
function listedInfo(row: Row, path: string): SessionInfo {
  try {
    return infoOf(row, path);
  } catch (error) {
    if (!(error instanceof StoreCorruptError)) throw error;
    return { sessionId: String(row.id), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at), records: Number(row.last_seq), meta: null, damaged: error };
  }
}
