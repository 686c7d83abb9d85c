/**
 * One client's agent event stream (`GET <api>/<chatId>/events?after=N&epoch=E`): the session's
 * events from the client's `after` on, when the source still holds them, or else a `reset` to
 * the transcript before the run in progress followed by that run's events. Either way every
 * event reaches the client once, in order (no text twice, none missing). The stream is the
 * session's, not a run's: it stays open across runs until the client goes away (disconnect is not
 * stop) or the route releases the session.
 */
import type { Agent } from "../agent/agent.js";
import { toWireEvent, type AgentStreamFrame, type RemoteSessionStatus } from "./agent-frames.js";
import type { AgentMessage } from "../protocol/messages.js";
import type { RunEventBuffer } from "./event-source.js";

/** Told when something no event reports changed (a queue), and when the session closes. */
export interface SessionWatcher {
  status(): void;
  end(): void;
}

export interface AgentStreamSession {
  agent: Agent;
  source: Pick<RunEventBuffer, "subscribe" | "lastSeq" | "runStartAfter" | "transcriptLengthAtRunStart">;
  /** The source's numbering: a client's `after` from another epoch is not replayed. */
  epoch: string;
  watchers: Set<SessionWatcher>;
}

export interface AgentStreamRequest {
  after?: number;
  epoch?: string;
  signal?: AbortSignal;
}

const sessions = new WeakMap<object, { epoch: string; watchers: Set<SessionWatcher> }>();

/** The stream state of a source: its epoch (a new source numbers from 1 again) and its open streams. */
export function streamSessionOf(agent: Agent, source: AgentStreamSession["source"]): AgentStreamSession {
  let state = sessions.get(source);
  if (!state) sessions.set(source, (state = { epoch: globalThis.crypto.randomUUID(), watchers: new Set() }));
  return { agent, source, ...state };
}

/** Whether a client reads `source` now (the route keeps such a session open). */
export function hasStreams(source: object): boolean {
  return (sessions.get(source)?.watchers.size ?? 0) > 0;
}

/** Tells the open streams of `source` that the session changed (`status`) or closed (`end`). */
export function notifyStreams(source: object, what: keyof SessionWatcher): void {
  for (const watcher of [...(sessions.get(source)?.watchers ?? [])]) watcher[what]();
}

const encoder = new TextEncoder();
const frame = (value: AgentStreamFrame) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`);

export function statusOf(agent: Agent): RemoteSessionStatus {
  const { steering, followUp } = agent.queuedMessages;
  return { queues: { steering: [...steering], followUp: [...followUp] }, lastEndReason: agent.lastEndReason, usage: agent.usage, errorMessage: agent.state.errorMessage };
}

const statusKey = (status: RemoteSessionStatus) =>
  [status.queues.steering.length, status.queues.followUp.length, status.lastEndReason, status.usage.totalTokens, status.usage.cost.total, status.errorMessage].join("|");

/** Where the client's state restarts when its `after` cannot be replayed: before the run in progress, or now when idle. */
function resetPoint(session: AgentStreamSession): { seq: number; messages: AgentMessage[] } {
  const { agent, source } = session;
  if (!agent.state.isStreaming) return { seq: source.lastSeq, messages: [...agent.state.messages] };
  return { seq: source.runStartAfter, messages: agent.state.messages.slice(0, source.transcriptLengthAtRunStart) };
}

export function streamAgentEvents(session: AgentStreamSession, request: AgentStreamRequest): Response {
  const { agent, source } = session;
  let close = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const after = request.after;
      // The source holds the events after `runStartAfter` (the run in progress, or the last one).
      const replayable = request.epoch === session.epoch && after !== undefined && after >= source.runStartAfter && after <= source.lastSeq;
      const reset = replayable ? undefined : resetPoint(session);
      controller.enqueue(frame({ type: "open", epoch: session.epoch, ...(reset ? { reset } : {}) }));
      let sentStatus = "";
      const sendStatus = () => {
        const status = statusOf(agent);
        const key = statusKey(status);
        if (key === sentStatus) return;
        sentStatus = key;
        controller.enqueue(frame({ type: "status", status }));
      };
      sendStatus();
      let closed = false;
      const watcher: SessionWatcher = { status: sendStatus, end: () => close() };
      const unsubscribe = source.subscribe(
        ({ seq, event }) => {
          controller.enqueue(frame({ type: "event", seq, event: toWireEvent(event) }));
          // Usage, the end reason and the queues change at these events (a drain point takes a user message in).
          if (event.type === "message_end" || event.type === "agent_end" || event.type === "message_start") sendStatus();
        },
        { after: reset ? reset.seq : after },
      );
      // The source replays what it holds synchronously in subscribe().
      controller.enqueue(frame({ type: "live", seq: source.lastSeq }));
      close = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        session.watchers.delete(watcher);
        request.signal?.removeEventListener("abort", close);
        try {
          controller.close();
        } catch {
          // The reader went away first.
        }
      };
      session.watchers.add(watcher);
      if (request.signal?.aborted) return close();
      request.signal?.addEventListener("abort", close, { once: true });
    },
    cancel() {
      close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no", "x-agent-event-stream": "v1" } });
}
