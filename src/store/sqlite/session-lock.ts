/**
 * R84's writer lock, one per session, that the OS releases when its process dies: an exclusive
 * transaction held open on a small per-session lock file. SQLite takes it with `fcntl` locks, which
 * die with the process (SIGKILL included), and arbitrates between connections of one process
 * itself, so one rule covers both. A lock never blocks other sessions, nor readers of the store.
 *
 * Lock files are empty (nothing is written in the transaction) and are never deleted: unlinking a
 * lock file another process has open would let two writers lock two different files.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionLockedError } from "../errors.js";
import { type Connection, type Connector, SQLITE_BUSY, SQLITE_LOCKED, sqliteCode } from "./engine.js";

export interface SessionLock {
  release(): void;
}

/** The directory of a store's lock files: beside the database, `<file>.locks/`. */
function holderPid(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(`${lockFile}.pid`, "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function lockDirectory(databasePath: string): string {
  return `${databasePath}.locks`;
}

/** Takes the session's lock, or throws `SessionLockedError` at once (no waiting) when a live writer holds it. */
export function acquireSessionLock(connect: Connector, databasePath: string, sessionId: string): SessionLock {
  const directory = lockDirectory(databasePath);
  mkdirSync(directory, { recursive: true });
  // A hash names the file: any session id is a safe, bounded file name.
  const file = join(directory, `${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}.lock`);
  const connection: Connection = connect(file);
  try {
    connection.exec("PRAGMA busy_timeout = 0");
    connection.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    connection.close();
    const code = sqliteCode(error);
    if (code === SQLITE_BUSY || code === SQLITE_LOCKED) throw new SessionLockedError(sessionId, holderPid(file));
    throw error;
  }
  // Who holds it, for the message a refused process shows (read only while the lock is held).
  try {
    writeFileSync(`${file}.pid`, String(process.pid));
  } catch {
    // Without it a refusal names no pid.
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      try {
        connection.exec("ROLLBACK");
      } finally {
        connection.close();
      }
    },
  };
}
