/**
 * A file-backed RunStore for the crash test's child processes, until the SQLite store (branch
 * `store`) is on main; swapping it in is one line in test/durable/crash-child.ts (`openStore`).
 * Per session: `<id>.jsonl` (one record per line, appended with one write each, so a killed
 * process leaves whole lines: a torn last line is ignored), `<id>.snapshot.json` (written to a
 * temporary file, then renamed) and `<id>.lock` holding the writer's pid (a lock whose process
 * is gone is taken over: the OS "released" it when the process died, R84).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Json, OpenSessionOptions, RunStore, SessionInfo, SessionReader, SessionWriter, StoredRecord, StoredSnapshot } from "../../src/store/run-store.js";
import { SessionLockedError, UnknownSessionError } from "../../src/store/errors.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export function fileRunStore(dir: string): RunStore {
  mkdirSync(dir, { recursive: true });
  const file = (id: string, ext: string) => join(dir, `${encodeURIComponent(id)}.${ext}`);
  const held = new Set<string>();
  const lines = (id: string): Json[] => {
    if (!existsSync(file(id, "jsonl"))) throw new UnknownSessionError(id);
    const out: Json[] = [];
    for (const line of readFileSync(file(id, "jsonl"), "utf8").split("\n")) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line) as Json);
      } catch {
        break; // a torn last line (the writer was killed mid-write)
      }
    }
    return out;
  };
  const reader = (id: string): SessionReader => ({
    sessionId: id,
    info: (): SessionInfo => {
      const stat = statSync(file(id, "jsonl"));
      return { sessionId: id, createdAt: stat.birthtimeMs, updatedAt: stat.mtimeMs, records: lines(id).length, meta: null };
    },
    records: (afterSeq = 0): StoredRecord[] => lines(id).slice(afterSeq).map((record, i) => ({ seq: afterSeq + i + 1, record })),
    snapshot: (): StoredSnapshot | undefined => (existsSync(file(id, "snapshot.json")) ? (JSON.parse(readFileSync(file(id, "snapshot.json"), "utf8")) as StoredSnapshot) : undefined),
  });
  const lock = (id: string) => {
    const path = file(id, "lock");
    if (existsSync(path)) {
      const pid = Number(readFileSync(path, "utf8"));
      if (pid !== process.pid && alive(pid)) throw new SessionLockedError(id);
      if (pid === process.pid && held.has(id)) throw new SessionLockedError(id);
    }
    writeFileSync(path, String(process.pid));
    held.add(id);
  };
  const unlock = (id: string) => {
    held.delete(id);
    rmSync(file(id, "lock"), { force: true });
  };
  return {
    openSession(id: string, options: OpenSessionOptions = {}): SessionWriter {
      if (!existsSync(file(id, "jsonl"))) {
        if (options.create === false) throw new UnknownSessionError(id);
        writeFileSync(file(id, "jsonl"), "");
      }
      lock(id);
      let count = lines(id).length;
      let released = false;
      const live = () => {
        if (released) throw new Error(`session ${id}: this writer was released`);
      };
      return {
        ...reader(id),
        append(record: Json): number {
          live();
          appendFileSync(file(id, "jsonl"), `${JSON.stringify(record)}\n`);
          return ++count;
        },
        saveSnapshot(snapshot: Json, atSeq: number): void {
          live();
          writeFileSync(file(id, "snapshot.tmp"), JSON.stringify({ snapshot, atSeq }));
          renameSync(file(id, "snapshot.tmp"), file(id, "snapshot.json"));
        },
        setMeta: () => live(),
        release(): void {
          if (released) return;
          released = true;
          unlock(id);
        },
      };
    },
    readSession: (id) => (lines(id), reader(id)),
    hasSession: (id) => existsSync(file(id, "jsonl")),
    listSessions: () => readdirSync(dir).filter((name) => name.endsWith(".jsonl")).map((name) => reader(decodeURIComponent(name.slice(0, -6))).info()),
    deleteSession(id) {
      lock(id);
      for (const ext of ["jsonl", "snapshot.json"]) rmSync(file(id, ext), { force: true });
      unlock(id);
    },
    prune: () => [],
    sizeReport: () => ({ sessions: 0, records: 0, bytes: 0 }),
    close() {
      for (const id of [...held]) unlock(id);
    },
  };
}
