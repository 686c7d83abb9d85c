/**
 * The in-memory RunStore (tests, browsers, `--no-save`): the same contract as the SQLite store,
 * held in this process. R84's single writer holds within the store object; nothing outlives the
 * process, so there is no crash to survive and nothing to migrate.
 */
import { SessionLockedError, StoreClosedError, StoreCorruptError, UnknownSessionError } from "./errors.js";
import { checkedText, crc32c } from "./checksum.js";
import { checkSeq, checkSessionId, decodeJson, encodeJson } from "./json-codec.js";
import type { Json, OpenSessionOptions, RunStore, SessionInfo, SessionReader, SessionWriter, SizeReport, StoredRecord, StoredSnapshot } from "./run-store.js";

export interface MemoryStoreOptions {
  /** The store's clock for `createdAt`/`updatedAt` and `prune` (epoch ms; default `Date.now`). */
  readonly clock?: () => number;
}

interface Session {
  readonly createdAt: number;
  /** Creation order: the tie-break of `listSessions` (as the SQLite store's rowid). */
  readonly order: number;
  updatedAt: number;
  readonly records: string[];
  /** R84: each record's CRC-32C (over its session, number and text), verified on read. */
  readonly checksums: number[];
  snapshot: { text: string; atSeq: number; checksum: number } | undefined;
  meta: string;
}

export function createMemoryStore(options: MemoryStoreOptions = {}): RunStore {
  const clock = options.clock ?? Date.now;
  const sessions = new Map<string, Session>();
  const locked = new Set<string>();
  let created = 0;
  let closed = false;

  const checkOpen = () => {
    if (closed) throw new StoreClosedError("the store is closed");
  };
  const find = (sessionId: string): Session => {
    const session = sessions.get(sessionId);
    if (!session) throw new UnknownSessionError(sessionId);
    return session;
  };

  const reader = (sessionId: string, checkUsable: () => void): SessionReader => ({
    sessionId,
    info() {
      checkUsable();
      return infoOf(sessionId, find(sessionId));
    },
    records(afterSeq = 0) {
      checkUsable();
      const session = find(sessionId);
      checkSeq(afterSeq, Number.MAX_SAFE_INTEGER, "afterSeq");
      return session.records.slice(afterSeq).map((text, index): StoredRecord => {
        const seq = afterSeq + index + 1;
        return { seq, record: verified(sessionId, seq, text, session.checksums[seq - 1], "record") };
      });
    },
    snapshot(): StoredSnapshot | undefined {
      checkUsable();
      const { snapshot } = find(sessionId);
      return snapshot && { snapshot: verified(sessionId, snapshot.atSeq, snapshot.text, snapshot.checksum, "snapshot"), atSeq: snapshot.atSeq };
    },
  });

  return {
    openSession(sessionId: string, { create = true, meta = null }: OpenSessionOptions = {}): SessionWriter {
      checkOpen();
      checkSessionId(sessionId);
      if (locked.has(sessionId)) throw new SessionLockedError(sessionId);
      if (!sessions.has(sessionId)) {
        if (!create) throw new UnknownSessionError(sessionId);
        const metaText = encodeJson(meta, "the session's meta");
        const now = clock();
        sessions.set(sessionId, { createdAt: now, order: created++, updatedAt: now, records: [], checksums: [], snapshot: undefined, meta: metaText });
      }
      locked.add(sessionId);
      let released = false;
      const checkUsable = () => {
        checkOpen();
        if (released) throw new StoreClosedError(`the writer of session ${sessionId} was released`);
      };
      return {
        ...reader(sessionId, checkUsable),
        append(record: Json): number {
          checkUsable();
          const text = encodeJson(record, "a journal record");
          const session = find(sessionId);
          session.records.push(text);
          session.checksums.push(crc32c(checkedText(sessionId, session.records.length, text)));
          session.updatedAt = clock();
          return session.records.length;
        },
        saveSnapshot(snapshot: Json, atSeq: number): void {
          checkUsable();
          const session = find(sessionId);
          checkSeq(atSeq, session.records.length, "a snapshot's atSeq");
          const text = encodeJson(snapshot, "a snapshot");
          session.snapshot = { text, atSeq, checksum: crc32c(checkedText(sessionId, atSeq, text)) };
          session.updatedAt = clock();
        },
        setMeta(meta: Json): void {
          checkUsable();
          const session = find(sessionId);
          session.meta = encodeJson(meta, "the session's meta");
          session.updatedAt = clock();
        },
        release(): void {
          if (released) return;
          released = true;
          locked.delete(sessionId);
        },
      };
    },
    holderOf(sessionId: string): { pid?: number } | undefined {
      checkOpen();
      return locked.has(sessionId) ? {} : undefined;
    },
    readSession(sessionId: string): SessionReader {
      checkOpen();
      checkSessionId(sessionId);
      find(sessionId);
      return reader(sessionId, checkOpen);
    },
    hasSession(sessionId: string): boolean {
      checkOpen();
      checkSessionId(sessionId);
      return sessions.has(sessionId);
    },
    listSessions(): SessionInfo[] {
      checkOpen();
      return [...sessions]
        .sort(([, a], [, b]) => b.updatedAt - a.updatedAt || b.order - a.order)
        .map(([sessionId, session]) => infoOf(sessionId, session));
    },
    deleteSession(sessionId: string): void {
      checkOpen();
      checkSessionId(sessionId);
      find(sessionId);
      if (locked.has(sessionId)) throw new SessionLockedError(sessionId);
      sessions.delete(sessionId);
    },
    prune({ olderThan }: { olderThan: number }): string[] {
      checkOpen();
      const pruned: string[] = [];
      for (const [sessionId, session] of sessions) {
        // A session with a live writer is in use, whatever its age: it stays.
        if (session.updatedAt < olderThan && !locked.has(sessionId)) pruned.push(sessionId);
      }
      for (const sessionId of pruned) sessions.delete(sessionId);
      return pruned;
    },
    sizeReport(): SizeReport {
      checkOpen();
      const encoder = new TextEncoder();
      let records = 0;
      let bytes = 0;
      for (const session of sessions.values()) {
        records += session.records.length;
        for (const text of session.records) bytes += encoder.encode(text).length;
        bytes += encoder.encode(session.meta).length + (session.snapshot ? encoder.encode(session.snapshot.text).length : 0);
      }
      return { sessions: sessions.size, records, bytes };
    },
    close(): void {
      closed = true;
      locked.clear();
    },
  };
}

/** R84: the stored JSON, if its checksum still matches; else `StoreCorruptError` naming the session and number. */
function verified(sessionId: string, seq: number, text: string, checksum: number, what: "record" | "snapshot"): Json {
  if (crc32c(checkedText(sessionId, seq, text)) !== checksum) throw new StoreCorruptError("(memory)", "does not match its checksum", { sessionId, seq, what });
  return decodeJson(text);
}

function infoOf(sessionId: string, session: Session): SessionInfo {
  return {
    sessionId,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    records: session.records.length,
    meta: decodeJson(session.meta),
  };
}
