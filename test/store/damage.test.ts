/**
 * R84 (amended): damage is detected, never served. A store file written with real data is damaged
 * in seeded ways (truncated at random offsets, 0 included; bytes flipped in the header, in b-tree
 * pages, inside a record's JSON; a stale `user_version`); each damaged copy is opened and every
 * session, record and snapshot read. Each outcome is a typed error (`StoreCorruptError`,
 * `StoreSchemaError`) or the data exactly as written: never a raw error, never changed data, and
 * the file is byte-identical after the attempt. DAMAGE_SEED replays a tally.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, StoreCorruptError, StoreSchemaError } from "../../src/sqlite.js";
import type { Json } from "../../src/store/run-store.js";
import { loadEngine } from "../../src/store/sqlite/engine.js";
import { CREATE_V2 } from "../../src/store/sqlite/schema.js";
import { seededRandom } from "../support/seeded-random.js";
import { availableEngines, tempDirectory } from "./engines.js";

const temp = tempDirectory("store-damage");
const SEED = process.env.DAMAGE_SEED !== undefined ? Number(process.env.DAMAGE_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
const SESSIONS = ["alpha", "beta", "gamma"];

/** What the pristine store holds: per session its records and snapshot. */
type Contents = Record<string, { records: { seq: number; record: Json }[]; snapshot: { snapshot: Json; atSeq: number } | undefined }>;

function writeStore(file: string, engine: { engine: ReturnType<typeof availableEngines>[number] }): Contents {
  const store = openSqliteStore(file, engine);
  for (const id of SESSIONS) {
    const writer = store.openSession(id, { meta: { title: id } });
    for (let i = 1; i <= 40; i++) writer.append({ k: "job", i, toolName: i % 2 ? "fetch" : "read", text: `${id} ${"lorem ipsum ".repeat(8)}` });
    writer.saveSnapshot({ kind: "transcript", messages: [{ role: "user", content: `${id} snapshot` }] }, 40);
    writer.release();
  }
  store.close();
  return readAll(file, engine) as Contents;
}

/** Every session's records and snapshot, or the error that stopped the reading. */
function readAll(file: string, options: object): Contents | { error: unknown } {
  let store;
  try {
    store = openSqliteStore(file, options);
  } catch (error) {
    return { error };
  }
  try {
    const contents: Contents = {};
    for (const info of store.listSessions()) {
      const reader = store.readSession(info.sessionId);
      contents[info.sessionId] = { records: reader.records().map((r) => ({ seq: r.seq, record: r.record })), snapshot: reader.snapshot() };
    }
    return contents;
  } catch (error) {
    return { error };
  } finally {
    store.close();
  }
}

/** Byte offsets where `needle` occurs in `bytes`. */
function occurrences(bytes: Buffer, needle: string): number[] {
  const found: number[] = [];
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) found.push(at);
  return found;
}

for (const engine of availableEngines()) {
  describe(`R84: damage is detected, never served (${engine})`, () => {
    it(`R84: 72 seeded damages: a typed error or the data as written, the file unchanged (DAMAGE_SEED=${SEED})`, { timeout: 120_000 }, () => {
      const dir = temp();
      const pristine = join(dir, "pristine.db");
      const expected = writeStore(pristine, { engine });
      const bytes = readFileSync(pristine);
      const pageSize = bytes.readUInt16BE(16) === 1 ? 65536 : bytes.readUInt16BE(16);
      const draw = seededRandom(SEED);
      const pick = (n: number) => Math.floor(draw() * n);
      const jsonAt = occurrences(bytes, "lorem ipsum");
      const snapshotAt = occurrences(bytes, "snapshot\"}");
      const damages: { name: string; apply: (b: Buffer) => Buffer }[] = [];
      damages.push({ name: "truncated at 0", apply: (b) => b.subarray(0, 0) });
      for (let i = 0; i < 13; i++) {
        const at = 1 + pick(bytes.length - 1);
        damages.push({ name: `truncated at ${at}`, apply: (b) => b.subarray(0, at) });
      }
      for (let i = 0; i < 14; i++) {
        const at = pick(100);
        const bit = 1 << pick(8);
        damages.push({ name: `header byte ${at} ^ ${bit}`, apply: (b) => flip(b, at, bit) });
      }
      for (let i = 0; i < 16; i++) {
        const at = pageSize + pick(bytes.length - pageSize);
        const bit = 1 << pick(8);
        damages.push({ name: `page byte ${at} ^ ${bit}`, apply: (b) => flip(b, at, bit) });
      }
      for (let i = 0; i < 16; i++) {
        const at = jsonAt[pick(jsonAt.length)] + pick(11);
        damages.push({ name: `record JSON byte ${at}`, apply: (b) => flip(b, at, 1 << pick(7)) });
      }
      for (let i = 0; i < 4; i++) {
        const at = snapshotAt[pick(snapshotAt.length)] + pick(8);
        damages.push({ name: `snapshot JSON byte ${at}`, apply: (b) => flip(b, at, 1 << pick(7)) });
      }
      for (const version of [0, 1, 2, 9]) damages.push({ name: `user_version ${version}`, apply: (b) => withVersion(b, version) });
      for (let i = 0; i < 4; i++) {
        const version = pick(3);
        damages.push({ name: `user_version ${version} (again)`, apply: (b) => withVersion(b, version) });
      }
      expect(damages.length).toBeGreaterThanOrEqual(60);
      const tally = { typed: 0, correct: 0, problems: [] as string[] };
      for (const [i, damage] of damages.entries()) {
        const file = join(dir, `damaged-${i}.db`);
        const damaged = damage.apply(Buffer.from(bytes));
        writeFileSync(file, damaged);
        const outcome = readAll(file, { engine });
        if (!readFileSync(file).equals(damaged)) tally.problems.push(`${damage.name}: the file changed`);
        if ("error" in outcome) {
          const { error } = outcome;
          if (error instanceof StoreCorruptError || error instanceof StoreSchemaError) tally.typed++;
          else tally.problems.push(`${damage.name}: a raw error: ${String(error)}`);
        } else if (JSON.stringify(outcome) === JSON.stringify(expected)) tally.correct++;
        else {
          const got = JSON.stringify(outcome);
          const want = JSON.stringify(expected);
          const at = [...got].findIndex((c, k) => c !== want[k]);
          tally.problems.push(`${damage.name}: changed data was served (${got.slice(Math.max(0, at - 60), at + 40)} / ${want.slice(Math.max(0, at - 60), at + 40)})`);
        }
      }
      console.log(`damage harness (${engine}, DAMAGE_SEED=${SEED}): ${damages.length} damages, ${tally.typed} typed errors, ${tally.correct} correct reads, ${tally.problems.length} problems`);
      expect(tally.problems).toEqual([]);
    });

    it("R84: a damaged record is StoreCorruptError naming its session and sequence number; other sessions still read", () => {
      const dir = temp();
      const file = join(dir, "store.db");
      writeStore(file, { engine });
      const bytes = readFileSync(file);
      // The 7th record of beta: its text is unique ("beta" then the filler), one byte of the filler changed.
      const at = occurrences(bytes, "beta lorem")[0] + 6;
      writeFileSync(file, flip(bytes, at, 2));
      const store = openSqliteStore(file, { engine });
      try {
        let thrown: unknown;
        try {
          store.readSession("beta").records();
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(StoreCorruptError);
        expect((thrown as StoreCorruptError).at).toMatchObject({ sessionId: "beta", what: "record" });
        expect((thrown as Error).message).toMatch(/session "beta" at sequence number \d+ does not match its checksum/);
        expect(store.readSession("alpha").records()).toHaveLength(40);
        expect(store.readSession("gamma").snapshot()?.atSeq).toBe(40);
      } finally {
        store.close();
      }
    });

    it("R84: a session whose meta is not JSON is listed with its error (meta null); the listing and the other sessions still read", () => {
      const dir = temp();
      const file = join(dir, "store.db");
      writeStore(file, { engine });
      const connection = loadEngine(engine)(file);
      connection.exec(`UPDATE sessions SET meta = '{oops' WHERE id = 'beta'`);
      connection.close();
      const store = openSqliteStore(file, { engine });
      try {
        const listed = store.listSessions();
        expect(listed.map(({ sessionId, meta, damaged }) => ({ sessionId, meta, damaged: damaged?.name }))).toEqual([
          { sessionId: "gamma", meta: { title: "gamma" }, damaged: undefined },
          { sessionId: "beta", meta: null, damaged: "StoreCorruptError" },
          { sessionId: "alpha", meta: { title: "alpha" }, damaged: undefined },
        ]);
        expect(listed[1].damaged?.message).toMatch(/session "beta"'s meta is not JSON/);
        expect(listed[1].records).toBe(40);
        expect(() => store.readSession("beta").info()).toThrow(StoreCorruptError);
        expect(store.readSession("beta").records()).toHaveLength(40);
        expect(store.readSession("alpha").info().meta).toEqual({ title: "alpha" });
      } finally {
        store.close();
      }
    });

    it("R84: an empty file, or a SQLite file with no tables, is refused and left as it was; only a missing path creates a store", () => {
      const dir = temp();
      const empty = join(dir, "empty.db");
      writeFileSync(empty, "");
      expect(() => openSqliteStore(empty, { engine })).toThrow(StoreCorruptError);
      expect(readFileSync(empty).length).toBe(0);
      const bare = join(dir, "bare.db");
      const connection = loadEngine(engine)(bare);
      connection.exec("PRAGMA user_version = 0");
      connection.close();
      const before = readFileSync(bare);
      expect(() => openSqliteStore(bare, { engine })).toThrow(/no tables, not a session store/);
      expect(readFileSync(bare).equals(before)).toBe(true);
      const fresh = openSqliteStore(join(dir, "new", "store.db"), { engine });
      expect(fresh.listSessions()).toEqual([]);
      fresh.close();
    });

    it("R84: a user_version whose tables do not match is StoreSchemaError, the file untouched", () => {
      const dir = temp();
      const file = join(dir, "store.db");
      writeStore(file, { engine });
      for (const version of [0, 1, 2]) {
        const copy = join(dir, `v${version}.db`);
        writeFileSync(copy, withVersion(readFileSync(file), version));
        const before = readFileSync(copy);
        expect(() => openSqliteStore(copy, { engine })).toThrow(StoreSchemaError);
        expect(readFileSync(copy).equals(before)).toBe(true);
      }
    });

    it("R84: a negative user_version (a flipped sign bit in the header) is StoreCorruptError, never a migration, the file untouched", () => {
      const dir = temp();
      const file = join(dir, "store.db");
      writeStore(file, { engine });
      for (const version of [-1, -2147483520]) {
        const copy = join(dir, `v${-version}.db`);
        writeFileSync(copy, withVersion(readFileSync(file), version));
        const before = readFileSync(copy);
        expect(() => openSqliteStore(copy, { engine })).toThrow(StoreCorruptError);
        expect(readFileSync(copy).equals(before)).toBe(true);
      }
    });

    it("R84: a schema-2 store is migrated: its rows get their checksums, read back as written, and damage in them is detected", () => {
      const dir = temp();
      const file = join(dir, "v2.db");
      const connection = loadEngine(engine)(file);
      connection.exec("PRAGMA journal_mode = WAL");
      connection.exec(CREATE_V2);
      connection.prepare("INSERT INTO sessions (id, created_at, updated_at, meta) VALUES (?, ?, ?, ?)").run("old", 1, 1, "null");
      for (let seq = 1; seq <= 3; seq++) connection.prepare("INSERT INTO records (session_id, seq, at, record) VALUES (?, ?, ?, ?)").run("old", seq, 1, JSON.stringify({ seq, toolName: "fetch" }));
      connection.prepare("INSERT INTO snapshots (session_id, at_seq, snapshot) VALUES (?, ?, ?)").run("old", 3, JSON.stringify({ kind: "transcript" }));
      connection.close();
      const store = openSqliteStore(file, { engine });
      expect(store.readSession("old").records().map((r) => r.record)).toEqual([1, 2, 3].map((seq) => ({ seq, toolName: "fetch" })));
      expect(store.readSession("old").snapshot()).toEqual({ snapshot: { kind: "transcript" }, atSeq: 3 });
      const writer = store.openSession("old");
      expect(writer.append({ seq: 4 })).toBe(4);
      writer.release();
      store.close();
      copyFileSync(file, join(dir, "copy.db"));
      const bytes = readFileSync(file);
      const at = occurrences(bytes, "fetch")[1];
      writeFileSync(file, flip(bytes, at + 2, 4));
      const damaged = openSqliteStore(file, { engine });
      try {
        expect(() => damaged.readSession("old").records()).toThrow(StoreCorruptError);
      } finally {
        damaged.close();
      }
    });
  });
}

function flip(bytes: Buffer, at: number, bit: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] ^= bit;
  return copy;
}

function withVersion(bytes: Buffer, version: number): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeInt32BE(version, 60);
  return copy;
}
