/**
 * The agent event stream a remote `useAgent` reads (`GET <api>/<chatId>/events`): server-sent
 * events of JSON frames, our own events with their sequence numbers rather than `useChat`'s parts,
 * so the page can keep the same transcript the session keeps. Deltas travel without the partial
 * message they repeat (the stream proxy's `ProxyAssistantMessageEvent`; the client rebuilds it),
 * and `agent_end` / `turn_end` without the messages the transcript already has.
 */
import type { AgentEndReason, AnyAgentEvent } from "../protocol/events.js";
import type { AgentMessage, Usage } from "../protocol/messages.js";
import { toProxyEvent, type ProxyAssistantMessageEvent } from "../proxy/wire.js";

/** An event as it crosses the wire. */
export type WireAgentEvent =
  | Exclude<AnyAgentEvent, { type: "message_update" | "agent_end" | "turn_end" }>
  | { type: "message_update"; delta: ProxyAssistantMessageEvent }
  | { type: "agent_end"; reason?: AgentEndReason }
  | { type: "turn_end" };

/** What no event carries: read from the session after each change and sent when it differs. */
export interface RemoteSessionStatus {
  queues: { steering: AgentMessage[]; followUp: AgentMessage[] };
  lastEndReason: AgentEndReason | undefined;
  usage: Usage;
  errorMessage: string | undefined;
}

export type AgentStreamFrame =
  /**
   * First frame of every response. `epoch` names the source's numbering (a new one after the
   * route reopened the session): a client's `after` counts only in the same epoch. `reset`: the
   * client's `after` could not be replayed, so its state restarts from this transcript, at `seq`.
   */
  | { type: "open"; epoch: string; reset?: { seq: number; messages: AgentMessage[] } }
  | { type: "status"; status: RemoteSessionStatus }
  /** The events the source held were all sent: from here on they come as they happen. */
  | { type: "live"; seq: number }
  | { type: "event"; seq: number; event: WireAgentEvent };

export function toWireEvent(event: AnyAgentEvent): WireAgentEvent {
  switch (event.type) {
    case "message_update":
      return { type: "message_update", delta: toProxyEvent(event.assistantMessageEvent) };
    case "agent_end":
      return { type: "agent_end", ...(event.reason ? { reason: event.reason } : {}) };
    case "turn_end":
      return { type: "turn_end" };
    default:
      return event;
  }
}

/** The path of the event stream under the route's api path: `<api>/<chatId>/events`. */
export const AGENT_EVENTS_SEGMENT = "events";
