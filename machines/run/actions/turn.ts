/**
 * The turn and the run's end (SPEC R1–R12, R30, R56, R63, R67): agent_start, turn_start, message
 * injection, the hooks' updates, turn_end, what a turn spent, why the run ends, a failed step's
 * failure message, agent_end.
 */
import { assertEvent } from "xstate";
import type { AgentEndReason, AssistantMessage } from "../../../src/protocol/index.js";
import { declareToolChanges, applySystemMessages } from "../../../src/protocol/transcript/index.js";
import { errorText } from "../../../src/protocol/tool-results.js";
import { answerStartedCalls, isStepAbandoned, type StepAbandonedError } from "../../../src/protocol/abort-grace.js";
import { polledMessages, replyOutput, timeOf } from "../../steps.js";
import { answerableBatch, appended, closedTurn, failureMessage, runStartedAt, turnSpend } from "../helpers.js";
import { announce, runAssign, runEmit, runEnqueue } from "../setup.js";
import type { RunContext, TurnUpdate } from "../types.js";
import { truncationsCounted } from "./request.js";
import { answersCounted } from "./output.js";

/** R63: the first limit the run has reached, if any. */
export function budgetExceeded({ settings: { budget }, spent }: RunContext): AgentEndReason | undefined {
  if (budget.maxTurns !== undefined && spent.turns >= budget.maxTurns) return "max_turns";
  if (budget.maxTotalTokens !== undefined && spent.tokens >= budget.maxTotalTokens) return "max_tokens";
  if (budget.maxCostUsd !== undefined && spent.cost >= budget.maxCostUsd) return "max_cost";
  return undefined;
}

/** R67: the abandonment a `step.failed` reports, if it is one (the worker's grace ran out). */
function abandonedStepOf(event: { type: string }): StepAbandonedError | undefined {
  const error = event.type === "step.failed" ? (event as { error?: unknown }).error : undefined;
  return isStepAbandoned(error) ? error : undefined;
}

export const turnActions = {
  // R1, R2: agent_start. (Then `replayDeclaredTools`: two plain actions, not an `enqueueActions`
  // building its closures on every run.)
  emitAgentStart: runEmit({ type: "agent_start" }),
  // R30: the transcript's declared tools, replayed once per run.
  replayDeclaredTools: runAssign(({ context }) => {
    const declared = new Map<string, string>();
    applySystemMessages(declared, context.messages);
    return { declared: [...declared] };
  }),
  // R1, R4a: turn_start, and a fresh turn.
  emitTurnStart: runEmit({ type: "turn_start" }),
  markTurnOpen: runAssign({ turn: () => ({ ...closedTurn, open: true }) }),
  // R1, R4b, R30: declare tool changes, then inject prepared and pending messages with their events.
  injectPending: runEnqueue<{ promptsOnly: boolean } | undefined>(({ context, event, enqueue }, params) => {
    // R1: prompts are injected at once; a continue run (R2) declares tools with its first request.
    if (params?.promptsOnly && context.settings.mode !== "prompt") return;
    const pending = context.prepared.length === 0 ? context.pending : context.prepared.concat(context.pending);
    const declared = new Map(context.declared);
    const now = timeOf(event, runStartedAt(context));
    const injected = declareToolChanges({ transcriptDeclared: declared, pending, tools: context.toolSet.tools, now });
    if (injected.length === 0) {
      if (context.pending.length > 0 || context.prepared.length > 0) enqueue.assign({ pending: [], prepared: [] });
      return;
    }
    applySystemMessages(declared, injected);
    announce(enqueue, injected);
    enqueue.assign({ declared: [...declared], pending: [], prepared: [], ...appended(context, injected) });
  }),
  // R3, R9, R10: what a steering or follow-up poll returned waits for the next injection.
  queuePending: runAssign(({ context, event }) => {
    assertEvent(event, ["step.getSteeringMessages.done", "step.getFollowUpMessages.done"]);
    const polled = polledMessages(event.output);
    return { pending: polled.length === 0 ? context.pending : context.pending.concat(polled) };
  }),
  // R4a, R4c: a hook's replacement context, model, thinking level and messages.
  applyUpdate: runAssign(({ context, event }) => {
    assertEvent(event, ["step.prepareNextTurn.done", "step.prepareRequest.done"]);
    const update: TurnUpdate = event.output;
    const next: Partial<RunContext> = {};
    if (update.messages) {
      next.messages = update.messages;
      const declared = new Map<string, string>();
      applySystemMessages(declared, update.messages);
      next.declared = [...declared];
    }
    if (update.toolSet) next.toolSet = update.toolSet;
    if (update.model) next.model = update.model;
    if (update.thinkingLevel) next.thinkingLevel = update.thinkingLevel;
    if (update.prepared && update.prepared.length > 0) next.prepared = context.prepared.concat(update.prepared);
    return next;
  }),
  // R8, R10: finishTurn's decision.
  recordDecision: runAssign({ turn: ({ context, event }) => ({ ...context.turn, decision: replyOutput(event, "finishTurn") }) }),
  emitTurnEnd: runEmit(({ context }) => ({ type: "turn_end", message: context.turn.assistant!, toolResults: context.turn.toolResults })),
  // The turn closes, with what it counts: R63 what it spent, R61 its truncations, R100 its answer.
  // (One assign: each copies the whole context.)
  closeTurn: runAssign(({ context }) => {
    const { tokens, cost } = turnSpend(context.turn);
    const closed: Partial<RunContext> = {
      turn: { ...context.turn, open: false },
      // (Its responses were counted as they arrived, R63.)
      spent: { turns: context.spent.turns + 1, tokens: context.spent.tokens + tokens, cost: context.spent.cost + cost },
    };
    const recovery = truncationsCounted(context);
    if (recovery !== context.recovery) closed.recovery = recovery;
    const output = answersCounted(context);
    if (output !== context.output) closed.output = output;
    return closed;
  }),
  // R63: why the run ends.
  endAs: runAssign<{ reason: AgentEndReason }>((_, { reason }) => ({ endReason: reason })),
  // R6, R62: an error or aborted response; a second overflow surfaces as prompt_too_long.
  endAsFailedResponse: runAssign({
    endReason: ({ context }) => (context.turn.assistant?.stopReason === "aborted" ? "aborted" : context.recovery.overflowed ? "prompt_too_long" : "error"),
  }),
  endForBudget: runAssign({ endReason: ({ context }) => budgetExceeded(context) ?? "completed" }),
  // R56: why the step failed.
  recordFailure: runAssign(({ context, event }) => {
    assertEvent(event, "step.failed");
    const error = event.error;
    // A stream that threw after `start` closed its partial itself; it belongs to the run.
    const partial = error && typeof error === "object" && "partial" in error ? (error.partial as AssistantMessage) : undefined;
    return { failure: errorText(error), ...(partial ? appended(context, [partial]) : {}) };
  }),
  // R56: an assistant failure message, then turn_end (opening a turn first if none is open); its
  // stopReason is how the run ends. R67: an abandoned step first gives each call it had started a result (R55).
  emitFailure: runEnqueue<{ ending: "error" | "aborted" }>(({ context, event, enqueue }, { ending }) => {
    const at = timeOf(event, runStartedAt(context));
    const abandoned = abandonedStepOf(event);
    const answered = abandoned ? answerStartedCalls({ ...context.turn, batch: answerableBatch(context.turn) }, abandoned, at) : { events: [], messages: [] };
    for (const answer of answered.events) enqueue.emit(answer);
    if (!context.turn.open) enqueue.emit({ type: "turn_start" });
    const message = failureMessage(context, context.failure ?? "Unknown failure", at, ending);
    announce(enqueue, [message]);
    enqueue.emit({ type: "turn_end", message, toolResults: [] });
    enqueue.assign({
      turn: { ...context.turn, assistant: message, open: false },
      endReason: ending,
      ...appended(context, [...answered.messages, message]),
    });
  }),
  // R12: agent_end with every message this run added.
  // R100: with the validated final answer, when the run asked for one and got it.
  emitAgentEnd: runEmit(({ context }) =>
    context.output.answer === null
      ? { type: "agent_end", messages: context.newMessages, reason: context.endReason }
      : { type: "agent_end", messages: context.newMessages, reason: context.endReason, output: context.output.answer.value },
  ),
};
