/**
 * What the loop accepts from a compactor (SPEC R62): the `Compactor` contract, checked where its
 * result enters the run, so a broken replacement is a typed failure instead of the next request.
 */
import type { AgentMessage } from "../types.js";
import { CompactionError } from "./compaction-error.js";
import { unpairedToolMessages } from "./tool-pairing.js";

/**
 * `null` when the result is the transcript as it was (nothing to compact: the same array, or one
 * whose messages are equal to the transcript's one by one); else the replacement. Throws
 * `CompactionError` of kind `invalid_result` for an empty replacement (the next request would have
 * no context) and for one that separates a tool result from its call (a result whose call it does
 * not hold, where the transcript had it), naming the result.
 */
export function compactedTranscript(before: readonly AgentMessage[], after: readonly AgentMessage[]): readonly AgentMessage[] | null {
  if (after === before || sameMessages(before, after)) return null;
  if (after.length === 0) throw new CompactionError("invalid_result", "The compactor returned an empty transcript");
  const orphanedBefore = new Set(unpairedToolMessages(before).orphanedResults.map((result) => result.toolCallId));
  const orphaned = unpairedToolMessages(after).orphanedResults.find((result) => !orphanedBefore.has(result.toolCallId));
  if (orphaned) {
    throw new CompactionError("invalid_result", `The compactor kept the tool result of ${orphaned.toolName} (${orphaned.toolCallId}) without the assistant message that calls it`);
  }
  return after;
}

// Messages are plain data (R13): a copy with the same JSON is the same message.
function sameMessages(before: readonly AgentMessage[], after: readonly AgentMessage[]): boolean {
  return before.length === after.length && before.every((message, i) => message === after[i] || JSON.stringify(message) === JSON.stringify(after[i]));
}
