/**
 * The request and its recovery (SPEC R40–R42, R5, R60–R62): what the request converts, the
 * response appended, a withheld failure surfaced, retries, the output-limit escalation and
 * recovery message, and compaction.
 */
import { assertEvent } from "xstate";
import type { AssistantMessage, UserMessage } from "../../../src/protocol/index.js";
import { declareToolChanges, applySystemMessages } from "../../../src/protocol/transcript/index.js";
import { normalizeTranscript } from "../../../src/protocol/normalize.js";
import { estimateTokens } from "../../../src/protocol/token-estimate.js";
import { compactReply, replyOutput, timeOf } from "../../steps.js";
import { appended, endedTruncated, escalatedLimit, runStartedAt, settledRequest, spendOf, spentWith } from "../helpers.js";
import { announce, runAssign, runEnqueue, type RunEvent } from "../setup.js";
import type { RecoveryState, RunContext, StreamedResponse } from "../types.js";

/** The stream step's reply (R41, R60). */
export const streamed = (event: RunEvent): StreamedResponse => replyOutput(event, "streamResponse");
/** The response the stream step returned. */
export const response = (event: RunEvent): AssistantMessage => streamed(event).message;

/** R61: consecutive truncated answers; the count resets with any answer that was not cut off (the same object when nothing changes). */
export function truncationsCounted(context: RunContext): RecoveryState {
  if (context.recovery.recoveries === 0 || endedTruncated(context)) return context.recovery;
  return { ...context.recovery, recoveries: 0 };
}

export const requestActions = {
  // R63: every response the run received counts as it arrives, also one then withheld or
  // discarded (R60's failed attempts, R61's escalated truncation, R62's overflow): the run paid for it.
  countResponse: runAssign(({ context, event }) => ({ spent: spentWith(context.spent, spendOf([response(event)])) })),
  // R63: and the model requests a compaction made (its `complete` calls), as the compact step reports them.
  countCompaction: runAssign(({ context, event }) => ({ spent: spentWith(context.spent, compactReply(replyOutput(event, "compact")).spent) })),
  // R40: what transformContext returned is what the request converts.
  recordTransformed: runAssign({ request: ({ event }) => ({ messages: replyOutput(event, "transformContext"), llmMessages: null }) }),
  // R40: only provider messages, in order, reach the stream function.
  recordConverted: runAssign({ request: ({ event }) => ({ messages: null, llmMessages: normalizeTranscript(replyOutput(event, "convertToLlm")) }) }),
  // R5, R41: one assistant message per request, appended; the request's recovery state ends with it.
  appendAssistant: runAssign(({ context, event }) => {
    const message = response(event);
    return {
      turn: { ...context.turn, assistant: message },
      request: { messages: null, llmMessages: null },
      recovery: settledRequest(context.recovery, message),
      ...appended(context, [message]),
    };
  }),
  // R60, R62: the failure nothing recovered is emitted after all.
  surfaceWithheld: runEnqueue(({ context, event, enqueue }) => {
    const { message, withheld, failure } = streamed(event);
    if (!withheld) return;
    announce(enqueue, [message]);
    if (failure?.contextOverflow && context.settings.recovery.compact !== null) enqueue.assign({ recovery: { ...context.recovery, overflowed: true } });
  }),
  // R60: the attempt failed before content; it leaves nothing in the transcript.
  recordRetryableFailure: runAssign(({ context, event }) => {
    const { message, failure } = streamed(event);
    const overloads = failure!.kind === "overloaded" ? context.recovery.overloads + 1 : 0;
    return { recovery: { ...context.recovery, failedAttempts: context.recovery.failedAttempts + 1, overloads, retry: { failure: failure!, message, until: null } } };
  }),
  // R60: the wait ends `max(backoff, retry-after)` after now; after repeated overloads, the fallback model.
  scheduleRetry: runEnqueue(({ context, event, enqueue }) => {
    assertEvent(event, "step.drawBackoff.done");
    const retry = context.recovery.retry!;
    const settings = context.settings.recovery.retry!;
    const delayMs = Math.max(event.output, retry.failure.afterMs ?? 0);
    const fallback = settings.fallbackModel !== null && context.recovery.overloads >= settings.overloadsBeforeFallback ? settings.fallbackModel : null;
    const model = fallback ?? context.model;
    enqueue.assign({ model, recovery: { ...context.recovery, retry: { ...retry, until: event.at + delayMs } } });
    enqueue.emit({
      type: "retry_scheduled",
      attempt: context.recovery.failedAttempts + 1,
      maxAttempts: settings.maxAttempts,
      delayMs,
      kind: retry.failure.kind,
      errorMessage: retry.message.errorMessage ?? "",
      model: model.id,
    });
  }),
  // R60, R29: aborted while waiting: the request ends as aborted (the withheld failure is not shown).
  surfaceAbortedRetry: runEnqueue(({ context, event, enqueue }) => {
    const message: AssistantMessage = {
      ...context.recovery.retry!.message,
      stopReason: "aborted",
      errorMessage: "Operation aborted",
      timestamp: timeOf(event, runStartedAt(context)),
    };
    delete message.retry;
    announce(enqueue, [message]);
    enqueue.assign({
      turn: { ...context.turn, assistant: message },
      request: { messages: null, llmMessages: null },
      recovery: settledRequest(context.recovery, message),
      ...appended(context, [message]),
    });
  }),
  // R61: the truncated response was closed (message_end); it is discarded and asked for again.
  escalateOutputLimit: runEnqueue(({ context, event, enqueue }) => {
    const message = response(event);
    const toMaxTokens = escalatedLimit(context, message)!;
    enqueue.emit({ type: "message_discarded", message, reason: "output_limit_escalated" });
    enqueue.emit({ type: "output_limit_escalated", fromMaxTokens: context.settings.recovery.requestMaxTokens ?? undefined, toMaxTokens });
    enqueue.assign({ recovery: { ...context.recovery, maxTokens: toMaxTokens } });
  }),
  // R61: the recovery message, marked as the loop's, waits for the next turn like steering.
  queueRecoveryMessage: runEnqueue(({ context, enqueue }) => {
    const limit = context.settings.recovery.outputLimit!;
    const attempt = context.recovery.recoveries + 1;
    const message: UserMessage = { role: "user", content: limit.prompt, timestamp: context.turn.assistant!.timestamp, recovery: "output_limit" };
    enqueue.emit({ type: "output_limit_recovery", attempt, maxRecoveries: limit.maxRecoveries });
    enqueue.assign({ pending: context.pending.concat(message), recovery: { ...context.recovery, recoveries: attempt } });
  }),
  // R62: why the compaction runs (and the overflow it answers, surfaced if nothing can be compacted).
  startCompaction: runAssign<{ reason: "overflow" | "threshold" }>(({ context, event }, { reason }) => ({
    recovery: { ...context.recovery, compaction: reason, overflow: reason === "overflow" ? response(event) : null },
  })),
  // R62: the overflow nothing could shrink ends the request (and the run, prompt_too_long).
  surfaceOverflow: runEnqueue(({ context, enqueue }) => {
    const message = context.recovery.overflow!;
    announce(enqueue, [message]);
    enqueue.assign({
      turn: { ...context.turn, assistant: message },
      request: { messages: null, llmMessages: null },
      recovery: { ...settledRequest(context.recovery, message), compaction: null, overflow: null, overflowed: true },
      ...appended(context, [message]),
    });
  }),
  // R62: the compacted transcript replaces the run's; what the run added starts again from it.
  // (A compactor that found nothing to compact replaces nothing; the request goes on.)
  replaceTranscript: runEnqueue(({ context, event, enqueue }) => {
    assertEvent(event, "step.compact.done");
    const reason = context.recovery.compaction ?? "overflow";
    const replacement = compactReply(event.output).messages;
    // A proactive compaction that leaves the transcript above the threshold is not tried again this run (no thrashing).
    const threshold = context.settings.recovery.compact?.thresholdTokens ?? null;
    const proactiveOff =
      context.recovery.proactiveOff ||
      (reason === "threshold" && (replacement === null || estimateTokens(replacement, { usageFrom: replacement.length }) > (threshold ?? Infinity)));
    const recovery = { ...context.recovery, compaction: null, overflow: null, compacted: context.recovery.compacted || reason === "overflow", proactiveOff };
    if (replacement === null) return void enqueue.assign({ recovery });
    const declared = new Map<string, string>();
    applySystemMessages(declared, replacement);
    enqueue.emit({ type: "transcript_replaced", messages: replacement, reason });
    // R30: tools the replacement no longer declares (a compactor dropped their system message) are declared again.
    const redeclared = declareToolChanges({ transcriptDeclared: declared, pending: [], tools: context.toolSet.tools, now: event.at });
    applySystemMessages(declared, redeclared);
    announce(enqueue, redeclared);
    const messages = redeclared.length === 0 ? replacement : replacement.concat(redeclared);
    enqueue.assign({
      messages,
      newMessages: redeclared,
      declared: [...declared],
      request: { messages: null, llmMessages: null },
      recovery: { ...recovery, compactedLength: replacement.length },
    });
  }),
};
