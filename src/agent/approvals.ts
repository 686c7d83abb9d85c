/**
 * SPEC R82: deciding a waiting call from outside the machine: the typed error for a decision that
 * cannot apply, the checks every entry point makes before it sends anything (so a refused decision
 * changes nothing), and the loop-level entry points for a run actor an app holds
 * (`createAgentRunLogic`, `RunOptions.onActor`). The Agent's `approve`/`reject` use the same checks.
 */
import type { AnyActorRef } from "xstate";
import type { ApproveOptions, ToolApprovalRequest } from "../types.js";
import type { RunApprovals } from "../../machines/approval.helpers.js";
import { toPlainData } from "../loop/plain-data.js";
import { describeValue } from "../boundary/describe-value.js";

/**
 * Why a decision was refused: `unknown` (no call was ever given this id), `settled` (the call
 * was decided already, or its run ended), `invalid` (the options or reason are malformed).
 */
export type ApprovalErrorCode = "unknown" | "settled" | "invalid";

export class ApprovalError extends Error {
  override name = "ApprovalError";
  constructor(
    readonly code: ApprovalErrorCode,
    readonly approvalId: string,
    message: string,
  ) {
    super(message);
  }
}

/** A waiting call as the public sees it (plain data, without the run's batch index). */
const publicRequest = ({ approvalId, toolCallId, toolName, args, reason }: ToolApprovalRequest): ToolApprovalRequest => ({ approvalId, toolCallId, toolName, args, reason });

/** The approvals of a run's context, if `value` is a run's snapshot (live or persisted). */
function runApprovalsOf(value: unknown): RunApprovals | undefined {
  const approval = (value as { context?: { approval?: RunApprovals } } | undefined)?.context?.approval;
  return approval && Array.isArray(approval.pending) ? approval : undefined;
}

/**
 * The calls waiting for approval in a run or session snapshot (live or persisted: a store reads a
 * session's pending approvals from the snapshot it keeps), as plain data.
 */
export function pendingApprovalsOf(snapshot: unknown): ToolApprovalRequest[] {
  const own = runApprovalsOf(snapshot);
  if (own) return own.pending.map(publicRequest);
  // A session: its run is the child `run` (a live snapshot holds the actor, a persisted one its snapshot).
  const run = (snapshot as { children?: { run?: { snapshot?: unknown; getSnapshot?: () => unknown } } } | undefined)?.children?.run;
  const child = run?.getSnapshot ? run.getSnapshot() : run?.snapshot;
  return runApprovalsOf(child)?.pending.map(publicRequest) ?? [];
}

/** Where a decision's id must be found, and how to tell a settled id from an unknown one. */
export interface ApprovalScope {
  /** The live run's approvals, if a run is active. */
  run: RunApprovals | undefined;
  /** Was `approvalId` issued (in this run or an earlier one of the session)? */
  issued(approvalId: string): boolean;
}

/** The waiting call `approvalId` names, or the typed error saying why there is none. */
export function waitingCall(scope: ApprovalScope, approvalId: unknown): ToolApprovalRequest & { index: number } {
  if (typeof approvalId !== "string") throw new ApprovalError("invalid", String(approvalId), `approvalId must be a string, got ${describeValue(approvalId)}`);
  const entry = scope.run?.pending.find((pending) => pending.approvalId === approvalId);
  if (entry) return entry;
  if (scope.issued(approvalId)) throw new ApprovalError("settled", approvalId, `Approval ${approvalId} was already settled`);
  throw new ApprovalError("unknown", approvalId, `No tool call waits for approval ${approvalId}`);
}

/** Were ids `<prefix><n>` issued up to `issued` by the run with `approvals`? */
export const issuedBy = (approvals: RunApprovals | undefined, approvalId: string): boolean => {
  if (!approvals || !approvalId.startsWith(approvals.idPrefix)) return false;
  const n = Number(approvalId.slice(approvals.idPrefix.length));
  return Number.isInteger(n) && n >= 1 && n <= approvals.issued;
};

/** `approve`'s options, checked and as plain data (what enters the run). */
export function checkedApproveOptions(approvalId: string, options: unknown): ApproveOptions {
  if (options === undefined) return {};
  const fail = (problem: string): never => {
    throw new ApprovalError("invalid", approvalId, `approve(${JSON.stringify(approvalId)}, options): ${problem}`);
  };
  if (options === null || typeof options !== "object" || Array.isArray(options)) fail(`options must be an object {args?, always?}, got ${describeValue(options)}`);
  const { args, always } = options as ApproveOptions;
  const checked: ApproveOptions = {};
  if (args !== undefined) checked.args = toPlainData(args);
  if (always !== undefined) {
    if (always === true) checked.always = true;
    else if (always !== null && typeof always === "object" && typeof (always as { path?: unknown }).path === "string" && (always as { path: string }).path !== "") {
      checked.always = { path: (always as { path: string }).path };
    } else fail(`always must be true or {path: string}, got ${describeValue(always)}`);
  }
  return checked;
}

/** `reject`'s reason, checked. */
export function checkedReason(approvalId: string, reason: unknown): string {
  if (typeof reason !== "string") throw new ApprovalError("invalid", approvalId, `reject(${JSON.stringify(approvalId)}, reason): reason must be a string, got ${describeValue(reason)}`);
  return reason;
}

// ---------------------------------------------------------------------------------------------
// Loop-level entry points: a run actor the app holds
// ---------------------------------------------------------------------------------------------

const scopeOfRun = (run: AnyActorRef): ApprovalScope => {
  const approvals = runApprovalsOf(run.getSnapshot());
  return { run: run.getSnapshot().status === "active" ? approvals : undefined, issued: (id) => issuedBy(approvals, id) };
};

/** When a decision was taken, on the run's clock (R13: the loop reads no clock of its own here). */
export interface DecisionTime {
  /** Your clock's now: a tool timeout counts from it (R65), and a rejected result carries it. Absent: the time the call began to wait. */
  at?: number;
}

const timeField = (approvalId: string, at: unknown): { at?: number } => {
  if (at === undefined) return {};
  if (typeof at !== "number" || !Number.isFinite(at)) throw new ApprovalError("invalid", approvalId, `at must be a finite number, got ${describeValue(at)}`);
  return { at };
};

/**
 * Approves the call waiting as `approvalId` in `run` (a run actor: `createAgentRunLogic`'s, or
 * `agentLoop`'s through `RunOptions.onActor`). Throws `ApprovalError` (nothing sent) when no call
 * waits as that id. `always` adds the rule for the rest of this run.
 */
export function approveToolCall(run: AnyActorRef, approvalId: string, options?: ApproveOptions & DecisionTime): void {
  const { at, ...rest } = options ?? {};
  const checked = { ...checkedApproveOptions(approvalId, options === undefined ? undefined : rest), ...timeField(approvalId, at) };
  waitingCall(scopeOfRun(run), approvalId);
  run.send({ type: "approval.approve", approvalId, ...checked });
}

/** Rejects the call waiting as `approvalId` in `run`: its result is an error carrying `reason`. Throws like `approveToolCall`. */
export function rejectToolCall(run: AnyActorRef, approvalId: string, reason: string, time: DecisionTime = {}): void {
  const checked = checkedReason(approvalId, reason);
  const stamped = timeField(approvalId, time.at);
  waitingCall(scopeOfRun(run), approvalId);
  run.send({ type: "approval.reject", approvalId, reason: checked, ...stamped });
}
