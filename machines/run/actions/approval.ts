/**
 * Per-call approval (SPEC R80, R82): ids issued, decisions forwarded to the waiting call, "always
 * allow" rules, and a waiting call that settled otherwise resolved as rejected.
 */
import { assertEvent } from "xstate";
import type { AnyAgentEvent, ToolApprovalRequest, ToolCall } from "../../../src/protocol/index.js";
import { ruleAllows, ruleOf, withRule, type RunApprovals } from "../../approval.helpers.js";
import type { RunApprovalEvent } from "../../steps.js";
import { runEnqueue, toolChildId } from "../setup.js";
import type { RunContext, ToolCallOutcome } from "../types.js";

/** R82: the next approval id for a call that must wait, and the approvals with it waiting. */
export function issueApproval(approval: RunApprovals, toolCall: ToolCall, index: number, args: unknown, reason: string): { approval: RunApprovals; request: ToolApprovalRequest } {
  const request = { approvalId: `${approval.idPrefix}${approval.issued + 1}`, toolCallId: toolCall.id, toolName: toolCall.name, args, reason };
  return { request, approval: { ...approval, issued: approval.issued + 1, pending: approval.pending.concat({ ...request, index }) } };
}

/**
 * R82: a waiting call that settled without a decision (aborted, or cancelled by a sibling, R73) is
 * resolved as rejected: its `tool_approval_resolved`, and the approvals without it.
 */
export function closeApproval(context: RunContext, outcome: ToolCallOutcome, enqueue: { emit(event: AnyAgentEvent): void }): RunApprovals {
  if (context.approval.pending.length === 0) return context.approval;
  const entry = context.approval.pending.find((pending) => pending.index === outcome.index);
  if (!entry) return context.approval;
  const reason = outcome.result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  enqueue.emit({ type: "tool_approval_resolved", approvalId: entry.approvalId, toolCallId: entry.toolCallId, decision: "rejected", reason });
  return { ...context.approval, pending: context.approval.pending.filter((pending) => pending !== entry) };
}

export const approvalActions = {
  // R80: a decision is an external input, journaled where the run takes it (before the call it frees asks for anything).
  reportDecision: runEnqueue(({ event, enqueue }) => {
    assertEvent(event, ["approval.approve", "approval.reject"]);
    enqueue.sendTo("steps", { type: "run.decided", decision: event as RunApprovalEvent });
  }),
  // R82: approved: the call executes (with the replacement arguments, validated again); `always`
  // adds a rule for the rest of the run, which also approves the batch's other waiting calls it covers.
  approveCall: runEnqueue(({ context, event, enqueue }) => {
    assertEvent(event, "approval.approve");
    const entry = context.approval.pending.find((pending) => pending.approvalId === event.approvalId)!;
    const rule = event.always ? ruleOf(entry.toolName, event.always) : undefined;
    const approved = rule ? context.approval.pending.filter((pending) => pending === entry || ruleAllows(rule, pending.toolName, pending.args)) : [entry];
    const replaced = event.args !== undefined ? { args: event.args } : {};
    for (const pending of approved) {
      const own = pending === entry ? replaced : {};
      enqueue.emit({ type: "tool_approval_resolved", approvalId: pending.approvalId, toolCallId: pending.toolCallId, decision: "approved", ...own });
      enqueue.sendTo(toolChildId(pending.index), { type: "approval.approve", approvalId: pending.approvalId, ...own, ...(event.at !== undefined ? { at: event.at } : {}) });
    }
    enqueue.assign({
      approval: {
        ...context.approval,
        pending: context.approval.pending.filter((pending) => !approved.includes(pending)),
        rules: rule ? withRule(context.approval.rules, rule) : context.approval.rules,
      },
    });
  }),
  // R82: rejected: the call settles with an error result carrying the reason.
  rejectCall: runEnqueue(({ context, event, enqueue }) => {
    assertEvent(event, "approval.reject");
    const entry = context.approval.pending.find((pending) => pending.approvalId === event.approvalId)!;
    enqueue.emit({ type: "tool_approval_resolved", approvalId: entry.approvalId, toolCallId: entry.toolCallId, decision: "rejected", reason: event.reason });
    enqueue.sendTo(toolChildId(entry.index), { type: "approval.reject", approvalId: entry.approvalId, reason: event.reason, ...(event.at !== undefined ? { at: event.at } : {}) });
    enqueue.assign({ approval: { ...context.approval, pending: context.approval.pending.filter((pending) => pending !== entry) } });
  }),
  // R82, R29: an abort settles every waiting call at once (each reports back as it settles).
  abortApprovals: runEnqueue(({ context, enqueue }) => {
    for (const pending of context.approval.pending) enqueue.sendTo(toolChildId(pending.index), { type: "approval.abort" });
  }),
  // R82, R70: a streamed call's preflight asked for approval: its id, and the request.
  requestStreamedApproval: runEnqueue(({ context, event, enqueue }) => {
    assertEvent(event, "call.approvalNeeded");
    // R29: an aborted run asks nobody: the call settles with R29's result.
    if (context.aborted) return void enqueue.sendTo(toolChildId(event.index), { type: "approval.abort" });
    const issued = issueApproval(context.approval, context.turn.batch!.calls[event.index], event.index, event.args, event.reason);
    enqueue.assign({ approval: issued.approval });
    enqueue.emit({ type: "tool_approval_requested", ...issued.request });
  }),
};
