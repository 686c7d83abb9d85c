import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, Model } from "../../src/index.js";
import { scriptedModel } from "../../src/index.js";

export const model: Model = scriptedModel;

export const user = (content: string, timestamp = 1): AgentMessage => ({ role: "user", content, timestamp });

export function baseConfig(overrides: Partial<AgentLoopConfig> = {}): AgentLoopConfig {
  return { model, convertToLlm: (messages) => messages as never, ...overrides };
}

export const ok = (text: string, extra: Partial<AgentToolResult> = {}): AgentToolResult => ({
  content: [{ type: "text", text }],
  details: {},
  ...extra,
});

/** A tool whose `execute` is given (default: echoes its name). */
export function tool(name: string, execute?: AgentTool["execute"], extra: Partial<AgentTool> = {}): AgentTool {
  return {
    name,
    label: name,
    description: `The ${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: execute ?? (async () => ok(`${name} done`)),
    ...extra,
  };
}

/** A compact, comparable projection of an event. */
export function project(event: AgentEvent): string {
  switch (event.type) {
    case "message_start":
    case "message_end":
      return `${event.type}:${describe(event.message)}`;
    case "message_update":
      return `message_update:${event.assistantMessageEvent.type}`;
    case "turn_end":
      return `turn_end:${describe(event.message)}+${event.toolResults.length}`;
    case "tool_execution_start":
      return `tool_start:${event.toolName}`;
    case "tool_execution_update":
      return `tool_update:${event.toolName}`;
    case "tool_execution_end":
      return `tool_end:${event.toolName}${event.isError ? "!" : ""}`;
    case "agent_end":
      return `agent_end:${event.messages.length}`;
    default:
      return event.type;
  }
}

export function describe(message: AgentMessage): string {
  const m = message as { role: string; stopReason?: string; content?: unknown; toolName?: string; isError?: boolean };
  if (m.role === "assistant") return `assistant(${m.stopReason})`;
  if (m.role === "toolResult") return `toolResult(${m.toolName}${m.isError ? "!" : ""})`;
  if (m.role === "user") return `user(${typeof m.content === "string" ? m.content : "…"})`;
  return m.role;
}

/** Drops streaming deltas, which most sequence assertions do not care about. */
export const withoutUpdates = (events: AgentEvent[]) => events.filter((e) => e.type !== "message_update");

export function textOf(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type: string; text?: string }) => (block.type === "text" ? block.text : "")).join("");
}
