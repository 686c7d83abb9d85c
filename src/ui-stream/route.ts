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
import { hasStreams, notifyStreams } from "./agent-stream.js";
import { readChatRequest } from "./request.js";

export interface UIMessageStreamOptions {
  /** Where the Agent's events are read from; default: an in-memory buffer of its current run, made on first use. */
  source?: SequencedEventSource;
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
    const chatRequest = await readChatRequest(request);
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
  const sessions = new Map<string, OpenSession>();
  const opening = new Map<string, Promise<OpenSession>>();

  const release = (chatId: string) => {
    const session = sessions.get(chatId);
    if (!session) return;
    clearTimeout(session.timer);
    session.stopWatching();
    notifyStreams(session.source, "end");
    session.source.close();
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
        const session: OpenSession = { agent, source: runEventBuffer(agent), stopWatching: () => {} };
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
        const chatRequest = await readChatRequest(request);
        if (chatRequest.chatId === undefined) throw new UIStreamRequestError("invalid_request", 400, "Resume is GET <api>/<chatId>/stream");
        // A reconnect to a chat this process does not hold has nothing live to attach to.
        if (chatRequest.kind === "resume" && !sessions.has(chatRequest.chatId)) return new Response(null, { status: 204 });
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
