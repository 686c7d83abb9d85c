/**
 * The crash test's compact projection of an event: enough to tell two answers apart (the text so
 * far, the calls), stable against what a provider may still fill in (arguments) and the clock.
 */
import type { AnyAgentEvent } from "../../src/index.js";

const textOf = (message: unknown): string => {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string; id?: string }) => (block.type === "text" ? block.text : block.type === "toolCall" ? `[${block.id}]` : "")).join("");
};

export function project(event: AnyAgentEvent): string {
  const e = event as { type: string; message?: { role?: string }; toolCallId?: string; reason?: string; fromSeq?: number };
  switch (e.type) {
    case "message_start":
    case "message_update":
    case "message_end":
      return `${e.type}:${e.message?.role}:${textOf(e.message)}`;
    case "tool_execution_start":
    case "tool_execution_update":
    case "tool_execution_end":
      return `${e.type}:${e.toolCallId}`;
    case "message_discarded":
      return `message_discarded:${e.reason}:${e.fromSeq ?? ""}`;
    default:
      return e.type;
  }
}
