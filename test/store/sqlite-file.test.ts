/**
 * R84: a store file that is corrupt, truncated, not a store or of a newer schema is refused with a
 * typed error and left byte for byte as it was (no sidecar file appears either); an older schema
 * is migrated.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { copyFileSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, SCHEMA_VERSION, StoreCorruptError, StoreSchemaError } from "../../src/sqlite.js";
import { type Connection, loadEngine, type SqliteEngineName } from "../../src/store/sqlite/engine.js";
import { rowChecksum } from "../../src/store/sqlite/checksum.js";
import { CREATE_V0, CREATE_V1 } from "../../src/store/sqlite/schema.js";
import { availableEngines, tempDirectory } from "./engines.js";

const temp = tempDirectory("sqlite-file");

/** A real store with enough data to span many pages, closed (its WAL checkpointed into the file). */
function writeStore(engine: SqliteEngineName): string {
  const file = join(temp(), "store.db");
  const store = openSqliteStore(file, { engine });
  for (const id of ["a", "b"]) {
    const writer = store.openSession(id);
    for (let i = 0; i < 150; i++) writer.append({ i, text: `${id}:${"x".repeat(400)}` });
    writer.saveSnapshot({ messages: id }, 150);
  }
  store.close();
  return file;
}

/** Opening `file` throws `errorType`; the directory holds the same files with the same bytes afterwards. */
function expectRefused(engine: SqliteEngineName, file: string, errorType: new (...args: never[]) => Error, message: RegExp): void {
  const dir = dirname(file);
  const before = directoryContents(dir);
  let thrown: unknown;
  try {
    openSqliteStore(file, { engine }).close();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(errorType);
  expect((thrown as Error).message).toMatch(message);
  const after = directoryContents(dir);
  expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  for (const [name, bytes] of before) expect(after.get(name)!.equals(bytes), `${name} is unchanged`).toBe(true);
}

/**
 * What a writer that died leaves: `change` made on a connection to `file` that is never closed, its
 * WAL (and, `withShm`, its WAL index) copied beside a copy of the file. Returns the copy's path.
 */
function crashImage(engine: SqliteEngineName, file: string, change: (connection: Connection) => void, withShm = true): string {
  const connection = loadEngine(engine)(file);
  try {
    change(connection);
    const image = join(temp(), "store.db");
    for (const suffix of ["", "-wal", ...(withShm ? ["-shm"] : [])]) copyFileSync(`${file}${suffix}`, `${image}${suffix}`);
    expect(statSync(`${image}-wal`).size).toBeGreaterThan(0);
    return image;
  } finally {
    connection.close();
  }
}

/** `bytes` with the byte at `at` inverted. */
function flip(bytes: Buffer, at: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] ^= 0xff;
  return copy;
}

/** Every file under `dir` (the lock directory's included) and its bytes. */
function directoryContents(dir: string): Map<string, Buffer> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return new Map(files.map((entry) => [join(entry.parentPath, entry.name), readFileSync(join(entry.parentPath, entry.name))]));
}

for (const engine of availableEngines()) {
  describe(`R84 refused store files (${engine})`, () => {
    it("R84: a store truncated to a whole number of pages is StoreCorruptError, the file untouched", () => {
      const file = writeStore(engine);
      const size = readFileSync(file).length;
      truncateSync(file, Math.floor(size / 2 / 4096) * 4096);
      expectRefused(engine, file, StoreCorruptError, /bytes, the header says \d+ \(truncated\)/);
    });

    it("R84: a store cut mid-page is StoreCorruptError, the file untouched", () => {
      const file = writeStore(engine);
      truncateSync(file, readFileSync(file).length - 1000);
      expectRefused(engine, file, StoreCorruptError, /is not a whole number of 4096-byte pages \(truncated\)/);
    });

    it("R84: garbage over a page inside the store is StoreCorruptError, the file untouched", () => {
      const file = writeStore(engine);
      const bytes = readFileSync(file);
      // Pages 2 to 4 (after the header page): b-tree pages of the tables.
      randomBytes(3 * 4096).copy(bytes, 4096);
      writeFileSync(file, bytes);
      // SQLite's own reading finds it (integrity_check's verdict, or the read failing on the page).
      expectRefused(engine, file, StoreCorruptError, /\((database disk image is malformed|integrity_check: [\s\S]+)\)/);
    });

    it("R84: garbage over the header, a short file and a text file are StoreCorruptError", () => {
      const file = writeStore(engine);
      const bytes = readFileSync(file);
      randomBytes(100).copy(bytes, 0);
      writeFileSync(file, bytes);
      expectRefused(engine, file, StoreCorruptError, /not a SQLite database/);
      const short = join(temp(), "short.db");
      writeFileSync(short, "SQLite format 3\0");
      expectRefused(engine, short, StoreCorruptError, /shorter than a SQLite header/);
      const text = join(temp(), "notes.db");
      writeFileSync(text, "these are my notes\n".repeat(300));
      expectRefused(engine, text, StoreCorruptError, /not a SQLite database/);
    });

    it("R84: another program's SQLite database is StoreCorruptError (not a session store), untouched", () => {
      const file = join(temp(), "other.db");
      const connection = loadEngine(engine)(file);
      connection.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
      connection.close();
      expectRefused(engine, file, StoreCorruptError, /not a session store/);
    });

    it("R84: a store of a newer schema is StoreSchemaError naming both versions, untouched", () => {
      const file = writeStore(engine);
      const connection = loadEngine(engine)(file);
      connection.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
      connection.close();
      expectRefused(engine, file, StoreSchemaError, new RegExp(`schema version ${SCHEMA_VERSION + 1}; this build reads up to ${SCHEMA_VERSION}`));
      let thrown: unknown;
      try {
        openSqliteStore(file, { engine });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ found: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION, path: file });
    });

    it("R84: a store missing its session_info view, or with a trigger or index added, is StoreSchemaError naming what it has, untouched", () => {
      for (const change of ["DROP VIEW session_info", "CREATE TRIGGER stamp AFTER INSERT ON records BEGIN SELECT 1; END", "CREATE INDEX by_time ON records (at)"]) {
        const file = writeStore(engine);
        const connection = loadEngine(engine)(file);
        connection.exec(change);
        connection.close();
        const found = change.startsWith("DROP") ? /its schema is table records\(.*\), table sessions\(.*\), table snapshots\(.*\); it was left/ : /(trigger stamp|index by_time)/;
        expectRefused(engine, file, StoreSchemaError, found);
      }
    });

    it("R84: a refused open closes the connection it made, whatever step fails after connecting", () => {
      const file = writeStore(engine);
      const connections = { opened: 0, closed: 0 };
      // The real engine, counting its connections, with one of the store's statements failing to prepare.
      type Database = { exec(sql: string): unknown; prepare(sql: string): unknown; close(): void };
      const counted = (Base: new (path: string, options?: object) => Database) =>
        class Counted {
          private readonly db: Database;
          constructor(path: string, options?: object) {
            this.db = new Base(path, options);
            connections.opened++;
          }
          exec(sql: string) {
            return this.db.exec(sql);
          }
          prepare(sql: string) {
            if (sql.includes("INSERT OR REPLACE INTO snapshots")) throw new Error("injected: the statement does not prepare");
            return this.db.prepare(sql);
          }
          close() {
            connections.closed++;
            this.db.close();
          }
        };
      const engineLoaders = {
        nodeSqlite: () => ({ DatabaseSync: counted((process.getBuiltinModule("node:sqlite") as { DatabaseSync: never }).DatabaseSync) }) as never,
        betterSqlite: () => counted(createRequire(import.meta.url)("better-sqlite3")) as never,
      };
      for (let attempt = 0; attempt < 3; attempt++) expect(() => openSqliteStore(file, { engine, engineLoaders })).toThrow(/injected/);
      expect(connections.opened).toBeGreaterThanOrEqual(3);
      expect(connections.closed).toBe(connections.opened);
    });

    it("R84: a WAL left beside the store (its writer died) saying a newer schema: StoreSchemaError, the file, -wal and -shm byte-identical", () => {
      for (const withShm of [true, false]) {
        const file = crashImage(engine, writeStore(engine), (connection) => connection.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`), withShm);
        expectRefused(engine, file, StoreSchemaError, new RegExp(`schema version ${SCHEMA_VERSION + 1}; this build reads up to ${SCHEMA_VERSION}`));
      }
    });

    it("R84: the same through a symbolic link to the store (SQLite's -wal is beside the link's target): StoreSchemaError, the target's files byte-identical", () => {
      const file = crashImage(engine, writeStore(engine), (connection) => connection.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`));
      const link = join(temp(), "linked.db");
      symlinkSync(file, link);
      const before = directoryContents(dirname(file));
      expect(() => openSqliteStore(link, { engine }).close()).toThrow(StoreSchemaError);
      const after = directoryContents(dirname(file));
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const [name, bytes] of before) expect(after.get(name)!.equals(bytes), `${name} is unchanged`).toBe(true);
    });

    it("R84: another program's WAL-mode database, its tables still in its WAL: StoreCorruptError, the file, -wal and -shm byte-identical", () => {
      const foreign = join(temp(), "other.db");
      const file = crashImage(engine, foreign, (connection) => {
        connection.exec("PRAGMA journal_mode = WAL");
        connection.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
      });
      expectRefused(engine, file, StoreCorruptError, /not a session store \(application_id 0\)/);
    });

    it("R84: a WAL left beside the store that SQLite must read to refuse (a view dropped): the file and its -wal byte-identical", () => {
      const file = crashImage(engine, writeStore(engine), (connection) => connection.exec("DROP VIEW session_info"));
      const before = [readFileSync(file), readFileSync(`${file}-wal`)];
      expect(() => openSqliteStore(file, { engine })).toThrow(StoreSchemaError);
      // (SQLite rebuilds its WAL index, the -shm, to read the WAL: only that file may change.)
      expect(readFileSync(file).equals(before[0]), "the file is unchanged").toBe(true);
      expect(readFileSync(`${file}-wal`).equals(before[1]), "the -wal is unchanged").toBe(true);
    });

    it("R84: a WAL left beside a sound store is the store: its transactions read back; a last one torn, of another generation or failing its checksum is not", () => {
      const damages: Record<string, (wal: Buffer, frame: number) => Buffer> = {
        torn: (wal) => wal.subarray(0, wal.length - 100),
        // Frame header bytes 8-15, the salts: not covered by the checksum, only compared with the header's.
        "another generation": (wal, frame) => flip(wal, frame + 8),
        "its checksum": (wal, frame) => flip(wal, frame + 24 + 200),
      };
      for (const [damage, apply] of Object.entries(damages)) {
        const image = crashImage(engine, writeStore(engine), (connection) => {
          connection.exec("PRAGMA wal_autocheckpoint = 0");
          const append = connection.prepare("INSERT INTO records (session_id, seq, at, record, crc) VALUES (?, ?, 0, ?, ?)");
          for (let seq = 151; seq <= 300; seq++) append.run("a", seq, `"r${seq}"`, rowChecksum("a", seq, `"r${seq}"`));
          // The last transaction, one frame (page 1) at the WAL's end, is the one damaged.
          connection.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
        });
        const wal = readFileSync(`${image}-wal`);
        writeFileSync(`${image}-wal`, apply(wal, wal.length - (24 + 4096)));
        const store = openSqliteStore(image, { engine });
        try {
          expect(store.readSession("a").records().map(({ seq }) => seq), damage).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
          expect(store.readSession("b").records()).toHaveLength(150);
        } finally {
          store.close();
        }
      }
    });

    it("R84: a store of schema 0 (the draft layout) is migrated: its journals and snapshots read back, appends continue", () => {
      const file = join(temp(), "v0.db");
      const connection = loadEngine(engine)(file);
      connection.exec(CREATE_V0);
      connection.exec(`
        INSERT INTO sessions VALUES ('old', 100, 300, '{"messages":["hi"]}', 2), ('older', 50, 60, NULL, NULL);
        INSERT INTO records VALUES ('old', 1, '{"kind":"intent"}'), ('old', 2, '{"kind":"outcome"}'), ('old', 3, '"after the snapshot"'), ('older', 1, '1');
      `);
      connection.close();

      const store = openSqliteStore(file, { engine });
      expect(store.listSessions()).toEqual([
        { sessionId: "old", createdAt: 100, updatedAt: 300, records: 3, meta: null },
        { sessionId: "older", createdAt: 50, updatedAt: 60, records: 1, meta: null },
      ]);
      const old = store.openSession("old", { create: false });
      expect(old.snapshot()).toEqual({ snapshot: { messages: ["hi"] }, atSeq: 2 });
      expect(old.records(2)).toEqual([{ seq: 3, record: "after the snapshot" }]);
      expect(old.append("resumed")).toBe(4);
      expect(store.readSession("older").snapshot()).toBeUndefined();
      store.close();

      const check = loadEngine(engine)(file);
      expect(check.prepare("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
      check.close();
      // Opening the migrated store again migrates nothing and loses nothing.
      const again = openSqliteStore(file, { engine });
      expect(again.readSession("old").records().map(({ seq }) => seq)).toEqual([1, 2, 3, 4]);
      again.close();
    });

    it("R84: a store of schema 1 is migrated: counts and last-write times read as before, appends continue after the last record", () => {
      const file = join(temp(), "v1.db");
      const connection = loadEngine(engine)(file);
      connection.exec(CREATE_V1);
      connection.exec(`
        INSERT INTO sessions VALUES ('a', 100, 300, 2, '{"title":"a"}'), ('b', 50, 400, 1, 'null');
        INSERT INTO records VALUES ('a', 1, '"one"'), ('a', 2, '"two"'), ('b', 1, '1');
        INSERT INTO snapshots VALUES ('a', 1, '{"messages":[]}');
      `);
      connection.close();

      const store = openSqliteStore(file, { engine, clock: () => 900 });
      expect(store.listSessions()).toEqual([
        { sessionId: "b", createdAt: 50, updatedAt: 400, records: 1, meta: null },
        { sessionId: "a", createdAt: 100, updatedAt: 300, records: 2, meta: { title: "a" } },
      ]);
      const a = store.openSession("a", { create: false });
      expect(a.snapshot()).toEqual({ snapshot: { messages: [] }, atSeq: 1 });
      expect(a.append("three")).toBe(3);
      expect(a.info()).toEqual({ sessionId: "a", createdAt: 100, updatedAt: 900, records: 3, meta: { title: "a" } });
      a.release();
      store.close();

      const check = loadEngine(engine)(file);
      expect(check.prepare("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
      check.close();
      const again = openSqliteStore(file, { engine });
      expect(again.readSession("a").records().map(({ record }) => record)).toEqual(["one", "two", "three"]);
      again.close();
    });
  });
}
