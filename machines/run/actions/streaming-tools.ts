/**
 * Tools that start while the model streams (SPEC R70–R73, streaming mode): a call whose
 * `toolcall_end` arrived gets its actor (it checks and preflights itself), calls start in source
 * order (an unsafe one alone), settle in completion order, and are answered on every route the
 * response takes: results once every call settled (R71), aborted with a failed response (R72),
 * R28's texts with a truncated one (R72), cancelled by a failing sibling (R73). The final message's
 * calls are matched to the streamed ones by id (`answeringCalls`): one it does not list is aborted (R72).
 */
import { assertEvent, type AnyActorRef } from "xstate";
import type { AnyAgentEvent, AssistantMessage, ToolCall, ToolResultMessage } from "../../../src/protocol/index.js";
import { abortedResult, errorResult, siblingCancelledResult, toolResultMessage, truncatedCallResult } from "../../../src/protocol/tool-results.js";
import { abandonedText, isStepAbandoned } from "../../../src/protocol/abort-grace.js";
import type { ToolCallInput } from "../../tool-call.machine.js";
import { currentStep, timeOf, type StepFailed } from "../../steps.js";
import { answeringCalls, appended, callsToStart, droppedCalls, emptyStreamedBatch, runStartedAt, settledStreamed, toolCallsOf, withStreamedCalls } from "../helpers.js";
import { announce, indexOfChild, runAssign, runEnqueue, toolChildId, type ToolDoneEvent, type ToolErrorEvent } from "../setup.js";
import type { RunContext, ToolBatch, ToolCallOutcome } from "../types.js";
import type { RunApprovals } from "../../approval.helpers.js";
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

/** The slice of `enqueueActions`' `enqueue` that aborts calls. */
interface AbortEnqueue extends DiscardEnqueue {
  emit(event: AnyAgentEvent): void;
}

/**
 * R72: the streamed calls `indices` that have not settled are aborted: each job cancelled and its
 * actor stopped; a started call's tool_execution_end carries `Operation aborted` (R67: with the
 * grace's words when the run was abandoned at it) and it settles so; a waiting approval is resolved
 * as rejected (R82). A call that had not started has no events; `settleUnstarted`: it settles too
 * (silently: it never runs, and nothing waits for it).
 */
function abortCalls(
  context: RunContext,
  event: { type: string },
  self: AnyActorRef,
  enqueue: AbortEnqueue,
  indices: readonly number[],
  settleUnstarted: boolean,
): { batch: ToolBatch; approval: RunApprovals } {
  const batch = context.turn.batch!;
  const at = timeOf(event, runStartedAt(context));
  let next = batch;
  const discarded = new Set<number>();
  for (const index of indices) {
    if (batch.outcomes[index] !== null) continue;
    const started = batch.streamed!.started[index];
    const result = started ? abortedCallResult(event, self, index) : abortedResult();
    discardCall(enqueue, self, index);
    discarded.add(index);
    if (!started && !settleUnstarted) continue;
    const call = batch.calls[index];
    if (started) enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
    next = settledStreamed(next, { index, result, isError: true, settledAt: at });
  }
  const closed = context.approval.pending.filter((pending) => discarded.has(pending.index));
  for (const pending of closed) {
    enqueue.emit({ type: "tool_approval_resolved", approvalId: pending.approvalId, toolCallId: pending.toolCallId, decision: "rejected", reason: ABORTED_TEXT });
  }
  const approval = closed.length ? { ...context.approval, pending: context.approval.pending.filter((pending) => !closed.includes(pending)) } : context.approval;
  return { batch: next, approval };
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
  // R70: the response ended: the final message's calls that did not stream (matched by id, not by
  // place) join the batch after the streamed ones and get their actors; every call is known now.
  closeStreamedBatch: runEnqueue(({ context, event, enqueue }) => {
    const message = context.turn.assistant!;
    const calls = toolCallsOf(message);
    const batch = streamedBatchOf(context);
    const known = batch.calls.length;
    const answering = answeringCalls(batch, calls);
    const unreported = calls.filter((_, k) => answering[k] === null);
    let closed = withStreamedCalls(batch, unreported);
    const at = timeOf(event, runStartedAt(context));
    unreported.forEach((call, k) => {
      const index = known + k;
      const cancelled = cancelledOutcome(closed, index, at);
      if (cancelled) {
        emitNotRun(enqueue, call, cancelled);
        closed = settledStreamed(closed, cancelled);
      } else enqueue.spawnChild("toolCall", { id: toolChildId(index), input: streamedCallInput(context, call, index, message, at) });
    });
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
    const aborted = abortCalls(context, event, self, enqueue, batch.calls.map((_, index) => index), false);
    if (aborted.approval !== context.approval) enqueue.assign({ approval: aborted.approval });
    enqueue.assign({ turn: { ...context.turn, batch: { ...aborted.batch, streamed: { ...aborted.batch.streamed!, ended: true } } } });
  }),
  // R72: a streamed call the final message does not list (by id) is not answered: aborted as after
  // an error response (a started one ends `Operation aborted`, one not started never starts), no
  // result message; a call that finished keeps its tool_execution_end. The listed calls go on.
  abortDroppedCalls: runEnqueue(({ context, event, self, enqueue }) => {
    const dropped = droppedCalls(context.turn.batch!, toolCallsOf(context.turn.assistant!));
    const aborted = abortCalls(context, event, self, enqueue, dropped, true);
    enqueue.assign({ ...(aborted.approval !== context.approval ? { approval: aborted.approval } : {}), turn: { ...context.turn, batch: aborted.batch } });
  }),
  // R72: a `length` response's calls (matched to the streamed ones by id, R71: in its order):
  // started ones are aborted with R28's text (no second start), the others get R28's events; a
  // call that already settled keeps its outcome (it ran).
  rejectTruncatedStreamedCalls: runEnqueue(({ context, event, self, enqueue }) => {
    const at = timeOf(event, runStartedAt(context));
    const batch = context.turn.batch!;
    const calls = toolCallsOf(context.turn.assistant!);
    const answering = answeringCalls(batch, calls);
    const results: ToolResultMessage[] = [];
    for (const [k, finalCall] of calls.entries()) {
      const index = answering[k];
      const call = index === null ? finalCall : batch.calls[index];
      const settled = index === null ? null : batch.outcomes[index];
      if (settled) {
        const message = toolResultMessage(call, settled.result, settled.isError, settled.durationMs, settled.settledAt);
        announce(enqueue, [message]);
        results.push(message);
        continue;
      }
      const result = truncatedCallResult(call);
      if (index !== null) discardCall(enqueue, self, index);
      if (index !== null && batch.streamed!.started[index] === true) enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
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
