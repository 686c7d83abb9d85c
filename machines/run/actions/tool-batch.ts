/**
 * The tool batch (SPEC R20–R29, R73 for a batch that waits for its response's end): the batch
 * started, the preflight's immediate results, the calls that passed spawned (bounded ids
 * `tool:<index in batch>`, stopped once settled), each call settled with exactly one outcome, the
 * result messages (sequential: at once; parallel: in source order after the last), sibling
 * cancellation, and R28's rejection of a truncated response's calls.
 */
import type { AgentToolResult, AnyAgentEvent, ToolCall, ToolResultMessage } from "../../../src/protocol/index.js";
import { errorText, siblingCancelledResult, toolResultMessage, truncatedCallResult } from "../../../src/protocol/tool-results.js";
import type { ToolCallInput } from "../../tool-call.machine.js";
import { replyOutput, timeOf } from "../../steps.js";
import { answeredCalls, appended, runStartedAt, toolCallsOf } from "../helpers.js";
import { announce, indexOfChild, runAssign, runEmit, runEnqueue, runStopChild, toolChildId, type RunEvent, type ToolDoneEvent, type ToolErrorEvent } from "../setup.js";
import type { RunContext, ToolBatch, ToolCallOutcome } from "../types.js";
import { closeApproval, issueApproval } from "./approval.js";

export function resultMessage(call: ToolCall, outcome: ToolCallOutcome): ToolResultMessage {
  return toolResultMessage(call, outcome.result, outcome.isError, outcome.durationMs, outcome.settledAt);
}

/** R22, R26: a call's outcome from its actor's output, or from its crash (a runtime defect, still exactly one error result). */
export function outcomeOf(event: RunEvent, context: RunContext): ToolCallOutcome {
  if (event.type.startsWith("xstate.done.actor.")) return (event as ToolDoneEvent).output;
  const crashed = event as ToolErrorEvent;
  return {
    index: indexOfChild(crashed.actorId ?? ""),
    result: { content: [{ type: "text", text: errorText(crashed.error) }], details: {}, isError: true },
    isError: true,
    settledAt: runStartedAt(context),
  };
}

/** The settled call's `tool_execution_end` (R22, R25: as soon as it settled). */
export function toolEnd(call: ToolCall, outcome: ToolCallOutcome) {
  const end: { readonly type: "tool_execution_end"; readonly toolCallId: string; readonly toolName: string; readonly result: AgentToolResult; readonly isError: boolean; durationMs?: number } = {
    type: "tool_execution_end",
    toolCallId: call.id,
    toolName: call.name,
    result: outcome.result,
    isError: outcome.isError,
  };
  // (Set when present, not `...(present ? {…} : {})`: no object allocated and spread on every settle.)
  if (outcome.durationMs !== undefined) end.durationMs = outcome.durationMs;
  return end;
}

/** R21, R28, R73: a call that does not run: its start and its end, in one go. */
export function emitNotRun(enqueue: { emit(event: AnyAgentEvent): void }, call: ToolCall, outcome: Pick<ToolCallOutcome, "result">): void {
  enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
  enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: outcome.result, isError: true });
}

/** R22, R24, R26, R82: what settles a call, in order (the sequential batch adds `appendSettledResult`). */
export const settleCall = ["stopSettledCall", "closeSettledApproval", "emitToolEnd", "recordOutcome"] as const;

export const toolBatchActions = {
  // R20: the batch of the response's calls, in the mode it runs in.
  startBatch: runAssign<{ mode: ToolBatch["mode"] }>(({ context }, { mode }) => {
    const calls = toolCallsOf(context.turn.assistant!);
    return { turn: { ...context.turn, batch: { calls, mode, cursor: 0, outcomes: calls.map(() => null) } } };
  }),
  // R21, R25: the preflight's immediate results (their tool_execution_end was emitted by the step).
  recordImmediateResults: runAssign(({ context, event }) => {
    const batch = context.turn.batch!;
    const preflights = replyOutput(event, "preflightCalls");
    if (preflights.every((preflight) => preflight.ready)) return {};
    const outcomes = batch.outcomes.slice();
    for (const preflight of preflights) {
      if (!preflight.ready) outcomes[preflight.index] = { index: preflight.index, result: preflight.result, isError: true, settledAt: preflight.settledAt };
    }
    return { turn: { ...context.turn, batch: { ...batch, outcomes } } };
  }),
  // R24: the immediate result of a sequential batch's call in progress (its preflight failed it): its message at once.
  appendImmediateResult: runEnqueue(({ context, enqueue }) => {
    const batch = context.turn.batch!;
    const message = resultMessage(batch.calls[batch.cursor], batch.outcomes[batch.cursor]!);
    announce(enqueue, [message]);
    enqueue.assign({ turn: { ...context.turn, toolResults: context.turn.toolResults.concat(message) }, ...appended(context, [message]) });
  }),
  // R22, R25: every call that passed its preflight executes now, each in its own actor.
  spawnPassedCalls: runEnqueue(({ context, event, enqueue }) => {
    const batch = context.turn.batch!;
    const startedAt = timeOf(event, runStartedAt(context));
    const { afterToolCall } = context.settings.hooks;
    let approval = context.approval;
    for (const preflight of replyOutput(event, "preflightCalls")) {
      if (!preflight.ready) continue;
      const toolCall = batch.calls[preflight.index];
      const input: ToolCallInput = { index: preflight.index, toolCall, args: preflight.args, afterToolCall, startedAt };
      // R82: it waits for approval (an aborted run asks nobody: the call gets R29's result).
      if (preflight.approval && !context.aborted) {
        const issued = issueApproval(approval, toolCall, preflight.index, preflight.args, preflight.approval.reason);
        approval = issued.approval;
        input.approval = { approvalId: issued.request.approvalId, reason: issued.request.reason };
        enqueue.emit({ type: "tool_approval_requested", ...issued.request });
      }
      enqueue.spawnChild("toolCall", { id: toolChildId(preflight.index), input });
    }
    if (approval !== context.approval) enqueue.assign({ approval });
  }),
  // A settled call (R22, R24, R26, R82) is settled by these, in this order (`settleCall` in the
  // machine): plain actions, not one `enqueueActions` that builds its closures and actions anew on
  // every settle (12 a run of bench (a)).
  // R22, R26: the call's actor (its output, or its crash) stopped.
  stopSettledCall: runStopChild(({ event }) => toolChildId(indexOfChild((event as ToolDoneEvent | ToolErrorEvent).actorId ?? ""))),
  // R82: a call that waited for approval and settled otherwise is resolved as rejected, before its
  // tool_execution_end (on most settles nothing waits: nothing happens).
  closeSettledApproval: runEnqueue(({ context, event, enqueue }) => {
    if (context.approval.pending.length === 0) return;
    const approval = closeApproval(context, outcomeOf(event, context), enqueue);
    if (approval !== context.approval) enqueue.assign({ approval });
  }),
  // R22, R25: its tool_execution_end, as soon as it settled.
  emitToolEnd: runEmit(({ context, event }) => {
    const outcome = outcomeOf(event, context);
    return toolEnd(context.turn.batch!.calls[outcome.index], outcome);
  }),
  // R22, R26: its outcome, recorded.
  recordOutcome: runAssign(({ context, event }) => {
    const outcome = outcomeOf(event, context);
    const batch = context.turn.batch!;
    const outcomes = batch.outcomes.slice();
    outcomes[outcome.index] = outcome;
    return { turn: { ...context.turn, batch: { ...batch, outcomes } } };
  }),
  // R24: a sequential batch's settled call: its result message at once.
  appendSettledResult: runEnqueue(({ context, event, enqueue }) => {
    const outcome = outcomeOf(event, context);
    const message = resultMessage(context.turn.batch!.calls[outcome.index], outcome);
    announce(enqueue, [message]);
    enqueue.assign({ turn: { ...context.turn, toolResults: context.turn.toolResults.concat(message) }, ...appended(context, [message]) });
  }),
  // R73: every call of the parallel batch still running settles as cancelled (its actor replies).
  cancelRunningCalls: runEnqueue(({ context, event, enqueue }) => {
    const { output } = event as ToolDoneEvent;
    const batch = context.turn.batch!;
    const cancel = { type: "call.cancel", failedTool: batch.calls[output.index].name, at: output.settledAt } as const;
    batch.outcomes.forEach((outcome, index) => {
      if (outcome === null) enqueue.sendTo(toolChildId(index), cancel);
    });
  }),
  // R73: the sequential batch's later calls are not run: each gets its start, the cancelled result and its message.
  cancelLaterCalls: runEnqueue(({ context, event, enqueue }) => {
    const { output } = event as ToolDoneEvent;
    const batch = context.turn.batch!;
    const result = siblingCancelledResult(batch.calls[output.index].name);
    const outcomes = batch.outcomes.slice();
    const messages: ToolResultMessage[] = [];
    for (let index = batch.cursor + 1; index < batch.calls.length; index++) {
      const call = batch.calls[index];
      outcomes[index] = { index, result, isError: true, settledAt: output.settledAt };
      const message = toolResultMessage(call, result, true, undefined, output.settledAt);
      emitNotRun(enqueue, call, { result });
      announce(enqueue, [message]);
      messages.push(message);
    }
    enqueue.assign({
      turn: { ...context.turn, batch: { ...batch, outcomes, cursor: batch.calls.length - 1 }, toolResults: context.turn.toolResults.concat(messages) },
      ...appended(context, messages),
    });
  }),
  // R24: the next call of a sequential batch.
  advanceCursor: runAssign(({ context }) => {
    const batch = context.turn.batch!;
    return { turn: { ...context.turn, batch: { ...batch, cursor: batch.cursor + 1 } } };
  }),
  // R25, R71: the result messages in source order, once every call settled.
  appendResults: runEnqueue(({ context, enqueue }) => {
    const batch = context.turn.batch!;
    // R71: in streaming mode, the calls the final message asks for (matched by id), in its order.
    const messages = answeredCalls(context.turn).map((index) => resultMessage(batch.calls[index], batch.outcomes[index]!));
    announce(enqueue, messages);
    enqueue.assign({ turn: { ...context.turn, toolResults: context.turn.toolResults.concat(messages) }, ...appended(context, messages) });
  }),
  // R28: a truncated response's calls are rejected, never executed: start, R28's result, end, message.
  rejectTruncatedCalls: runEnqueue(({ context, event, enqueue }) => {
    const at = timeOf(event, runStartedAt(context));
    const results = toolCallsOf(context.turn.assistant!).map((call) => {
      const result = truncatedCallResult(call);
      emitNotRun(enqueue, call, { result });
      const message = toolResultMessage(call, result, true, undefined, at);
      announce(enqueue, [message]);
      return message;
    });
    enqueue.assign({ turn: { ...context.turn, toolResults: results }, ...appended(context, results) });
  }),
};
