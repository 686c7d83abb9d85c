/**
 * The inspector's forks: which sessions can be forked (their sources), the forks started, the
 * approvals they wait for, and each fork's transcript beside its original's with the first
 * difference marked. Everything the page learns of it goes out as wire messages.
 */
import { replayEvents } from "../durable/replay.js";
import { sanitizeValue, type SanitizeOptions } from "../inspect/sanitize.js";
import type { AttachableObserver } from "../boundary/inspect-observer.js";
import type { AgentMessage } from "../types.js";
import { divergence, transcriptLine, type ForkPoint, type TranscriptLine } from "./fork-points.js";
import { confirmedStreamFn, editedResponse, ForkError, forkStreamFn, gatedTool, pointsOf, recordingStreamFn, seedFork, type ApprovalDecision, type ForkEdit, type ForkSource } from "./fork.js";
import type { WireMessage } from "./feed.js";

export interface ForkRequest {
  /** The session to fork (a source's `sessionId`, or a fork's). */
  session: string;
  /** The point: the last record the fork keeps (a `ForkPoint.seq`). */
  seq: number;
  /** Replaces the response that follows the point (only at a point before a response). */
  edit?: ForkEdit;
}

export interface StartedFork {
  sessionId: string;
  /** Settles when the fork's run ended (rejects when its runner failed). */
  done: Promise<void>;
}

/** A call of a fork waiting for approval (what the page shows). */
export interface ForkApprovalRequest {
  session: string;
  id: string;
  tool: string;
  args: unknown;
}

/** The approval id under which a fork waits before its first request to a paid model. */
export const PAID_MODEL_APPROVAL = "paid-model";

interface Waiting {
  session: string;
  id: string;
  decide: (decision: ApprovalDecision) => void;
}

export interface ForkManager {
  addSource(source: ForkSource): void;
  points(session: string): { points: ForkPoint[]; paidModel?: string };
  fork(request: ForkRequest): StartedFork;
  /** Answers an approval a fork waits for (false: none waits under that id). */
  decide(session: string, approvalId: string, decision: ApprovalDecision): boolean;
  /** The fork's transcript and its original's, and where they first differ. */
  compare(forkId: string): Promise<Extract<WireMessage, { t: "compare" }>>;
}

export function createForkManager(options: {
  observer: AttachableObserver;
  note: (message: WireMessage) => void;
  reserve: (session: string) => void;
  sanitize: SanitizeOptions;
  /** Answers an approval without the page (undefined: the page answers). */
  answer?: (request: ForkApprovalRequest) => ApprovalDecision | undefined;
}): ForkManager {
  const sources = new Map<string, ForkSource>();
  const forks = new Map<string, { of: string; seq: number }>();
  const waiting = new Map<string, Waiting>();
  let count = 0;

  const sourceOf = (session: string): ForkSource => {
    const source = sources.get(session);
    if (!source) throw new ForkError(`session ${JSON.stringify(session)} cannot be forked (not a durable session the inspector was given)`);
    return source;
  };

  const ask = (session: string, id: string, tool: string, args: unknown, decide: (decision: ApprovalDecision) => void) => {
    const key = `${session}\n${id}`;
    if (waiting.has(key)) return;
    waiting.set(key, { session, id, decide });
    options.note({ t: "approval", s: session, id, tool, args: sanitizeValue(args, options.sanitize), state: "waiting" });
    const answer = options.answer?.({ session, id, tool, args });
    if (answer) manager.decide(session, id, answer);
  };

  const transcriptOf = async (source: ForkSource, session: string): Promise<TranscriptLine[]> => {
    const events = await replayEvents(source.store.readSession(session).records());
    return events.flatMap((event) => (event.type === "message_end" ? [transcriptLine(event.message as AgentMessage)] : []));
  };

  const manager: ForkManager = {
    addSource(source) {
      sources.set(source.sessionId, source);
      options.reserve(source.sessionId);
      options.note({ t: "forkable", s: source.sessionId });
    },
    points(session) {
      const source = sourceOf(session);
      return { points: pointsOf(source), ...(source.paidModel ? { paidModel: source.paidModel } : {}) };
    },
    fork({ session, seq, edit }) {
      const source = sourceOf(session);
      const point = pointsOf(source).find((candidate) => candidate.seq === seq);
      if (!point) throw new ForkError(`session ${session} has no fork point at record ${seq}`);
      if (edit && (typeof edit.text !== "string" || !point.beforeResponse)) throw new ForkError("an edit replaces the response after a point before a request, as { text, keepCalls? }");
      let sessionId: string;
      do sessionId = `${session}~fork${++count}`;
      while (source.store.hasSession(sessionId));
      seedFork(source.store, session, seq, sessionId);
      forks.set(sessionId, { of: session, seq });
      options.note({ t: "fork", s: session, fork: sessionId, seq, label: point.label, edited: edit !== undefined });
      // A fork is forkable too, with its original's implementations.
      manager.addSource({ ...source, sessionId });
      const first = edit ? editedResponse(point, edit) : undefined;
      const done = source
        .run({
          sessionId,
          durable: { store: source.store, sessionId },
          point,
          streamFn: (base) =>
            forkStreamFn(
              first,
              !base
                ? recordingStreamFn(source, seq, first ? 1 : 0)
                : source.paidModel
                  ? confirmedStreamFn(base, () => new Promise((resolve) => ask(sessionId, PAID_MODEL_APPROVAL, "paid model", { model: source.paidModel }, resolve)))
                  : base,
            ),
          tools: (tools) =>
            tools.map((tool) =>
              tool.replay === "safe" || tool.needsApproval === true
                ? tool
                : gatedTool(tool, (toolCallId, args) => new Promise((resolve) => ask(sessionId, `run:${toolCallId}`, tool.name, args, resolve))),
            ),
          // Watched under the fork's id, whatever the runner's entry point calls its root.
          inspect: { attach: (root) => options.observer.attach({ ...root, sessionId }) },
          askApproval: (request, decide) => ask(sessionId, request.approvalId, request.toolName, request.args, decide),
        })
        .then(
          async () => {
            options.note(await manager.compare(sessionId));
          },
          (error: unknown) => {
            // The page says why the fork stopped; the caller learns it through `done`.
            options.note({ t: "forkFailed", s: sessionId, error: sanitizeValue(error instanceof Error ? error.message : String(error), options.sanitize) as string });
            throw error;
          },
        );
      done.catch(() => {});
      return { sessionId, done };
    },
    decide(session, approvalId, decision) {
      const key = `${session}\n${approvalId}`;
      const entry = waiting.get(key);
      if (!entry) return false;
      waiting.delete(key);
      options.note({ t: "approval", s: session, id: approvalId, tool: "", args: null, state: decision.approve ? "approved" : "rejected" });
      entry.decide(decision);
      return true;
    },
    async compare(forkId) {
      const fork = forks.get(forkId);
      if (!fork) throw new ForkError(`${JSON.stringify(forkId)} is not a fork`);
      const source = sourceOf(forkId);
      const [original, forked] = await Promise.all([transcriptOf(source, fork.of), transcriptOf(source, forkId)]);
      const shown = (lines: TranscriptLine[]) => lines.map(({ role, text }) => ({ role, text: sanitizeValue(text, options.sanitize) as string }));
      return { t: "compare", s: forkId, of: fork.of, seq: fork.seq, original: shown(original), fork: shown(forked), diverge: divergence(original, forked) };
    },
  };
  return manager;
}
