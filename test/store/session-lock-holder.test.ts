/**
 * R84: who holds a session's writer lock, as a refused writer's `SessionLockedError` names it: on
 * Linux read from the kernel's lock table (`/proc/locks`), so taking a lock creates nothing beside
 * its lock file; the parsing of that table, on tables written out here. And a hostile layout of the
 * lock directory: a typed `StoreLockError`, nothing written, the store's data still served.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, SessionLockedError, StoreLockError } from "../../src/sqlite.js";
import { kernelLockHolder, lockDirectory, lockTableId } from "../../src/store/sqlite/session-lock.js";
import { thrown } from "../support/thrown.js";
import { availableEngines, tempDirectory } from "./engines.js";

const temp = tempDirectory("session-lock-holder");

describe("R84: the lock holder from the kernel's lock table", () => {
  it("names the pid of the lock on the file's own device and inode; skips waiters, other files and locks with no pid", () => {
    const file = join(temp(), "a.lock");
    writeFileSync(file, "");
    const id = lockTableId(file);
    const [device, inode] = [id.slice(0, id.lastIndexOf(":")), id.slice(id.lastIndexOf(":") + 1)];
    const table = [
      `1: POSIX  ADVISORY  WRITE 111 ${device}:${Number(inode) + 1} 1073741824 1073742335`,
      `2: OFDLCK ADVISORY  WRITE -1 ${id} 0 EOF`,
      `3: POSIX  ADVISORY  WRITE 0 ${id} 0 EOF`,
      `3: -> POSIX  ADVISORY  WRITE 222 ${id} 1073741824 1073742335`,
      `4: POSIX  ADVISORY  WRITE 4242 ${id} 1073741824 1073742335`,
      "",
    ].join("\n");
    expect(kernelLockHolder(file, table)).toBe(4242);
    expect(kernelLockHolder(file, table.split("\n").filter((line) => !line.includes("4242")).join("\n"))).toBeUndefined();
    expect(kernelLockHolder(file, "")).toBeUndefined();
  });

  for (const engine of availableEngines()) {
    it.runIf(process.platform === "linux")(`${engine}: a refused writer in this process is told this process holds it; the lock directory holds the lock files and nothing else`, () => {
      const file = join(temp(), "store.db");
      const a = openSqliteStore(file, { engine });
      const b = openSqliteStore(file, { engine });
      const held = a.openSession("S");
      const refused = thrown(() => b.openSession("S"));
      expect(refused).toBeInstanceOf(SessionLockedError);
      expect(refused).toMatchObject({ pid: process.pid });
      expect(b.holderOf?.("T")).toBeUndefined();
      // No .pid file, no rollback journal: one lock file a session (S's, and T's from holderOf).
      const files = readdirSync(lockDirectory(file));
      expect(files).toHaveLength(2);
      expect(files.every((name) => /^[0-9a-f]{40}\.lock$/.test(name))).toBe(true);
      held.release();
      expect(b.openSession("S").append("b")).toBe(1);
      a.close();
      b.close();
    });
  }
});

describe("R84: a hostile layout of the lock directory is StoreLockError, never a raw error nor StoreCorruptError", () => {
  const lockFileOf = (file: string, sessionId: string) => join(lockDirectory(file), `${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}.lock`);
  const layouts: [string, (file: string) => string][] = [
    ["the lock directory is a file", (file) => (rmSync(lockDirectory(file), { recursive: true, force: true }), writeFileSync(lockDirectory(file), "x"), lockDirectory(file))],
    ["the session's lock file is a directory", (file) => (mkdirSync(lockFileOf(file, "S"), { recursive: true }), lockFileOf(file, "S"))],
    ["the session's lock file is another program's file", (file) => (mkdirSync(lockDirectory(file), { recursive: true }), writeFileSync(lockFileOf(file, "S"), "not a SQLite file ".repeat(40)), lockFileOf(file, "S"))],
  ];
  for (const engine of availableEngines()) {
    for (const [layout, make] of layouts) {
      it(`${engine}: ${layout}`, () => {
        const file = join(temp(), "store.db");
        const store = openSqliteStore(file, { engine });
        const before = store.openSession("before");
        before.append("kept");
        before.release();
        const offending = make(file);
        const bytes = readFileSync(file);
        for (const attempt of [() => store.openSession("S"), () => store.holderOf?.("S")]) {
          const error = thrown(attempt);
          expect(error).toBeInstanceOf(StoreLockError);
          expect(error).toMatchObject({ path: file, sessionId: "S" });
          expect((error as Error).message).toContain(`${offending} is not usable`);
        }
        expect(store.hasSession("S")).toBe(false);
        expect(store.readSession("before").records()).toEqual([{ seq: 1, record: "kept" }]);
        expect(readFileSync(file).equals(bytes)).toBe(true);
        store.close();
      });
    }
  }
});
