/** What each of the run's steps asks its worker for, read from the run's context (SPEC R4, R40, R60–R62, R6, R21–R25). */
import type { StepInputs, StepJobs, StepName } from "../steps.js";
import { backoffCeiling, estimatedTokens, turnSnapshot } from "./helpers.js";
import type { RunContext } from "./types.js";

/** The run's own steps (a tool call's are the tool-call machine's). */
export type RunStepName = Exclude<StepName, "executeToolCall" | "finalizeToolCall" | "checkToolCall" | "preflightToolCall">;

export const runStepInputs: StepInputs<RunContext, RunStepName> = {
  getSteeringMessages: () => null,
  getFollowUpMessages: () => null,
  prepareNextTurn: turnSnapshot,
  prepareRequest: (context) => ({ messages: context.messages, model: context.model, thinkingLevel: context.thinkingLevel }),
  transformContext: (context) => ({ messages: context.messages }),
  convertToLlm: (context) => ({ messages: context.request.messages ?? context.messages }),
  resolveApiKey: (context) => ({ provider: context.model.provider }),
  streamResponse: (context) => {
    const input: StepJobs["streamResponse"]["input"] = {
      messages: context.request.llmMessages!,
      model: context.model,
      thinkingLevel: context.thinkingLevel,
      maxTokens: context.recovery.maxTokens,
      // R60, R62: a failure before content is withheld while something may recover from it.
      withhold: context.settings.recovery.retry !== null || context.settings.recovery.compact !== null,
      loopRetries: context.settings.recovery.retry !== null,
    };
    // R70: the job reports each call whose toolcall_end arrives mid-stream. (Set when on, not
    // `...(on ? {…} : {})`: no object allocated and spread on every request.)
    if (context.settings.streamingTools !== null) input.streamTools = true;
    return input;
  },
  acquireRequestSlot: () => null,
  drawBackoff: (context) => ({ ceilingMs: backoffCeiling(context) }),
  waitForRetry: (context) => ({ until: context.recovery.retry!.until! }),
  compact: (context) => ({
    messages: context.messages,
    model: context.model,
    reason: context.recovery.compaction ?? "overflow",
    estimatedTokens: estimatedTokens(context),
  }),
  finishTurn: turnSnapshot,
  // R24, R25: a sequential batch preflights the call in progress, a parallel one every call.
  preflightCalls: (context) => {
    const batch = context.turn.batch!;
    const calls = batch.calls.map((toolCall, index) => ({ index, toolCall }));
    return { calls: batch.mode === "sequential" ? [calls[batch.cursor]] : calls, gate: context.settings.hooks.beforeToolCall, approval: { rules: context.approval.rules } };
  },
};
