/**
 * Tools that start while the model streams (SPEC R70–R73, streaming mode): a call whose
 * `toolcall_end` arrived gets its actor (it checks and preflights itself), calls start in source
 * order (an unsafe one alone), settle in completion order, and are answered on every route the
 * response takes: results once every call settled (R71), aborted with a failed response (R72),
 * R28's texts with a truncated one (R72), cancelled by a failing sibling (R73).
 */
import { assertEvent, type AnyActorRef } from "xstate";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "../../../src/protocol/index.js";
import { abortedResult, errorResult, siblingCancelledResult, toolResultMessage, truncatedCallResult } from "../../../src/protocol/tool-results.js";
import { abandonedText, isStepAbandoned } from "../../../src/protocol/abort-grace.js";
import type { ToolCallInput } from "../../tool-call.machine.js";
import { currentStep, timeOf, type StepFailed } from "../../steps.js";
import { appended, callsToStart, emptyStreamedBatch, runStartedAt, settledStreamed, toolCallsOf, withStreamedCalls } from "../helpers.js";
import { announce, indexOfChild, runAssign, runEnqueue, toolChildId, type ToolDoneEvent, type ToolErrorEvent } from "../setup.js";
import type { RunContext, ToolBatch, ToolCallOutcome } from "../types.js";
import { closeApproval } from "./approval.js";
import { emitNotRun, outcomeOf, toolEnd } from "./tool-batch.js";
import { ABORTED_TEXT } from "../../../src/protocol/tool-results.js";

/** The slice of `enqueueActions`' `enqueue` that discards a call. */
interface DiscardEnqueue {
  sendTo(target: "steps", event: { type: "step.cancel"; replyTo: AnyActorRef }): void;
  stopChild(id: string): void;
}

/** R72, R73: a streamed call that will not run (or not finish): its job is cancelled (its signal aborts, it never replies) and its actor stopped. */
function discardCall(enqueue: DiscardEnqueue, self: AnyActorRef, index: number): void {
  const child = (self.getSnapshot() as { children: Record<string, AnyActorRef | undefined> }).children[toolChildId(index)];
  if (!child) return;
  enqueue.sendTo("steps", { type: "step.cancel", replyTo: child });
  enqueue.stopChild(toolChildId(index));
}

/** R73: after a sibling's failure cancelled the batch, a call that becomes known is not run. */
function cancelledOutcome(batch: ToolBatch, index: number, at: number): ToolCallOutcome | undefined {
  const failedTool = batch.streamed!.cancelledBy;
  return failedTool === null ? undefined : { index, result: siblingCancelledResult(failedTool), isError: true, settledAt: at };
}

/** R70: a streamed call's actor input: it checks and preflights itself. */
function streamedCallInput(context: RunContext, toolCall: ToolCall, index: number, partial: AssistantMessage, at: number): ToolCallInput {
  const { hooks, toolExecution } = context.settings;
  return {
    index,
    toolCall,
    args: toolCall.arguments,
    afterToolCall: hooks.afterToolCall,
    startedAt: at,
    streamed: { partial, gate: hooks.beforeToolCall, sequential: toolExecution === "sequential", approval: { rules: context.approval.rules } },
  };
}

/**
 * R67: the result of a started call still running when the run's own step was abandoned at the
 * grace (the worker abandons every job then, the call's too, whose text it would have had):
 * `Operation aborted (the tool did not stop within N ms)`, naming the step it was in. Otherwise
 * R72's `Operation aborted`.
 */
function abortedCallResult(event: { type: string }, self: AnyActorRef, index: number) {
  const error = event.type === "step.failed" ? (event as StepFailed).error : undefined;
  if (!isStepAbandoned(error)) return abortedResult();
  const child = (self.getSnapshot() as { children: Record<string, AnyActorRef | undefined> }).children[toolChildId(index)];
  return errorResult(abandonedText((child && currentStep(child)) || "executeToolCall", error.graceMs));
}

/** R72: the run was aborted while its response still streams. */
export const abortedWhileStreaming = (context: RunContext): boolean => context.aborted && context.turn.batch?.streamed?.ended === false;

const streamedBatchOf = (context: RunContext): ToolBatch => (context.turn.batch?.streamed ? context.turn.batch : emptyStreamedBatch());

export const streamingToolActions = {
  // R70: a call whose toolcall_end arrived: its own actor checks it (a call re-reported by a stream
  // re-issued after a restore, R13, is already known).
  spawnStreamedCall: runEnqueue(({ context, event, enqueue }) => {
    assertEvent(event, "stream.toolCallReady");
    const batch = streamedBatchOf(context);
    if (event.index !== batch.calls.length) return;
    const next = withStreamedCalls(batch, [event.toolCall]);
    const cancelled = cancelledOutcome(next, event.index, event.at);
    if (cancelled) {
      emitNotRun(enqueue, event.toolCall, cancelled);
      return void enqueue.assign({ turn: { ...context.turn, batch: settledStreamed(next, cancelled) } });
    }
    enqueue.assign({ turn: { ...context.turn, batch: next } });
    enqueue.spawnChild("toolCall", { id: toolChildId(event.index), input: streamedCallInput(context, event.toolCall, event.index, event.partialMessage, event.at) });
  }),
  // R70: the response ended: its calls not yet known get their actors; every call is known now.
  closeStreamedBatch: runEnqueue(({ context, event, enqueue }) => {
    const message = context.turn.assistant!;
    const calls = toolCallsOf(message);
    const batch = streamedBatchOf(context);
    const known = batch.calls.length;
    let closed = withStreamedCalls(batch, calls.slice(known));
    const at = timeOf(event, runStartedAt(context));
    for (let index = known; index < calls.length; index++) {
      const cancelled = cancelledOutcome(closed, index, at);
      if (cancelled) {
        emitNotRun(enqueue, calls[index], cancelled);
        closed = settledStreamed(closed, cancelled);
      } else enqueue.spawnChild("toolCall", { id: toolChildId(index), input: streamedCallInput(context, calls[index], index, message, at) });
    }
    enqueue.assign({ turn: { ...context.turn, batch: { ...closed, streamed: { ...closed.streamed!, ended: true } } } });
  }),
  // R70: a call's check (`isConcurrencySafe`).
  recordCheck: runAssign(({ context, event }) => {
    assertEvent(event, "call.checked");
    const batch = context.turn.batch!;
    const safe = batch.streamed!.safe.slice();
    safe[event.index] = event.safe;
    return { turn: { ...context.turn, batch: { ...batch, streamed: { ...batch.streamed!, safe } } } };
  }),
  // R70: the calls that may start now, in source order: tool_execution_start, then the call's own preflight.
  startCalls: runEnqueue(({ context, enqueue }) => {
    const batch = context.turn.batch!;
    const streamed = batch.streamed!;
    // R72: once the run is aborted, a call that had not started while the response streams never
    // does (the transitions ask `isAbortedWhileStreaming` first; a crashed call's settling does not).
    if (abortedWhileStreaming(context)) return;
    const starting = callsToStart(batch, context.settings.streamingTools!.maxConcurrent, context.settings.output?.toolName ?? null);
    if (starting.length === 0) return;
    const started = streamed.started.slice();
    for (const index of starting) {
      const call = batch.calls[index];
      started[index] = true;
      enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
      enqueue.sendTo(toolChildId(index), { type: "call.start", streaming: !streamed.ended });
    }
    enqueue.assign({ turn: { ...context.turn, batch: { ...batch, streamed: { ...streamed, started } } } });
  }),
  /**
   * R70, R71: a streamed call settled (its actor stopped, its `tool_execution_end`, a waiting
   * approval closed, its outcome); R72 `aborted`: it settled while an aborted run's response still
   * streams, so it ends `Operation aborted`.
   */
  settleStreamedCall: runEnqueue<{ aborted: boolean } | undefined>(({ context, event, enqueue }, params) => {
    const settled = outcomeOf(event, context);
    // (A crashed actor's settling decides R72 here: no transition tells it apart.)
    const aborted = params?.aborted ?? abortedWhileStreaming(context);
    const outcome = aborted ? { index: settled.index, result: abortedResult(), isError: true, settledAt: settled.settledAt } : settled;
    enqueue.stopChild(toolChildId(indexOfChild((event as ToolDoneEvent | ToolErrorEvent).actorId ?? "")));
    const batch = context.turn.batch!;
    // R82: a waiting approval is resolved before the call's tool_execution_end, as in settleCall.
    const approval = closeApproval(context, outcome, enqueue);
    enqueue.emit(toolEnd(batch.calls[outcome.index], outcome));
    const outcomes = batch.outcomes.slice();
    outcomes[outcome.index] = outcome;
    enqueue.assign({ ...(approval !== context.approval ? { approval } : {}), turn: { ...context.turn, batch: { ...batch, outcomes } } });
  }),
  // R73: running calls settle as cancelled (their actors reply); calls not started are not run.
  cancelStreamedCalls: runEnqueue(({ context, event, self, enqueue }) => {
    const { output } = event as ToolDoneEvent;
    let batch = context.turn.batch!;
    const failedTool = batch.calls[output.index].name;
    const result = siblingCancelledResult(failedTool);
    batch.outcomes.forEach((outcome, index) => {
      if (outcome !== null) return;
      const call = batch.calls[index];
      if (batch.streamed!.started[index]) return void enqueue.sendTo(toolChildId(index), { type: "call.cancel", failedTool, at: output.settledAt });
      discardCall(enqueue, self, index);
      const cancelled = { index, result, isError: true, settledAt: output.settledAt };
      emitNotRun(enqueue, call, cancelled);
      batch = settledStreamed(batch, cancelled);
    });
    enqueue.assign({ turn: { ...context.turn, batch: { ...batch, streamed: { ...batch.streamed!, cancelledBy: failedTool } } } });
  }),
  // R72: every call still running is aborted; a started call's tool_execution_end carries
  // `Operation aborted` (R67: with the grace's words when the run was abandoned at it); no result
  // message. (A waiting approval is resolved as rejected, R82.)
  abortStreamedCalls: runEnqueue(({ context, event, self, enqueue }) => {
    const batch = context.turn.batch;
    if (!batch?.streamed) return;
    const at = timeOf(event, runStartedAt(context));
    let next = batch;
    const discarded = new Set<number>();
    batch.outcomes.forEach((outcome, index) => {
      if (outcome !== null) return;
      const result = batch.streamed!.started[index] ? abortedCallResult(event, self, index) : null;
      discardCall(enqueue, self, index);
      discarded.add(index);
      if (result === null) return;
      const call = batch.calls[index];
      enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
      next = settledStreamed(next, { index, result, isError: true, settledAt: at });
    });
    const closed = context.approval.pending.filter((pending) => discarded.has(pending.index));
    for (const pending of closed) {
      enqueue.emit({ type: "tool_approval_resolved", approvalId: pending.approvalId, toolCallId: pending.toolCallId, decision: "rejected", reason: ABORTED_TEXT });
    }
    if (closed.length) enqueue.assign({ approval: { ...context.approval, pending: context.approval.pending.filter((pending) => !closed.includes(pending)) } });
    enqueue.assign({ turn: { ...context.turn, batch: { ...next, streamed: { ...next.streamed!, ended: true } } } });
  }),
  // R72: a `length` response's calls: started ones are aborted with R28's text (no second start),
  // the others get R28's events; a call that already settled keeps its outcome (it ran).
  rejectTruncatedStreamedCalls: runEnqueue(({ context, event, self, enqueue }) => {
    const at = timeOf(event, runStartedAt(context));
    const batch = context.turn.batch!;
    const results: ToolResultMessage[] = [];
    for (const [index, call] of toolCallsOf(context.turn.assistant!).entries()) {
      const settled = batch.outcomes[index];
      if (settled) {
        const message = toolResultMessage(call, settled.result, settled.isError, settled.durationMs, settled.settledAt);
        announce(enqueue, [message]);
        results.push(message);
        continue;
      }
      const result = truncatedCallResult(call);
      if (index < batch.calls.length) discardCall(enqueue, self, index);
      if (batch.streamed!.started[index] === true) enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
      else emitNotRun(enqueue, call, { result });
      const message = toolResultMessage(call, result, true, undefined, at);
      announce(enqueue, [message]);
      results.push(message);
    }
    enqueue.assign({ turn: { ...context.turn, toolResults: results, batch: { ...batch, streamed: { ...batch.streamed!, ended: true } } }, ...appended(context, results) });
  }),
  // R13, R70: a call.start may have been in flight at the snapshot: each started call is told
  // again (a call past waitingToStart ignores it).
  retellStartedCalls: runEnqueue(({ context, enqueue }) => {
    const streamed = context.turn.batch?.streamed;
    if (!streamed) return;
    context.turn.batch!.outcomes.forEach((outcome, index) => {
      if (outcome === null && streamed.started[index]) enqueue.sendTo(toolChildId(index), { type: "call.start", streaming: !streamed.ended });
    });
  }),
};
