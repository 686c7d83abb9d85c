import type { AgentMessage, QueueMode } from "../types.js";

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
