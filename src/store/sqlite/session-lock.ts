/**
 * R84's writer lock, one per session, that the OS releases when its process dies: an exclusive
 * transaction held open on a small per-session lock file. SQLite takes it with `fcntl` locks, which
 * die with the process (SIGKILL included), and arbitrates between connections of one process
 * itself, so one rule covers both. A lock never blocks other sessions, nor readers of the store.
 *
 * Lock files are empty (nothing is written in the transaction) and are never deleted: unlinking a
 * lock file another process has open would let two writers lock two different files.
 *
 * Who holds a lock (the pid a refused writer's `SessionLockedError` names): on Linux the kernel's
 * own table says it (`/proc/locks`: the process holding an `fcntl` lock on the lock file's inode),
 * so taking a lock writes nothing else; elsewhere the holder writes its pid beside the lock file
 * (`<lock file>.pid`). That file was a second new file per session on Linux too: under a journal's
 * disk traffic, creating it took 1–1.5 ms, a third of a journaled one-run session on SQLite
 * (bench/README.md, "(j) on a quiet machine").
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionLockedError, StoreLockError, failureText } from "../errors.js";
import { type Connection, type Connector, SQLITE_BUSY, SQLITE_LOCKED, sqliteCode } from "./engine.js";

export interface SessionLock {
  release(): void;
}

/** Linux's table of the file locks held now (one line a lock: `1: POSIX ADVISORY WRITE <pid> <maj>:<min>:<inode> <start> <end>`). */
const PROC_LOCKS = "/proc/locks";
let kernelNamesHolders: boolean | undefined;
/** Whether the kernel's lock table can name a lock's holder here (Linux with /proc mounted; looked at once). */
const kernelLockTable = (): boolean => (kernelNamesHolders ??= process.platform === "linux" && existsSync(PROC_LOCKS));

/** A file's device (major:minor, hex) and inode, as the kernel's lock table prints them. */
export function lockTableId(file: string): string {
  const { dev, ino } = statSync(file, { bigint: true });
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}:${ino}`;
}

/**
 * The pid of the process holding an `fcntl` lock on `file`, from the kernel's lock table: the lines
 * whose device (major:minor, hex) and inode are the file's. Blocked requests (`->`) and open file
 * description locks (pid -1) name no holder; a pid from another pid namespace reads 0.
 */
export function kernelLockHolder(file: string, table: string): number | undefined {
  const where = lockTableId(file);
  for (const line of table.split("\n")) {
    const fields = line.trim().split(/\s+/);
    // "<n>:" "POSIX" "ADVISORY" "WRITE" "<pid>" "<maj:min:inode>" …; a waiter's line has "->" after "<n>:".
    if (fields[1] === "->" || fields[5] !== where) continue;
    const pid = Number(fields[4]);
    if (Number.isInteger(pid) && pid > 0) return pid;
  }
  return undefined;
}

/** Who holds the lock on `lockFile`, when anything can tell. */
function holderPid(lockFile: string): number | undefined {
  try {
    if (kernelLockTable()) return kernelLockHolder(lockFile, readFileSync(PROC_LOCKS, "utf8"));
    const pid = Number(readFileSync(`${lockFile}.pid`, "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The directory of a store's lock files: beside the database, `<file>.locks/`. */
export function lockDirectory(databasePath: string): string {
  return `${databasePath}.locks`;
}

/** Takes the session's lock, or throws `SessionLockedError` at once (no waiting) when a live writer holds it. */
export function acquireSessionLock(connect: Connector, databasePath: string, sessionId: string): SessionLock {
  const directory = lockDirectory(databasePath);
  // A hash names the file: any session id is a safe, bounded file name.
  const file = join(directory, `${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}.lock`);
  // A hostile layout (the directory a file, the lock file a directory or another program's file)
  // is this typed error, not a raw one, nor the store's own StoreCorruptError: the data is fine.
  const unusable = (what: string, error: unknown) => new StoreLockError(databasePath, sessionId, what, `is not usable (${failureText(error)})`);
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    throw unusable(directory, error);
  }
  let connection: Connection;
  try {
    connection = connect(file);
  } catch (error) {
    throw unusable(file, error);
  }
  try {
    connection.exec("PRAGMA busy_timeout = 0");
    // Nothing is ever written in the lock's transaction: no rollback journal to create beside the
    // lock file as it begins and delete as it ends (two more file operations a session).
    connection.exec("PRAGMA journal_mode = MEMORY");
    connection.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    connection.close();
    const code = sqliteCode(error);
    if (code === SQLITE_BUSY || code === SQLITE_LOCKED) throw new SessionLockedError(sessionId, holderPid(file));
    throw unusable(file, error);
  }
  // Who holds it, for the message a refused process shows (read only while the lock is held), where
  // the kernel's lock table cannot say.
  if (!kernelLockTable()) {
    try {
      writeFileSync(`${file}.pid`, String(process.pid));
    } catch {
      // Without it a refusal names no pid.
    }
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
