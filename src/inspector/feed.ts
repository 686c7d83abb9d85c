/**
 * The live inspector's data side (no I/O): an attachable inspection observer that records each
 * watched run or session as a list of small wire messages (actors, snapshots, events), sanitized
 * by the project's sanitizer so no secret leaves the process. Inside XState's transition the
 * observer only keeps references (context and events are immutable, R13); sanitizing and sending
 * happen after, once per flush, so a busy stream pays per batch and not per event.
 */
import type { AnyEventObject, InspectionEvent } from "xstate";
import type { AttachableObserver, ObservedRoot } from "../boundary/inspect-observer.js";
import { sanitizeEvent, sanitizeSnapshot, sanitizeValue, type SanitizeOptions } from "../inspect/sanitize.js";

/** One message on the live channel. `s`: the session (watched root) it belongs to; `n`: its step. */
export type WireMessage =
  | { t: "session"; s: string; kind: ObservedRoot["kind"] | "recorded"; at: number }
  | { t: "actor"; s: string; n: number; a: string; id: string; parent: string | null; machine: string | null; system: string | null }
  | { t: "snap"; s: string; n: number; a: string; status: string; value: unknown; context: unknown }
  | { t: "event"; s: string; n: number; a: string; from: string | null; type: string; event: unknown }
  /** Session `s` can be forked (the page then asks for its points). */
  | { t: "forkable"; s: string }
  /** A fork of session `s` started (time travel, forks.ts): `fork` is its session. */
  | { t: "fork"; s: string; fork: string; seq: number; label: string; edited: boolean }
  /** A call of fork `s` waits for the page's approval, or was decided. */
  | { t: "approval"; s: string; id: string; tool: string; args: unknown; state: "waiting" | "approved" | "rejected" }
  /** Fork `s` ended: its transcript beside its original's, and the first index where they differ. */
  | {
      t: "compare";
      s: string;
      of: string;
      seq: number;
      original: { role: string; text: string }[];
      fork: { role: string; text: string }[];
      diverge: number | null;
    };

type Pending =
  | { t: "actor"; s: string; n: number; ref: ActorLike; parent?: string }
  | { t: "snap"; s: string; n: number; ref: ActorLike; snapshot: unknown }
  | { t: "event"; s: string; n: number; ref: ActorLike; from: ActorLike | undefined; event: AnyEventObject };

/** What the feed reads of an XState actor ref (its `logic` is internal, so read defensively). */
interface ActorLike {
  sessionId: string;
  id: string;
  systemId?: string;
  logic?: { id?: unknown; config?: unknown };
}

export interface FeedOptions {
  sanitize?: SanitizeOptions;
  /** Messages kept per session for pages that connect later (oldest dropped first). Default 5,000. */
  maxMessagesPerSession?: number;
  /** Sessions kept (oldest dropped first). Default 20. */
  maxSessions?: number;
}

export interface InspectorFeed {
  observer: AttachableObserver;
  /** Sanitizes what was observed since the last call, records it and returns it (empty when nothing). */
  drain(): WireMessage[];
  /** Everything still kept, in order: what a page that connects now starts from. */
  history(): WireMessage[];
  /** Called (once per batch) when something was observed and a drain is due. */
  onPending(listener: () => void): void;
  /** Lists session `id` (a recorded one) before anything of it is observed; a root observed later under that id continues it. */
  reserve(id: string): void;
  /** Sends a message of the inspector's own (already sanitized) with the next batch, kept in its session's history. */
  note(message: WireMessage): void;
}

export function createInspectorFeed(options: FeedOptions = {}): InspectorFeed {
  // One options object for the feed's life: the sanitizer reuses sanitized forms per options object.
  const sanitize: SanitizeOptions = { ...options.sanitize };
  const maxMessages = options.maxMessagesPerSession ?? 5_000;
  const maxSessions = options.maxSessions ?? 20;
  const sessions = new Map<string, WireMessage[]>();
  const pending: Pending[] = [];
  /** Sessions opened since the last drain (already in `sessions`, not yet sent). */
  const announced: WireMessage[] = [];
  let ready: (() => void) | undefined;
  let count = 0;

  const queue = (item: Pending) => {
    if (pending.length === 0) ready?.();
    pending.push(item);
  };

  /** Sessions listed before anything of theirs was observed (a forkable store session): the first root with the id takes them. */
  const reserved = new Set<string>();

  const startSession = (root: ObservedRoot): string => {
    let id = root.sessionId ?? `${root.kind}-${++count}`;
    if (reserved.delete(id) && sessions.has(id)) {
      // A listed recorded session is being watched live now: it says so.
      const opening: WireMessage = { t: "session", s: id, kind: root.kind, at: Date.now() };
      sessions.get(id)![0] = opening;
      announced.push(opening);
      return id;
    }
    if (sessions.has(id)) id = `${id}#${++count}`;
    while (sessions.size >= maxSessions) sessions.delete(sessions.keys().next().value as string);
    const opening: WireMessage = { t: "session", s: id, kind: root.kind, at: Date.now() };
    sessions.set(id, [opening]);
    announced.push(opening);
    return id;
  };

  const observer: AttachableObserver = {
    attach(root) {
      let session: string | undefined;
      let step = 0;
      // Actors announced: one attached after its actors started (the CLI's) learns them from their first step.
      const known = new Map<string, Extract<Pending, { t: "actor" }>>();
      return (inspection: InspectionEvent) => {
        session ??= startSession(root);
        const s = session;
        const ref = inspection.actorRef as unknown as ActorLike;
        if (!known.has(ref.sessionId)) {
          const announced: Extract<Pending, { t: "actor" }> = { t: "actor", s, n: step++, ref };
          known.set(ref.sessionId, announced);
          queue(announced);
        }
        if (inspection.type === "@xstate.actor") return;
        if (inspection.type === "@xstate.snapshot") queue({ t: "snap", s, n: step++, ref, snapshot: inspection.snapshot });
        else if (inspection.type === "@xstate.event") {
          // XState names who started an actor on its `xstate.init` event (`sourceRef`): its parent.
          // The announcement is sent with the next batch, so it still takes the parent.
          if (inspection.event.type === "xstate.init" && inspection.sourceRef) known.get(ref.sessionId)!.parent = inspection.sourceRef.sessionId;
          queue({ t: "event", s, n: step++, ref, from: inspection.sourceRef as unknown as ActorLike | undefined, event: inspection.event });
        }
      };
    },
  };

  const wire = (item: Pending): WireMessage => {
    const a = item.ref.sessionId;
    if (item.t === "actor") {
      const logic = item.ref.logic;
      const machine = logic && typeof logic.id === "string" && logic.config ? logic.id : null;
      const text = (value: unknown) => (typeof value === "string" ? (sanitizeValue(value, sanitize) as string) : null);
      return { t: "actor", s: item.s, n: item.n, a, id: text(item.ref.id) ?? a, parent: item.parent ?? null, machine, system: text(item.ref.systemId) };
    }
    if (item.t === "snap") {
      const clean = sanitizeSnapshot(item.snapshot, sanitize);
      return { t: "snap", s: item.s, n: item.n, a, status: String(clean.status), value: clean.value ?? null, context: clean.context ?? null };
    }
    const event = sanitizeEvent(item.event, sanitize);
    return { t: "event", s: item.s, n: item.n, a, from: item.from?.sessionId ?? null, type: String(event.type), event };
  };

  return {
    observer,
    drain() {
      if (pending.length === 0 && announced.length === 0) return [];
      const batch = pending.splice(0, pending.length);
      const out: WireMessage[] = announced.splice(0, announced.length);
      for (const item of batch) {
        const log = sessions.get(item.s);
        if (!log) continue; // the session was dropped (too many)
        const message = wire(item);
        log.push(message);
        // The session's opening message stays: a page needs it to list the session.
        if (log.length > maxMessages) log.splice(1, log.length - maxMessages);
        out.push(message);
      }
      return out;
    },
    history() {
      return [...sessions.values()].flat();
    },
    onPending(listener) {
      ready = listener;
    },
    reserve(id) {
      if (sessions.has(id)) return;
      while (sessions.size >= maxSessions) sessions.delete(sessions.keys().next().value as string);
      const opening: WireMessage = { t: "session", s: id, kind: "recorded", at: Date.now() };
      sessions.set(id, [opening]);
      reserved.add(id);
      this.note(opening);
      sessions.get(id)!.pop();
    },
    note(message) {
      if (pending.length === 0 && announced.length === 0) ready?.();
      sessions.get(message.s)?.push(message);
      announced.push(message);
    },
  };
}
