/**
 * What the terminal agent says of the loop's own events (SPEC R66): the retry line of R60, the
 * output-limit notes of R61 and the compaction note of R62. Plain text; the renderer styles it.
 */
import type { AgentRuntimeEvent, TransientFailureKind } from "../../types.js";
import { formatCount, plural } from "./format.js";

export type RetryScheduled = Extract<AgentRuntimeEvent, { type: "retry_scheduled" }>;

/** R60: a failure kind in words. */
const FAILURE_KINDS: Record<TransientFailureKind | "unknown", string> = {
  overloaded: "overloaded",
  rate_limited: "rate limited",
  server_error: "server error",
  connection: "connection error",
  stall: "stall",
  unknown: "transient error",
};

/**
 * "retrying in 2 s (overloaded, attempt 2 of 5)": whole seconds, rounded up, of `remainingMs`;
 * once the wait is over and the attempt has produced nothing yet, "retrying now (…)".
 * `attempt` is read as the attempt the wait leads to (the first retry is attempt 2).
 */
export function retryLine(event: RetryScheduled, remainingMs: number): string {
  const why = `(${FAILURE_KINDS[event.kind] ?? FAILURE_KINDS.unknown}, attempt ${event.attempt} of ${event.maxAttempts})`;
  return remainingMs > 0 ? `retrying in ${Math.ceil(remainingMs / 1000)} s ${why}` : `retrying now ${why}`;
}

/**
 * One line for a runtime event, for the screen and the trace's notes. `messagesBefore` is the
 * transcript's length before a `transcript_replaced` (the event carries only the new one).
 */
export function describeRuntimeEvent(event: AgentRuntimeEvent, messagesBefore?: number): string {
  switch (event.type) {
    case "retry_scheduled":
      return retryLine(event, event.delayMs);
    case "output_limit_escalated":
      return `output limit hit: asking again with up to ${formatCount(event.toMaxTokens)} output tokens${event.fromMaxTokens !== undefined ? ` (was ${formatCount(event.fromMaxTokens)})` : ""}`;
    case "message_discarded":
      return event.reason === "interrupted" ? "the answer that was streaming when the session stopped is asked again" : "the cut-off answer above was discarded";
    case "output_limit_recovery":
      return `output limit hit: asking the model to continue where it stopped (${event.attempt} of ${event.maxRecoveries})`;
    case "transcript_replaced": {
      const after = plural(event.messages.length, "message");
      const counts = messagesBefore !== undefined ? `${plural(messagesBefore, "message")} → ${formatCount(event.messages.length)}` : `now ${after}`;
      return `context compacted (${counts})${event.reason === "threshold" ? ": over the token threshold" : ": the prompt was too long"}`;
    }
    // R82: the CLI asks for writes through the approval state; these lines go to the screen and the trace.
    case "tool_approval_requested":
      return `${event.toolName} waits for approval: ${event.reason}`;
    case "tool_approval_resolved":
      return `approval ${event.decision}${event.reason ? `: ${event.reason}` : ""}`;
  }
}
