import { Agent, scriptedModel, scriptedStreamFn, type AgentEvent, type AgentInitialState, type AgentMessage, type AgentOptions } from "../../src/index.js";
import type { Script, ScriptedCall, ScriptedStreamFn } from "../../src/index.js";
import { logEntry, textOf } from "../loop/helpers.js";

export interface AgentScenario {
  agent: Agent;
  stream: ScriptedStreamFn;
  /** Every event except deltas, as `logEntry` writes it, interleaved with notes. */
  log: string[];
  events: AgentEvent[];
  note: (entry: string) => void;
}

/** An Agent on the scripted model that logs every event through a first listener. */
export function scenario(script: Script, options: Partial<AgentOptions> = {}, initialState: AgentInitialState = {}): AgentScenario {
  const stream = scriptedStreamFn(script);
  const agent = new Agent({ streamFn: stream, ...options, initialState: { model: scriptedModel, ...initialState } });
  const log: string[] = [];
  const events: AgentEvent[] = [];
  agent.subscribe((event) => {
    events.push(event);
    if (event.type !== "message_update") log.push(logEntry(event));
  });
  return { agent, stream, log, events, note: (entry) => void log.push(entry) };
}

/** A user message with a distinct text. */
export const says = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });

/** Per request: the texts of the user messages after the last assistant message it was sent. */
export function requestTails(stream: ScriptedStreamFn): string[][] {
  return stream.calls.map(tail);
}

function tail(call: ScriptedCall): string[] {
  const messages = call.context.messages;
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "assistant") {
      start = i + 1;
      break;
    }
  }
  return messages.slice(start).filter((m) => m.role === "user").map(textOf);
}

/** The roles of a transcript. */
export const roles = (messages: readonly AgentMessage[]) => messages.map((m) => (m as { role: string }).role);
