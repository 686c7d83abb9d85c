/**
 * The run's structured final answer (SPEC R100). The model answers by calling the final-answer
 * tool, which is part of the run's tool set: its call is preflighted like any call, so its
 * arguments are validated against the output schema with R21's explained errors, and an invalid
 * answer's error result goes back to the model as every tool result does. The run takes the
 * verdict when the turn ends: a call that passed ends the run with its value; a turn whose answer
 * failed, or that ended without one (a reminder then asks for it), counts as one invalid attempt.
 */
import type { UserMessage } from "../../../src/protocol/index.js";
import { runAssign } from "../setup.js";
import type { OutputState, RunContext, ToolCallOutcome } from "../types.js";
import { answeringCalls, runStartedAt, toolCallsOf } from "../helpers.js";

/**
 * The outcomes of this turn's calls of the final-answer tool (none when R100 is off), in the final
 * message's order. Only calls the final message holds count, matched by id (and of the answer tool
 * there too): in streaming mode (R70) the batch also holds calls reported while the response
 * streamed, which a provider may reorder, replace or drop in it.
 */
function answerOutcomes(context: RunContext): (ToolCallOutcome | null)[] {
  const output = context.settings.output;
  const batch = context.turn.batch;
  if (output === null || batch === null) return [];
  const finalCalls = context.turn.assistant === null ? [] : toolCallsOf(context.turn.assistant);
  const outcomes: (ToolCallOutcome | null)[] = [];
  answeringCalls(batch, finalCalls).forEach((index, k) => {
    // (A matched call has the final call's id and tool name.)
    if (index !== null && finalCalls[k].name === output.toolName) outcomes.push(batch.outcomes[index]);
  });
  return outcomes;
}

/** R100: the turn's first answer that validated (its call's result carries the validated value as `details`). */
export const acceptedAnswer = (context: RunContext): ToolCallOutcome | undefined =>
  answerOutcomes(context).find((outcome): outcome is ToolCallOutcome => outcome !== null && !outcome.isError);

/** R100: every invalid answer (or turn without one) allowed has been used. */
export const outputAttemptsExhausted = (context: RunContext): boolean =>
  context.settings.output !== null && context.output.attempts >= context.settings.output.maxAttempts;

const oneMoreAttempt = (context: RunContext) => ({ output: { ...context.output, attempts: context.output.attempts + 1 } });

/**
 * R100: a turn that answered, and no answer validated, used one attempt (R29: an aborted run's
 * calls are not answers). The same object when nothing changes.
 */
export function answersCounted(context: RunContext): OutputState {
  if (context.settings.output === null || context.aborted) return context.output;
  const outcomes = answerOutcomes(context);
  return outcomes.length > 0 && acceptedAnswer(context) === undefined ? oneMoreAttempt(context).output : context.output;
}

export const outputActions = {
  // R100: the response ended without an answer: one attempt used.
  countMissingAnswer: runAssign(({ context }) => oneMoreAttempt(context)),
  // R100: the reminder asking for the answer, injected with the next turn.
  queueOutputReminder: runAssign(({ context }) => {
    const message: UserMessage = { role: "user", content: context.settings.output!.reminder, timestamp: context.turn.assistant?.timestamp ?? runStartedAt(context) };
    return { pending: context.pending.concat(message) };
  }),
  // R100: the validated answer is the run's output; without one, the attempts ran out.
  settleOutput: runAssign(({ context }) => {
    const accepted = acceptedAnswer(context);
    if (accepted === undefined) return { endReason: "output_invalid" as const };
    return { endReason: "completed" as const, output: { ...context.output, answer: { value: accepted.result.details } } };
  }),
};
