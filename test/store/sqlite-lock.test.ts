/**
 * R84 across processes: a writer's lock dies with its process (SIGKILL included), a second live
 * writer gets SessionLockedError and writes nothing, other sessions stay usable, and a journal cut
 * by a kill mid-append is a gap-free prefix (WAL).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, SessionLockedError } from "../../src/sqlite.js";
import type { SqliteEngineName } from "../../src/store/sqlite/engine.js";
import { thrown } from "../support/thrown.js";
import { availableEngines, tempDirectory } from "./engines.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const WRITER = join(ROOT, "test/store/fixtures/session-writer.ts");
const temp = tempDirectory("sqlite-lock");
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Starts the writer process and resolves once it printed a line matching `ready`. */
async function startWriter(file: string, engine: SqliteEngineName, sessionId: string, mode: "hold" | "append", ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", WRITER, file, engine, sessionId, mode], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((done, fail) => {
    let stdout = "";
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString();
      if (ready.test(stdout)) {
        child.stdout!.off("data", onData);
        done();
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code, signal) => fail(new Error(`the writer exited (${code ?? signal}) before ${ready}: ${stderr}`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  const [, signal] = await exited;
  expect(signal).toBe("SIGKILL");
}

const engines = availableEngines();
// Each engine against itself; on a Node with both, also one against the other (both lock with fcntl).
const pairs: [SqliteEngineName, SqliteEngineName][] = [...engines.map((engine): [SqliteEngineName, SqliteEngineName] => [engine, engine])];
if (engines.length === 2) pairs.push([engines[0], engines[1]]);

for (const [holderEngine, engine] of pairs) {
  describe(`R84 one writer per session across processes (holder ${holderEngine}, this process ${engine})`, () => {
    it("R84: B's openSession(S) is SessionLockedError and writes nothing while A holds S; other sessions stay usable; after A is SIGKILLed B opens S", async () => {
      const file = join(temp(), "store.db");
      const a = await startWriter(file, holderEngine, "S", "hold", /holding\n/);
      const b = openSqliteStore(file, { engine });
      const before = b.readSession("S").info();
      expect(before.records).toBe(1);

      expect(() => b.openSession("S")).toThrow(SessionLockedError);
      // The refusal names the holder (on Linux from the kernel's lock table; elsewhere from its .pid file).
      expect(thrown(() => b.openSession("S"))).toMatchObject({ sessionId: "S", pid: a.pid });
      expect(b.holderOf?.("S")).toEqual({ pid: a.pid });
      expect(() => b.openSession("S", { create: false, meta: "b was here" })).toThrow(SessionLockedError);
      expect(() => b.deleteSession("S")).toThrow(SessionLockedError);
      expect(b.prune({ olderThan: Number.MAX_SAFE_INTEGER })).toEqual([]);
      expect(b.readSession("S").info()).toEqual(before);
      expect(b.readSession("S").records()).toEqual([{ seq: 1, record: `held by ${a.pid}` }]);

      // Another session in the same file is B's to write meanwhile.
      const other = b.openSession("T");
      expect([other.append("b1"), other.append("b2")]).toEqual([1, 2]);

      await kill(a);
      const resumed = b.openSession("S");
      expect(resumed.append("b took over")).toBe(2);
      expect(resumed.records().map(({ record }) => record)).toEqual([`held by ${a.pid}`, "b took over"]);
      b.close();
    });

    it("R84: while A appends to S without pause, B appends to T in the same file: both journals stay whole", async () => {
      const file = join(temp(), "store.db");
      const a = await startWriter(file, holderEngine, "S", "append", /appended 200\n/);
      const b = openSqliteStore(file, { engine });
      const t = b.openSession("T");
      // Each append waits (busy_timeout) for A's transaction in progress, never fails.
      const seqs = Array.from({ length: 300 }, (_, i) => t.append({ i: i + 1 }));
      const during = b.readSession("S").info().records;
      await kill(a);
      expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      const s = b.readSession("S").records();
      expect(s.length).toBeGreaterThanOrEqual(during);
      expect(s.every(({ seq, record }, index) => seq === index + 1 && (record as { i: number }).i === seq)).toBe(true);
      b.close();
    });

    it("R80/R84: a writer killed in the middle of appending leaves a gap-free journal; the next writer continues it", async () => {
      const file = join(temp(), "store.db");
      const a = await startWriter(file, holderEngine, "S", "append", /appended 600\n/);
      await kill(a);
      const b = openSqliteStore(file, { engine });
      const records = b.readSession("S").records();
      expect(records.length).toBeGreaterThanOrEqual(600);
      expect(records.every(({ seq, record }, index) => seq === index + 1 && (record as { i: number }).i === seq)).toBe(true);
      expect(b.openSession("S").append({ i: records.length + 1 })).toBe(records.length + 1);
      b.close();
    });
  });
}
