/**
 * The two SQLite engines behind one small synchronous interface: Node's built-in `node:sqlite`
 * (Node ≥ 22.13, unflagged) and the optional peer `better-sqlite3` 12.x (Node 20). Both are loaded
 * lazily and synchronously, so importing `xstate-agent-loop/sqlite` never fails for want of one.
 */
import { createRequire } from "node:module";
import { StoreEngineUnavailableError } from "../errors.js";

export type SqliteEngineName = "node:sqlite" | "better-sqlite3";

export type SqlValue = null | number | bigint | string | Uint8Array;
export type Row = Record<string, SqlValue>;

/** The statement surface both engines share (positional `?` parameters). */
export interface Statement {
  run(...params: SqlValue[]): unknown;
  get(...params: SqlValue[]): Row | undefined;
  all(...params: SqlValue[]): Row[];
}

export interface Connection {
  readonly engine: SqliteEngineName;
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

/**
 * Opens a connection on `path` with the engine: read-write (creating the file), or with `readOnly`
 * one that never writes the database or its WAL (no checkpoint on close; SQLite may still create
 * or rebuild the `-shm` index to read a WAL).
 */
export type Connector = (path: string, options?: { readonly readOnly?: boolean }) => Connection;

interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => Omit<Connection, "engine">;
}
type BetterSqliteConstructor = new (path: string, options?: { readonly?: boolean }) => Omit<Connection, "engine">;

/** How the engines are found; tests replace them to see the "no engine" error. */
export interface EngineLoaders {
  readonly nodeSqlite: () => NodeSqliteModule | undefined;
  readonly betterSqlite: () => BetterSqliteConstructor;
}

const defaultLoaders: EngineLoaders = {
  nodeSqlite: () => {
    // Node 22.5–22.12 has the module only behind --experimental-sqlite; getBuiltinModule then throws or returns undefined.
    try {
      return process.getBuiltinModule?.("node:sqlite") as NodeSqliteModule | undefined;
    } catch {
      return undefined;
    }
  },
  betterSqlite: () => createRequire(import.meta.url)("better-sqlite3") as BetterSqliteConstructor,
};

/**
 * The connector for the preferred engine; "auto" takes `node:sqlite` where it exists, else
 * `better-sqlite3`. Neither: `StoreEngineUnavailableError`.
 */
export function loadEngine(preference: SqliteEngineName | "auto" = "auto", loaders: EngineLoaders = defaultLoaders): Connector {
  const failures: string[] = [];
  const tried: SqliteEngineName[] = [];
  if (preference !== "better-sqlite3") {
    tried.push("node:sqlite");
    const module = loaders.nodeSqlite();
    if (module?.DatabaseSync) {
      const { DatabaseSync } = module;
      return (path, options) => withEngine("node:sqlite", new DatabaseSync(path, { readOnly: options?.readOnly === true }));
    }
    failures.push(`Node ${process.versions.node} has no node:sqlite (it needs Node ≥ 22.13)`);
  }
  if (preference !== "node:sqlite") {
    tried.push("better-sqlite3");
    try {
      const Database = loaders.betterSqlite();
      // The native addon loads on the first open: one built for another Node version fails here, as "no engine".
      new Database(":memory:").close();
      return (path, options) => withEngine("better-sqlite3", new Database(path, { readonly: options?.readOnly === true }));
    } catch (error) {
      failures.push(`better-sqlite3 did not load: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    }
  }
  throw new StoreEngineUnavailableError(tried, failures.join("; "));
}

function withEngine(engine: SqliteEngineName, database: Omit<Connection, "engine">): Connection {
  return {
    engine,
    exec: (sql) => void database.exec(sql),
    prepare: (sql) => database.prepare(sql),
    close: () => database.close(),
  };
}

/** SQLite's primary result code of an engine error (`SQLITE_BUSY` = 5, …), or undefined for other errors. */
export function sqliteCode(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  // node:sqlite: `errcode` (the extended code); better-sqlite3: `code` ("SQLITE_BUSY", "SQLITE_IOERR_SHORT_READ").
  const { errcode, code } = error as { errcode?: unknown; code?: unknown };
  if (typeof errcode === "number") return errcode & 0xff;
  if (typeof code === "string" && code.startsWith("SQLITE_")) return PRIMARY_CODES[code.slice(7).split("_")[0]];
  return undefined;
}

export const SQLITE_BUSY = 5;
export const SQLITE_LOCKED = 6;
export const SQLITE_CORRUPT = 11;
export const SQLITE_NOTADB = 26;
export const SQLITE_READONLY = 8;
export const SQLITE_CANTOPEN = 14;

const PRIMARY_CODES: Record<string, number> = { BUSY: SQLITE_BUSY, LOCKED: SQLITE_LOCKED, CORRUPT: SQLITE_CORRUPT, NOTADB: SQLITE_NOTADB, IOERR: 10, CANTOPEN: SQLITE_CANTOPEN, FULL: 13, READONLY: SQLITE_READONLY };
