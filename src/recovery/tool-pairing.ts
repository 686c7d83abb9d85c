/** The invariant a compacted transcript keeps (SPEC R62): every tool call next to its result. */
import type { AgentMessage, AssistantMessage, ToolCall, ToolResultMessage } from "../types.js";

export interface UnpairedToolMessages {
  /** Tool results whose `toolCallId` no earlier assistant message calls. */
  orphanedResults: ToolResultMessage[];
  /** Tool calls that no later tool result answers. */
  unansweredCalls: ToolCall[];
}

const isAssistant = (message: AgentMessage): message is AssistantMessage => (message as { role?: unknown }).role === "assistant";
const isToolResult = (message: AgentMessage): message is ToolResultMessage => (message as { role?: unknown }).role === "toolResult";

/** The tool calls of an assistant message (none for a malformed one). */
export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return Array.isArray(message.content) ? message.content.filter((block): block is ToolCall => block?.type === "toolCall") : [];
}

/** Every tool result without an earlier call and every call without a later result, in transcript order. */
export function unpairedToolMessages(messages: readonly AgentMessage[]): UnpairedToolMessages {
  const called = new Set<string>();
  const answered = new Set<string>();
  const orphanedResults: ToolResultMessage[] = [];
  for (const message of messages) {
    if (isAssistant(message)) for (const call of toolCallsOf(message)) called.add(call.id);
    else if (isToolResult(message)) {
      if (called.has(message.toolCallId)) answered.add(message.toolCallId);
      else orphanedResults.push(message);
    }
  }
  const unansweredCalls: ToolCall[] = [];
  for (const message of messages) {
    if (isAssistant(message)) for (const call of toolCallsOf(message)) if (!answered.has(call.id)) unansweredCalls.push(call);
  }
  return { orphanedResults, unansweredCalls };
}

/**
 * Whether cutting `messages` at `index` keeps every call with its result: no call before the cut
 * is answered at or after it.
 */
export function isPairSafeCut(messages: readonly AgentMessage[], index: number): boolean {
  const before = new Set<string>();
  for (let i = 0; i < index; i++) {
    const message = messages[i];
    if (isAssistant(message)) for (const call of toolCallsOf(message)) before.add(call.id);
  }
  for (let i = index; i < messages.length; i++) {
    const message = messages[i];
    if (isToolResult(message) && before.has(message.toolCallId)) return false;
  }
  return true;
}
