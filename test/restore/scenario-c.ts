/**
 * The third restore scenario (SPEC R13 inside R60–R62): an overloaded attempt withheld and retried
 * (schedulingRetry, backingOff), a truncated answer escalated and discarded, then kept with a
 * recovery message (recoveringOutputLimit), a proactive compaction above the token threshold, and
 * an overflow compacted and retried; every request waits for a request limiter's slot. What the model decides is read from the request and from the
 * world (plain data saved next to each snapshot), so a restored run meets the same model.
 */
import type { AgentLoopConfig, AgentMessage, ScriptedResponse } from "../../src/index.js";
import { createRequestLimiter, defaultConvertToLlm, scriptedModel, scriptedStreamFn, text } from "../../src/index.js";
import type { AgentRunOptions } from "../../src/actors/run-runtime.js";
import { fixedClock, userMessage, type World } from "./scenario.js";

/** The compactor: a summary, then the last message (deterministic, so a re-issued compaction agrees). */
const compactor = async ({ messages }: { messages: AgentMessage[] }) => [userMessage(`Summary of ${messages.length} messages.`), ...messages.slice(-1)];

const hasRecovery = (messages: readonly unknown[]) => messages.some((message) => (message as { recovery?: string }).recovery === "output_limit");

export function scenarioCOptions(world: World): AgentRunOptions {
  /** A failure the model plays once per key, across the original run and every restore. */
  const once = (key: string, failure: ScriptedResponse): ScriptedResponse | undefined => {
    if (world.flags.includes(key)) return undefined;
    world.flags.push(key);
    return failure;
  };
  const config: AgentLoopConfig = {
    model: scriptedModel,
    convertToLlm: defaultConvertToLlm,
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
    outputLimit: { maxRecoveries: 1 },
    compact: { compactor, thresholdTokens: 500 },
    // Each request waits for its slot (awaitingRequestSlot).
    requestLimiter: createRequestLimiter({ maxConcurrent: 1 }),
  };
  const streamFn = scriptedStreamFn((request) => {
    const messages = request.context.messages;
    if (!hasRecovery(messages)) {
      // R60 once, then R61: cut off (also after the escalation); its usage puts the transcript over the threshold.
      return once("overloaded", { failure: "overloaded" }) ?? { content: [text("Part one, cut")], stopReason: "length", usage: { input: 900, output: 20 } };
    }
    // R62: the first request with the recovery message overflows.
    return once("overflow", { failure: "prompt_too_long" }) ?? { content: [text("Part two.")] };
  });
  return { streamFn, tools: [], config, clock: fixedClock };
}
