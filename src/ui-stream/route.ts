/**
 * The route: Web `Request` in, `Response` out (Node, Next.js route handlers, Hono, Workers).
 * `toUIMessageStreamResponse(agent, request)` serves one Agent; `createChatRoute` maps chat ids to
 * open Agents and releases them when idle. One process owns a session (a durable session has one
 * writer): several processes need sticky routing by chat id, or sessions on Restate.
 */
import type { Agent } from "../agent/agent.js";
import { errorResponse, UIStreamRequestError } from "./errors.js";
import { runEventBuffer, type RunEventBuffer, type SequencedEventSource } from "./event-source.js";
import { handleChatRequest } from "./handle.js";
import { durableEventSource } from "./durable-source.js";
import { hasStreams, notifyStreams } from "./agent-stream.js";
import { readChatRequest } from "./request.js";
import { DEFAULT_MAX_BODY_BYTES } from "./body.js";
import { answerWithoutSession } from "./handle.js";

export interface UIMessageStreamOptions {
  /** Where the Agent's events are read from; default: an in-memory buffer of its current run, made on first use. */
  source?: SequencedEventSource;
  /** The largest body read, in bytes (default 4 MiB): a larger one is answered 413 `payload_too_large`, and no more of it is read. */
  maxBodyBytes?: number;
}

const buffers = new WeakMap<Agent, RunEventBuffer>();

/** The in-memory event buffer `toUIMessageStreamResponse` uses for `agent` (made now if it has none). */
export function eventSourceOf(agent: Agent): RunEventBuffer {
  let buffer = buffers.get(agent);
  if (!buffer) buffers.set(agent, (buffer = runEventBuffer(agent)));
  return buffer;
}

/** Serves one `useChat` request (or a stop, steer, follow-up post) against `agent`. Never rejects for bad input: 4xx with a JSON `error`. */
export async function toUIMessageStreamResponse(agent: Agent, request: Request, options: UIMessageStreamOptions = {}): Promise<Response> {
  try {
    const chatRequest = await readChatRequest(request, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    return await handleChatRequest(agent, options.source ?? eventSourceOf(agent), chatRequest, request.signal);
  } catch (error) {
    if (error instanceof UIStreamRequestError) return errorResponse(error);
    throw error;
  }
}

export interface ChatRouteOptions {
  /** Opens the Agent of a chat (a new one, or one restored from a store). */
  createAgent(chatId: string): Agent | Promise<Agent>;
  /** How long an idle session stays open after its last request or run (default 5 minutes). */
  idleTimeoutMs?: number;
  /**
   * The largest body read, in bytes (default 4 MiB; `useChat` posts the whole conversation each
   * time): a larger one is answered 413 `payload_too_large`, and no more of it is read.
   */
  maxBodyBytes?: number;
}

export interface ChatRoute {
  handle(request: Request): Promise<Response>;
  /** The open Agent of a chat, if any. */
  agent(chatId: string): Agent | undefined;
  /** The chat's event source (for `uiMessagesOf`). */
  source(chatId: string): RunEventBuffer | undefined;
  /** Closes every session (their runs are not aborted). */
  close(): void;
}

interface OpenSession {
  agent: Agent;
  source: RunEventBuffer;
  timer?: ReturnType<typeof setTimeout>;
  stopWatching: () => void;
}

export function createChatRoute(options: ChatRouteOptions): ChatRoute {
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const sessions = new Map<string, OpenSession>();
  const opening = new Map<string, Promise<OpenSession>>();

  const release = (chatId: string) => {
    const session = sessions.get(chatId);
    if (!session) return;
    clearTimeout(session.timer);
    session.stopWatching();
    notifyStreams(session.source, "end");
    session.source.close();
    // R84: a durable session's writer lock goes with it, so the next open (here or elsewhere) can take it.
    if (session.agent.sequence && !session.agent.state.isStreaming) session.agent.release();
    sessions.delete(chatId);
  };
  const touch = (chatId: string, session: OpenSession) => {
    clearTimeout(session.timer);
    session.timer = setTimeout(() => (session.agent.state.isStreaming || hasStreams(session.source) ? touch(chatId, session) : release(chatId)), idleTimeoutMs);
    (session.timer as { unref?: () => void }).unref?.();
  };
  const open = (chatId: string): Promise<OpenSession> => {
    const existing = sessions.get(chatId);
    if (existing) return Promise.resolve(existing);
    let pending = opening.get(chatId);
    if (!pending) {
      pending = Promise.resolve(options.createAgent(chatId)).then((agent) => {
        // A durable Agent's events come from its session (R81: any sequence number, stored runs too); else the run in memory.
        const source = agent.sequence ? durableEventSource(agent, { epoch: `durable:${chatId}` }) : runEventBuffer(agent);
        const session: OpenSession = { agent, source, stopWatching: () => {} };
        // The idle clock starts again when a run ends.
        session.stopWatching = agent.subscribe((event) => void (event.type === "agent_end" && touch(chatId, session)));
        sessions.set(chatId, session);
        return session;
      });
      opening.set(chatId, pending);
      pending.finally(() => opening.delete(chatId)).catch(() => {});
    }
    return pending;
  };

  return {
    async handle(request) {
      try {
        const chatRequest = await readChatRequest(request, maxBodyBytes);
        if (chatRequest.chatId === undefined) throw new UIStreamRequestError("invalid_request", 400, "Resume is GET <api>/<chatId>/stream");
        // A request about a run in progress, for a chat this process does not hold: it has no run
        // here, so it is answered as an idle session would be, without opening one (any id would
        // otherwise cost a `createAgent`). Only a new message, `resume` and the event stream open a chat.
        // (A chat still opening holds the run the request is about: it waits for it below.)
        if (!sessions.has(chatRequest.chatId) && !opening.has(chatRequest.chatId)) {
          const answer = answerWithoutSession(chatRequest);
          if (answer) return answer;
        }
        const session = await open(chatRequest.chatId);
        touch(chatRequest.chatId, session);
        return await handleChatRequest(session.agent, session.source, chatRequest, request.signal);
      } catch (error) {
        if (error instanceof UIStreamRequestError) return errorResponse(error);
        throw error;
      }
    },
    agent: (chatId) => sessions.get(chatId)?.agent,
    source: (chatId) => sessions.get(chatId)?.source,
    close() {
      for (const chatId of [...sessions.keys()]) release(chatId);
    },
  };
}
