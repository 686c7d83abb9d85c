/** Pure helpers of the session machine: queue batches (R53) and usage totals. */
import { addUsage, type AgentMessage, type QueueMode, type Usage } from "../src/protocol/index.js";

/** The two Agent queues (R53). */
export type QueueName = "steering" | "followUp";

/**
 * The messages one drain point takes from a queue (R53): every queued message in `"all"` mode,
 * the oldest one in `"one-at-a-time"` mode. Pure: the session machine removes the same count.
 */
export function takeBatch(queue: readonly AgentMessage[], mode: QueueMode): AgentMessage[] {
  if (queue.length === 0) return [];
  return mode === "all" ? queue.slice() : queue.slice(0, 1);
}

/**
 * `total` plus what a final message cost: an assistant message's `usage`, or a tool result's
 * (a tool that called a model reports it there). Other messages, and messages without usage,
 * leave the total as it is (the same object, so the caller can skip an update).
 */
export function addMessageUsage(total: Usage, message: AgentMessage): Usage {
  const role = (message as { role?: unknown }).role;
  if (role !== "assistant" && role !== "toolResult") return total;
  const usage = (message as { usage?: Usage }).usage;
  return usage ? addUsage(total, usage) : total;
}

/**
 * A turn's error message, if its last message has one: the session keeps it (`run.turnEnd`). The
 * Agent sends `run.turnEnd` only for such a turn (issue 40: the others changed nothing, and cost a
 * macrostep each).
 */
export function turnError(message: AgentMessage): string | undefined {
  const errorMessage = (message as { errorMessage?: unknown }).errorMessage;
  return typeof errorMessage === "string" && errorMessage !== "" ? errorMessage : undefined;
}
