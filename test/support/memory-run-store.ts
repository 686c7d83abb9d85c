/**
 * A minimal in-memory RunStore for the journal's tests (the real one is src/store/memory-store.ts,
 * built on the `store` branch): records and snapshots are JSON-copied in and out, one writer per
 * session (a second gets `SessionLockedError`, as R84 asks of every store).
 */
import type { Json, OpenSessionOptions, RunStore, SessionInfo, SessionReader, SessionWriter, SizeReport, StoredRecord, StoredSnapshot } from "../../src/store/run-store.js";
import { SessionLockedError, UnknownSessionError } from "../../src/store/errors.js";

interface Session {
  info: { createdAt: number; updatedAt: number; meta: Json };
  records: string[];
  snapshot: { json: string; atSeq: number } | undefined;
  locked: boolean;
}

export function memoryRunStore(now: () => number = Date.now): RunStore & { appends(): number } {
  const sessions = new Map<string, Session>();
  let appends = 0;
  const get = (sessionId: string): Session => {
    const session = sessions.get(sessionId);
    if (!session) throw new UnknownSessionError(sessionId);
    return session;
  };
  const reader = (sessionId: string): SessionReader => ({
    sessionId,
    info: (): SessionInfo => {
      const session = get(sessionId);
      return { sessionId, ...session.info, records: session.records.length };
    },
    records: (afterSeq = 0): StoredRecord[] => get(sessionId).records.slice(afterSeq).map((json, i) => ({ seq: afterSeq + i + 1, record: JSON.parse(json) as Json })),
    snapshot: (): StoredSnapshot | undefined => {
      const snapshot = get(sessionId).snapshot;
      return snapshot ? { snapshot: JSON.parse(snapshot.json) as Json, atSeq: snapshot.atSeq } : undefined;
    },
  });
  return {
    appends: () => appends,
    openSession(sessionId: string, options: OpenSessionOptions = {}): SessionWriter {
      let session = sessions.get(sessionId);
      if (!session) {
        if (options.create === false) throw new UnknownSessionError(sessionId);
        session = { info: { createdAt: now(), updatedAt: now(), meta: options.meta ?? null }, records: [], snapshot: undefined, locked: false };
        sessions.set(sessionId, session);
      }
      if (session.locked) throw new SessionLockedError(sessionId);
      session.locked = true;
      let released = false;
      const live = () => {
        if (released) throw new Error(`session ${sessionId}: this writer was released`);
        return session!;
      };
      return {
        ...reader(sessionId),
        append(record: Json): number {
          const s = live();
          s.records.push(JSON.stringify(record));
          s.info.updatedAt = now();
          appends++;
          return s.records.length;
        },
        saveSnapshot(snapshot: Json, atSeq: number): void {
          live().snapshot = { json: JSON.stringify(snapshot), atSeq };
        },
        setMeta(meta: Json): void {
          live().info.meta = meta;
        },
        release(): void {
          if (released) return;
          released = true;
          session!.locked = false;
        },
      };
    },
    readSession: (sessionId) => (get(sessionId), reader(sessionId)),
    hasSession: (sessionId) => sessions.has(sessionId),
    listSessions: () => [...sessions.keys()].map((id) => reader(id).info()).sort((a, b) => b.updatedAt - a.updatedAt),
    deleteSession(sessionId) {
      if (get(sessionId).locked) throw new SessionLockedError(sessionId);
      sessions.delete(sessionId);
    },
    prune: ({ olderThan }) => [...sessions].filter(([, s]) => !s.locked && s.info.updatedAt < olderThan).map(([id]) => (sessions.delete(id), id)),
    sizeReport: (): SizeReport => {
      let records = 0;
      let bytes = 0;
      for (const s of sessions.values()) {
        records += s.records.length;
        bytes += s.records.reduce((n, r) => n + r.length, 0) + (s.snapshot?.json.length ?? 0);
      }
      return { sessions: sessions.size, records, bytes };
    },
    close() {
      for (const s of sessions.values()) s.locked = false;
    },
  };
}
