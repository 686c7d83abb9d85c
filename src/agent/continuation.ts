import type { AgentMessage } from "../types.js";
import { isSystemMessage } from "../transcript/index.js";
import { nextBatch, type QueueName, type SessionContext } from "../../machines/session.machine.js";

/** How `continue()` runs (R52). */
export interface Continuation {
  /** `null`: continue from the transcript's tail; otherwise these queued messages are the prompts. */
  prompts: AgentMessage[] | null;
  skipInitialSteeringPoll: boolean;
  /** The queue the prompts were taken from. */
  dequeue?: { queue: QueueName; count: number };
}

/**
 * R52: an empty or system-only transcript cannot continue; any tail but an assistant message
 * continues as it is; an assistant tail takes one steering batch (the run then skips its
 * start-of-run steering poll, which would find the rest of the same queue), else one follow-up
 * batch, else it cannot continue. Throws with the reference's messages.
 */
export function planContinuation(context: SessionContext): Continuation {
  const { messages } = context;
  if (messages.every(isSystemMessage)) throw new Error("No messages to continue from");
  const last = messages[messages.length - 1] as { role?: unknown };
  if (last.role !== "assistant") return { prompts: null, skipInitialSteeringPoll: false };
  for (const queue of ["steering", "followUp"] as const) {
    const prompts = nextBatch(context, queue);
    if (prompts.length > 0) {
      return { prompts, skipInitialSteeringPoll: queue === "steering", dequeue: { queue, count: prompts.length } };
    }
  }
  throw new Error("Cannot continue from message role: assistant");
}
