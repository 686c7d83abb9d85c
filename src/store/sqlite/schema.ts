/**
 * The store file's format: what makes a file a session store, its schema version
 * (`PRAGMA user_version`) and the migrations from older versions. Every check runs before
 * anything is written, from the file's bytes first, then on a connection that only reads: a file
 * refused (corrupt, truncated, not a store, a newer schema) is left byte for byte as it was (R84).
 */
import { openSync, readSync, closeSync, realpathSync, statSync } from "node:fs";
import { StoreCorruptError, StoreSchemaError } from "../errors.js";
import { type Connection, SQLITE_CORRUPT, SQLITE_NOTADB, sqliteCode } from "./engine.js";
import { rowChecksum } from "./checksum.js";
import { committedPageOne } from "./wal.js";

/** The schema this build writes. */
export const SCHEMA_VERSION = 3;
/** `PRAGMA application_id` of a session store ("xals"): a SQLite file without it is some other program's. */
export const APPLICATION_ID = 0x78616c73;

const SQLITE_MAGIC = "SQLite format 3\0";

/**
 * What a session's info reads: its row, and its journal's last record (seq and time). An append is
 * one row in `records` and nothing else (the session's row is not touched); the session's record
 * count and last-write time come from the (session, seq) index (`max(seq)` is one lookup).
 */
const SESSION_INFO_VIEW = `
  CREATE VIEW session_info AS
    SELECT s.id, s.created_at, max(s.updated_at, COALESCE(last.at, 0)) AS updated_at, COALESCE(last.seq, 0) AS last_seq, s.meta, s.rowid AS row
    FROM sessions AS s
    LEFT JOIN records AS last ON last.session_id = s.id AND last.seq = (SELECT max(seq) FROM records WHERE session_id = s.id);
`;

/**
 * Schema 2. Records are unique by (session, seq): appends are ordered and gap-free by construction;
 * each keeps the store's clock at its append (`at`). A rowid table: an append adds its row at the
 * table's end and a small entry to the (session, seq) index, where a table keyed by (session, seq)
 * would put a record of up to a few KB in the middle of its tree (about 30 % more per append,
 * measured with random session ids). `sessions.updated_at` is the last write to the session's own
 * row (creation, meta, snapshot). No index on `updated_at`: listing or pruning scans a table of one
 * row per session.
 */
const CREATE_RECORDS_V2 = (name: string) => `
  CREATE TABLE ${name} (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (session_id, seq)
  );
`;

/**
 * Schema 3 (R84): every record and snapshot carries `crc`, the CRC-32 of its session id, sequence
 * number (a snapshot's `at_seq`) and JSON text (sqlite/checksum.ts), verified on every read.
 */
const CREATE_V3 = `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    meta TEXT NOT NULL DEFAULT 'null'
  );
  CREATE TABLE records (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    record TEXT NOT NULL,
    crc INTEGER NOT NULL,
    UNIQUE (session_id, seq)
  );
  CREATE TABLE snapshots (
    session_id TEXT PRIMARY KEY,
    at_seq INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    crc INTEGER NOT NULL
  ) WITHOUT ROWID;
`;
/** Schema 2 (for the migration tests: a store written by the builds before checksums). */
export const CREATE_V2 = `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    meta TEXT NOT NULL DEFAULT 'null'
  );
  ${CREATE_RECORDS_V2("records")}
  CREATE TABLE snapshots (
    session_id TEXT PRIMARY KEY,
    at_seq INTEGER NOT NULL,
    snapshot TEXT NOT NULL
  ) WITHOUT ROWID;
  ${SESSION_INFO_VIEW}
  PRAGMA application_id = ${APPLICATION_ID};
  PRAGMA user_version = 2;
`;

/**
 * `MIGRATIONS[v]` upgrades schema v to v + 1, inside the opening transaction.
 * - Schema 0 is the draft layout: the snapshot inline in the session row, no `last_seq`, no `meta`.
 * - Schema 1 kept `sessions.last_seq` and `updated_at` current on every append, and keyed records
 *   by (session, seq) (more pages written per append); its records get the session's `updated_at`
 *   as their time.
 */
const MIGRATIONS: readonly (string | ((connection: Connection) => void))[] = [
  `
  CREATE TABLE snapshots (
    session_id TEXT PRIMARY KEY,
    at_seq INTEGER NOT NULL,
    snapshot TEXT NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO snapshots (session_id, at_seq, snapshot) SELECT id, snapshot_seq, snapshot FROM sessions WHERE snapshot IS NOT NULL;
  ALTER TABLE sessions DROP COLUMN snapshot;
  ALTER TABLE sessions DROP COLUMN snapshot_seq;
  ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN meta TEXT NOT NULL DEFAULT 'null';
  UPDATE sessions SET last_seq = COALESCE((SELECT MAX(seq) FROM records WHERE records.session_id = sessions.id), 0);
  `,
  `
  ${CREATE_RECORDS_V2("records_v2")}
  INSERT INTO records_v2 (session_id, seq, at, record)
    SELECT r.session_id, r.seq, COALESCE(s.updated_at, 0), r.record FROM records AS r LEFT JOIN sessions AS s ON s.id = r.session_id ORDER BY r.session_id, r.seq;
  DROP TABLE records;
  ALTER TABLE records_v2 RENAME TO records;
  ALTER TABLE sessions DROP COLUMN last_seq;
  ${SESSION_INFO_VIEW}
  `,
  // Schema 3 (R84): the checksums of the rows already there, computed from what they hold now.
  (connection) => {
    connection.exec("ALTER TABLE records ADD COLUMN crc INTEGER NOT NULL DEFAULT 0; ALTER TABLE snapshots ADD COLUMN crc INTEGER NOT NULL DEFAULT 0");
    const setRecord = connection.prepare("UPDATE records SET crc = ? WHERE id = ?");
    for (const row of connection.prepare("SELECT id, session_id, seq, record FROM records").all()) {
      setRecord.run(rowChecksum(String(row.session_id), Number(row.seq), String(row.record)), row.id);
    }
    const setSnapshot = connection.prepare("UPDATE snapshots SET crc = ? WHERE session_id = ?");
    for (const row of connection.prepare("SELECT session_id, at_seq, snapshot FROM snapshots").all()) {
      setSnapshot.run(rowChecksum(String(row.session_id), Number(row.at_seq), String(row.snapshot)), row.session_id);
    }
  },
];

/**
 * R84: the tables and views (with their columns) each schema version has, and nothing else (no
 * index or trigger of ours: the unique constraints' indexes are SQLite's own, `sqlite_autoindex_*`).
 * A file whose `user_version` says one thing and whose schema says another is refused
 * (`StoreSchemaError`) before anything runs on it: a missing view would otherwise fail the first
 * read as a raw SQLite error, and a trigger someone added would run on our writes.
 */
const SHAPES: Record<number, Record<string, string[]>> = {
  0: { "table sessions": ["id", "created_at", "updated_at", "snapshot", "snapshot_seq"], "table records": ["session_id", "seq", "record"] },
  1: {
    "table sessions": ["id", "created_at", "updated_at", "last_seq", "meta"],
    "table records": ["session_id", "seq", "record"],
    "table snapshots": ["session_id", "at_seq", "snapshot"],
  },
  2: {
    "table sessions": ["id", "created_at", "updated_at", "meta"],
    "table records": ["id", "session_id", "seq", "at", "record"],
    "table snapshots": ["session_id", "at_seq", "snapshot"],
    "view session_info": ["id", "created_at", "updated_at", "last_seq", "meta", "row"],
  },
  3: {
    "table sessions": ["id", "created_at", "updated_at", "meta"],
    "table records": ["id", "session_id", "seq", "at", "record", "crc"],
    "table snapshots": ["session_id", "at_seq", "snapshot", "crc"],
    "view session_info": ["id", "created_at", "updated_at", "last_seq", "meta", "row"],
  },
};

function checkShape(connection: Connection, path: string, version: number): void {
  const expected = SHAPES[version];
  if (!expected) return;
  const objects = connection
    .prepare("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all()
    .map((row) => ({ type: String(row.type), name: String(row.name) }));
  const found: Record<string, string[]> = {};
  for (const { type, name } of objects) found[`${type} ${name}`] = type === "table" || type === "view" ? columnsOf(connection, name) : [];
  const describe = (shape: Record<string, string[]>) =>
    Object.keys(shape)
      .sort()
      .map((object) => (object.startsWith("table ") || object.startsWith("view ") ? `${object}(${shape[object].join(", ")})` : object))
      .join(", ");
  if (describe(found) !== describe(expected)) throw new StoreSchemaError(path, version, SCHEMA_VERSION, `its schema is ${describe(found) || "empty"}`);
}

/** A table's or view's columns; a view whose query no longer compiles (a column it reads is gone) has none. */
function columnsOf(connection: Connection, name: string): string[] {
  try {
    return connection.prepare("SELECT name FROM pragma_table_info(?)").all(name).map((row) => String(row.name));
  } catch (error) {
    return [`unreadable: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/** Schema 1 (for the migration tests: a store written by the builds before schema 2). */
export const CREATE_V1 = `
  CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0, meta TEXT NOT NULL DEFAULT 'null');
  CREATE TABLE records (session_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
  CREATE TABLE snapshots (session_id TEXT PRIMARY KEY, at_seq INTEGER NOT NULL, snapshot TEXT NOT NULL) WITHOUT ROWID;
  PRAGMA application_id = ${APPLICATION_ID};
  PRAGMA user_version = 1;
`;

/** The draft layout of schema 0 (for the migration tests: a store written before versioning). */
export const CREATE_V0 = `
  CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, snapshot TEXT, snapshot_seq INTEGER);
  CREATE TABLE records (session_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session_id, seq));
  PRAGMA application_id = ${APPLICATION_ID};
`;

/**
 * The file's state as far as its bytes tell, before SQLite opens it: absent (a new store), or a
 * SQLite database whose header is whole, of a session store of a known schema. Anything else is
 * refused here. The store's facts (`application_id`, `user_version`, whether it has tables) are
 * those of its current page 1: the last one its WAL committed when a WAL is beside it (a writer
 * that died leaves its last transactions there), else the file's. Refused here, a file is refused
 * before any SQLite connection, which would rebuild the WAL's index (`-shm`) to read it.
 */
export function checkFileHeader(path: string): "new" | "sqlite" {
  const size = statSync(path, { throwIfNoEntry: false })?.size;
  if (size === undefined) return "new";
  // R84: only a missing path makes a store (a new store's file never exists empty: see createStoreFile).
  if (size === 0) throw new StoreCorruptError(path, "an empty file, not a session store; only a missing path creates a store");
  if (size < 100) throw new StoreCorruptError(path, `${size} bytes, shorter than a SQLite header`);
  // The header and page 1's b-tree header (its page type and cell count: whether the schema is empty).
  const header = Buffer.alloc(108);
  const fd = openSync(path, "r");
  try {
    readSync(fd, header, 0, 108, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1", 0, 16) !== SQLITE_MAGIC) throw new StoreCorruptError(path, "not a SQLite database: the header is wrong");
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) throw new StoreCorruptError(path, `invalid page size ${rawPageSize}`);
  if (size % pageSize !== 0) throw new StoreCorruptError(path, `${size} bytes is not a whole number of ${pageSize}-byte pages (truncated)`);
  // The header's fixed fields, as SQLite itself checks them (a damaged one is "unsupported file format").
  const fixed = header[18] >= 1 && header[18] <= 2 && header[19] >= 1 && header[19] <= 2 && header[21] === 64 && header[22] === 32 && header[23] === 32;
  const schemaFormat = header.readUInt32BE(44);
  if (!fixed || schemaFormat > 4 || header.readUInt32BE(56) > 3) throw new StoreCorruptError(path, "the SQLite header's fixed fields are damaged");
  // The page count in the header is valid when "version-valid-for" equals the change counter.
  const pages = header.readUInt32BE(28);
  if (header.readUInt32BE(92) === header.readUInt32BE(24) && size < pages * pageSize) {
    throw new StoreCorruptError(path, `${size} bytes, the header says ${pages * pageSize} (truncated)`);
  }
  // user_version and application_id live in the header too: a newer or foreign file is refused before SQLite opens it.
  // (SQLite names the WAL after the file a link points to.)
  const page = committedPageOne(`${realFile(path)}-wal`) ?? header;
  checkFacts(path, { applicationId: page.readInt32BE(68), version: page.readInt32BE(60), tables: schemaIsEmpty(page) ? 0 : 1 });
  return "sqlite";
}

/** Page 1 holds the schema table's root: a leaf (0x0d) with no cells is a database with no tables (nor anything else). */
const schemaIsEmpty = (page: Buffer): boolean => page[100] === 0x0d && page.readUInt16BE(103) === 0;

/** Runs `work`, turning SQLite's corruption errors into `StoreCorruptError`. */
export function guardCorruption<T>(path: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    const code = sqliteCode(error);
    const message = error instanceof Error ? error.message : String(error);
    if (code === SQLITE_CORRUPT || code === SQLITE_NOTADB || /unsupported file format|malformed/i.test(message)) throw new StoreCorruptError(path, message);
    throw error;
  }
}

interface FileFacts {
  readonly applicationId: number;
  readonly version: number;
  readonly tables: number;
}

function readFacts(connection: Connection): FileFacts {
  const number = (sql: string) => Number(Object.values(connection.prepare(sql).get() ?? {})[0] ?? 0);
  return {
    applicationId: number("PRAGMA application_id"),
    version: number("PRAGMA user_version"),
    tables: number("SELECT count(*) FROM sqlite_schema WHERE type = 'table'"),
  };
}

/** Refuses a file that is not a store of a schema this build reads. */
function checkFacts(path: string, facts: FileFacts, allowFresh = false): void {
  const fresh = facts.applicationId === 0 && facts.tables === 0;
  if (fresh && !allowFresh) throw new StoreCorruptError(path, "a SQLite database with no tables, not a session store; only a missing path creates a store");
  if (!fresh && facts.applicationId !== APPLICATION_ID) {
    throw new StoreCorruptError(path, `a SQLite database, but not a session store (application_id ${facts.applicationId})`);
  }
  if (facts.version > SCHEMA_VERSION) throw new StoreSchemaError(path, facts.version, SCHEMA_VERSION);
  // A store's user_version is one of its schemas, 0 to SCHEMA_VERSION: anything below is a damaged
  // header (a flipped sign bit), not a schema to migrate from.
  if (!fresh && facts.version < 0) throw new StoreCorruptError(path, `user_version ${facts.version} is no schema a session store was ever written with`);
}

/**
 * Checks an existing file before anything is written: every page readable and every index matching
 * its table (`PRAGMA integrity_check`), a session store, a schema this build reads. Only reads.
 * With no WAL beside the file, `connection` is the store's own (its close removes the `-wal`/`-shm`
 * it made for the reads, with nothing to checkpoint); with a WAL there, a read-only one, which
 * cannot checkpoint it into the file (sqlite-store.ts).
 */
export function verifyExistingStore(connection: Connection, path: string): void {
  guardCorruption(path, () => {
    // integrity_check, not quick_check: an index page damaged so that a range scan ends early would
    // otherwise serve a journal cut short as whole (R84: damage is detected, never served).
    const check = connection.prepare("PRAGMA integrity_check(20)").all();
    const verdict = check.map((row) => String(Object.values(row)[0])).join("; ");
    if (verdict !== "ok") throw new StoreCorruptError(path, `integrity_check: ${verdict.slice(0, 200)}`);
    const facts = readFacts(connection);
    checkFacts(path, facts);
    checkShape(connection, path, facts.version);
  });
}

/**
 * Brings the open (read-write, WAL) connection to `SCHEMA_VERSION`: creates a new store or runs
 * the migrations, in one immediate transaction (two processes opening a new store at once: the
 * second sees the first's tables and does nothing).
 */
export function prepareSchema(connection: Connection, path: string): void {
  connection.exec("BEGIN IMMEDIATE");
  try {
    const facts = readFacts(connection);
    checkFacts(path, facts, true);
    if (facts.tables === 0) {
      connection.exec(CREATE_V3);
      connection.exec(SESSION_INFO_VIEW);
    } else {
      for (let version = facts.version; version < SCHEMA_VERSION; version++) {
        const migration = MIGRATIONS[version];
        if (typeof migration === "string") connection.exec(migration);
        else migration(connection);
      }
    }
    if (facts.tables === 0 || facts.version < SCHEMA_VERSION) {
      connection.exec(`PRAGMA application_id = ${APPLICATION_ID}; PRAGMA user_version = ${SCHEMA_VERSION}`);
    }
    connection.exec("COMMIT");
  } catch (error) {
    rollbackQuietly(connection);
    throw error;
  }
}

/** Rolls back if a transaction is still open (SQLite may already have rolled it back on the error being handled). */
export function rollbackQuietly(connection: Connection): void {
  try {
    connection.exec("ROLLBACK");
  } catch {
    // No transaction was active: nothing to undo.
  }
}

/** The file `path` names, links followed (SQLite puts its `-wal` and `-shm` beside that file); `path` itself when it cannot be resolved. */
export function realFile(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
