/**
 * The message that replaces the compacted turns (SPEC R62): a plain user message, so every
 * provider and `convertToLlm` takes it, whose text starts with `SUMMARY_HEADER`.
 */
import type { AgentMessage, UserMessage } from "../types.js";

export const SUMMARY_HEADER = "Summary of the earlier conversation (older turns were compacted to fit the context window; the latest turns follow verbatim):";

export function summaryMessage(summary: string, timestamp: number): UserMessage {
  return { role: "user", content: `${SUMMARY_HEADER}\n\n${summary}`, timestamp };
}

/** Whether a message is a summary this compactor wrote. */
export function isCompactionSummary(message: AgentMessage): boolean {
  const { role, content } = message as { role?: unknown; content?: unknown };
  return role === "user" && typeof content === "string" && content.startsWith(SUMMARY_HEADER);
}
