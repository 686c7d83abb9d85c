/**
 * One tool call's execution (R22, R23, R26, R29), spawned by the run machine as
 * `tool:<index in batch>` once the call passed its preflight (R21: start, preparation,
 * `beforeToolCall`, which the run's `preflightCalls` step runs, in source order).
 *
 *   starting ─▶ executing ─▶ finalizing ─▶ settled
 *      │            └─────────────────────────▲  (no afterToolCall, or the call did not run)
 *      └─▶ awaitingApproval ─▶ executing        (R82: approved)
 *                  └──────────────────────────▲  (rejected, aborted, cancelled)
 *
 * R82: a call whose preflight asked for approval waits in `awaitingApproval` for the run to
 * forward `approval.approve` (replacement arguments are validated again by the execute step),
 * `approval.reject` (an error result with the reason) or `approval.abort` (the run was aborted).
 *
 * `call.cancel` (R73: a sibling whose tool cancels on error failed) settles it at once from
 * `preflighting`, `executing` or `finalizing`; the transition cancels the job (its signal aborts).
 *
 * R70 (streaming mode): a call spawned while its response streams (or for the response's calls
 * once it ended) does its own checks first: `checking` (`isConcurrencySafe` on validated
 * arguments, reported to the run as `call.checked`) → `waitingToStart` (until the run's
 * `call.start`: calls start in source order) → `preflighting` (R21's preparation and
 * `beforeToolCall`; the run emitted its `tool_execution_start`) → `executing` as above.
 *
 * Each step that runs app code is a state that asks the run's step worker (`steps.ts`) for its
 * job and leaves on the reply: `execute`, then `afterToolCall` when it is configured and the tool
 * ran. No app code runs in a transition (R15). The output is the call's one result (R26); the run
 * reports its `tool_execution_end`.
 *
 * Context and input are plain data: the call asks for its jobs through its parent (the run, or
 * `runToolCall`'s host), which forwards them to its `steps` worker, so a restored call is wired
 * again without any actor reference in its context (R13), and reads no XState internals.
 */
import { assertEvent, assign, sendParent, setup } from "xstate";
import type { AgentToolResult, AssistantMessage, ToolCall } from "../src/protocol/index.js";
import { abortedResult, applyAfterToolCall, errorResult, errorText, siblingCancelledResult } from "../src/protocol/tool-results.js";
import { rejectedResult } from "./approval.helpers.js";
import type { ToolCallOutcome } from "./run/types.js";
import { replyOutput, stepActions, stepState, timeOf, type ExecuteStepInput, type ExecutionOutcome, type PreflightApproval, type StepInputs, type StepReissue, type StepReply } from "./steps.js";

export interface ToolCallInput {
  /** Position in the batch; also the child id suffix, so ids stay bounded. */
  index: number;
  toolCall: ToolCall;
  /** The validated arguments (a copy; the transcript keeps what the model sent). */
  args: unknown;
  /** Whether `afterToolCall` is configured (R23). */
  afterToolCall: boolean;
  /** When the call was spawned (the time of a result no step reply carried). */
  startedAt: number;
  /** R82: the call waits for approval first (its id is the run's). Absent: it executes at once. */
  approval?: { approvalId: string; reason: string };
  /** R70: streaming mode: the call checks and preflights itself (`args` is then unused until its preflight). */
  streamed?: StreamedCallInput;
}

/** R70: what a call spawned in streaming mode needs for its own checks and preflight. */
export interface StreamedCallInput {
  /** A copy of the response as it was when the call was ready (the final message once it ended). */
  partial: AssistantMessage;
  /** `beforeToolCall` is configured. */
  gate: boolean;
  /** `toolExecution: "sequential"`: no call is concurrency-safe. */
  sequential: boolean;
  /** R82: what its preflight knows of approvals (the run's "always allow" rules when it was spawned). */
  approval: PreflightApproval;
}

/** R70: the run starts the call; `streaming`: the response has not ended yet. */
export interface CallStart {
  type: "call.start";
  streaming: boolean;
}

/** R82, R70: a streamed call's preflight asked for approval: the run issues its id and waits with it. */
export interface CallApprovalNeeded {
  type: "call.approvalNeeded";
  index: number;
  args: unknown;
  reason: string;
}

/** R70: the call's check, reported to its run. */
export interface CallChecked {
  type: "call.checked";
  index: number;
  safe: boolean;
}

export type ToolCallOutput = ToolCallOutcome;

export interface ToolCallContext extends Omit<ToolCallInput, "streamed"> {
  /** Set once `execute` settled. */
  result: AgentToolResult | null;
  isError: boolean;
  durationMs?: number;
  settledAt: number;
  /** R73: `execute` itself failed. */
  executionFailed: boolean;
  /** R82: `args` are an approval's replacement, validated by the execute step. */
  validateArgs: boolean;
  /** R70: streaming mode's input, and whether the call started before its response ended. */
  streamed: StreamedCallInput | null;
  startedStreaming: boolean;
  /** R82, R70: why a streamed call waits for approval (its preflight said so; reported again after a restore). */
  approvalReason?: string;
  /** R70: the check's answer (reported again after a restore). */
  safe: boolean | null;
}

/** R82: the run forwards an approval decision to the waiting call (`at`: when it was taken, if the sender knows). */
export type CallApprovalEvent =
  | { type: "approval.approve"; approvalId: string; args?: unknown; at?: number }
  | { type: "approval.reject"; approvalId: string; reason: string; at?: number }
  | { type: "approval.abort"; at?: number };

/** R73: the run cancels the call: a sibling whose tool cancels on error failed. */
export interface CallCancel {
  type: "call.cancel";
  /** The failed sibling's tool (its name is in the cancelled result). */
  failedTool: string;
  at: number;
}

export type ToolCallEvent = StepReply | StepReissue | CallCancel | CallApprovalEvent | CallStart;

type ToolStepName = "executeToolCall" | "finalizeToolCall" | "checkToolCall" | "preflightToolCall";

const toolStepInput: StepInputs<ToolCallContext, ToolStepName> = {
  executeToolCall: (context) => {
    const input: ExecuteStepInput = { toolCall: context.toolCall, args: context.args, startedAt: context.startedAt };
    if (context.validateArgs) input.validate = true;
    return input;
  },
  finalizeToolCall: (context) => ({ toolCall: context.toolCall, args: context.args, result: context.result!, isError: context.isError }),
  checkToolCall: (context) => ({ toolCall: context.toolCall, sequential: context.streamed!.sequential }),
  preflightToolCall: (context) => ({
    toolCall: context.toolCall,
    partial: context.startedStreaming ? context.streamed!.partial : null,
    gate: context.streamed!.gate,
    approval: context.streamed!.approval,
  }),
};

export const toolCallMachine = setup({
  types: {
    input: {} as ToolCallInput,
    context: {} as ToolCallContext,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actions: {
    // The call's steps run on its parent's worker, asked through the parent (`step.run`/`step.cancel`).
    ...stepActions<ToolCallContext, ToolCallEvent, ToolStepName>(toolStepInput, "parent"),
    settleWithThrown: assign(({ context, event }) => ({
      result: errorResult(errorText((event as { error?: unknown }).error)),
      isError: true,
      settledAt: timeOf(event, context.startedAt),
    })),
    recordExecution: assign(({ context, event }, outcome: ExecutionOutcome) => ({
      // R82: afterToolCall sees the validated replacement arguments.
      ...(outcome.args !== undefined ? { args: outcome.args, validateArgs: false } : {}),
      result: outcome.result,
      isError: outcome.isError,
      durationMs: outcome.durationMs,
      settledAt: timeOf(event, context.startedAt),
      executionFailed: outcome.executed && outcome.isError,
    })),
    // R73: cancelled because a sibling failed; its own outcome (if it still comes) is dropped.
    settleAsCancelled: assign(({ event }) => {
      assertEvent(event, "call.cancel");
      return { result: siblingCancelledResult(event.failedTool), isError: true, settledAt: event.at, executionFailed: false };
    }),
    // R82: approved; replacement arguments are validated again before execute. R65: its execution
    // starts now (a timeout counts from the decision's time, when the sender gave it).
    acceptApproval: assign(({ context, event }) => {
      assertEvent(event, "approval.approve");
      const startedAt = timeOf(event, context.startedAt);
      return event.args !== undefined ? { args: event.args, validateArgs: true, startedAt } : { startedAt };
    }),
    settleAsRejected: assign(({ context, event }) => {
      assertEvent(event, "approval.reject");
      return { result: rejectedResult(event.reason), isError: true, settledAt: timeOf(event, context.startedAt) };
    }),
    // R82, R29: an abort settles a waiting call at once.
    settleAsAborted: assign(({ context, event }) => ({ result: abortedResult(), isError: true, settledAt: timeOf(event, context.startedAt) })),
    // R70: the check goes to the run, which starts calls in source order.
    recordCheck: assign({ safe: ({ event }) => replyOutput(event, "checkToolCall") }),
    reportCheck: sendParent(({ context }): CallChecked => ({ type: "call.checked", index: context.index, safe: context.safe === true })),
    recordStart: assign(({ event }) => {
      assertEvent(event, "call.start");
      return { startedStreaming: event.streaming };
    }),
    // R70, R65: the preflight's arguments; the execution (and a timeout) counts from now.
    recordPreflight: assign(({ event }) => {
      assertEvent(event, "step.preflightToolCall.done");
      const preflight = event.output;
      return preflight.ready
        ? { args: preflight.args, startedAt: event.at, settledAt: event.at, ...(preflight.approval ? { approvalReason: preflight.approval.reason } : {}) }
        : { result: preflight.result, isError: true, settledAt: event.at };
    }),
    // R82, R70: the streamed call waits for approval; the run issues the id and announces it. R13:
    // a restored waiting call reports again (the report may have been in flight at the snapshot).
    reportApprovalNeeded: sendParent(({ context }): CallApprovalNeeded => ({ type: "call.approvalNeeded", index: context.index, args: context.args, reason: context.approvalReason! })),
    applyAfterToolCall: assign(({ context, event }) => ({
      ...applyAfterToolCall(context.result!, context.isError, replyOutput(event, "finalizeToolCall")),
      settledAt: timeOf(event, context.startedAt),
    })),
  },
  guards: {
    // R23, R29, R13: only a call that executed is finalized.
    isFinalized: ({ context, event }) => context.afterToolCall && replyOutput(event, "executeToolCall").executed,
    awaitsApproval: ({ context }) => context.approval !== undefined,
    isStreamed: ({ context }) => context.streamed !== null,
    preflightPassed: ({ event }) => replyOutput(event, "preflightToolCall").ready,
    waitsAsStreamed: ({ context }) => context.approvalReason !== undefined,
    preflightAsksApproval: ({ event }) => {
      const preflight = replyOutput(event, "preflightToolCall");
      return preflight.ready && preflight.approval !== undefined;
    },
  },
}).createMachine({
  id: "toolCall",
  context: ({ input }) => ({
    index: input.index,
    toolCall: input.toolCall,
    args: input.args,
    afterToolCall: input.afterToolCall,
    startedAt: input.startedAt,
    result: null,
    isError: false,
    settledAt: input.startedAt,
    executionFailed: false,
    ...(input.approval ? { approval: input.approval } : {}),
    validateArgs: false,
    streamed: input.streamed ?? null,
    startedStreaming: false,
    safe: null,
  }),
  // R70: a call of streaming mode checks and preflights itself first; R82: a batch's call that
  // needs approval waits for it first.
  initial: "starting",
  on: {
    // R22, R23: a step that throws is an error result.
    "step.failed": { target: ".settled", actions: "settleWithThrown" },
    "step.reissue": { actions: "reissueStep" },
  },
  states: {
    // R82: a call that needs approval waits for it first.
    starting: {
      always: [{ guard: "isStreamed", target: "checking" }, { guard: "awaitsApproval", target: "awaitingApproval" }, { target: "executing" }],
    },
    // R82: the run forwards the decision; nothing runs meanwhile (no step: a restore just waits on).
    awaitingApproval: {
      on: {
        "approval.approve": { target: "executing", actions: "acceptApproval" },
        "approval.reject": { target: "settled", actions: "settleAsRejected" },
        "approval.abort": { target: "settled", actions: "settleAsAborted" },
        "call.cancel": { target: "settled", actions: "settleAsCancelled" },
        "step.reissue": { guard: "waitsAsStreamed", actions: "reportApprovalNeeded" },
      },
    },
    // ── R70: streaming mode only ────────────────────────────────────────────────────────────
    // The check, reported to the run (`call.checked`).
    checking: {
      ...stepState("checkToolCall"),
      on: { "step.checkToolCall.done": { target: "waitingToStart", actions: ["recordCheck", "reportCheck"] } },
    },
    // Until the run starts it: calls start in source order, an unsafe call alone (R70). R13: a
    // restored call reports its check again (the report may have been in flight at the snapshot).
    waitingToStart: {
      on: { "call.start": { target: "preflighting", actions: "recordStart" }, "step.reissue": { actions: "reportCheck" } },
    },
    // R21: preparation and beforeToolCall, after the run's tool_execution_start reached the sink.
    preflighting: {
      ...stepState("preflightToolCall"),
      on: {
        "step.preflightToolCall.done": [
          { guard: "preflightAsksApproval", target: "awaitingApproval", actions: ["recordPreflight", "reportApprovalNeeded"] },
          { guard: "preflightPassed", target: "executing", actions: "recordPreflight" },
          { target: "settled", actions: "recordPreflight" },
        ],
        "call.cancel": { target: "settled", actions: ["settleAsCancelled", "cancelStep"] },
      },
    },
    // ── end of R70 ──────────────────────────────────────────────────────────────────────────
    // R22: execute, forwarding updates; durationMs on the injected monotonic clock.
    executing: {
      ...stepState("executeToolCall"),
      on: {
        "step.executeToolCall.done": [
          { guard: "isFinalized", target: "finalizing", actions: { type: "recordExecution", params: ({ event }) => replyOutput(event, "executeToolCall") } },
          { target: "settled", actions: { type: "recordExecution", params: ({ event }) => replyOutput(event, "executeToolCall") } },
        ],
        "call.cancel": { target: "settled", actions: ["settleAsCancelled", "cancelStep"] },
      },
    },
    // R23: afterToolCall overrides field by field; a throw is an error result.
    finalizing: {
      ...stepState("finalizeToolCall"),
      on: { "step.finalizeToolCall.done": { target: "settled", actions: "applyAfterToolCall" }, "call.cancel": { target: "settled", actions: ["settleAsCancelled", "cancelStep"] } },
    },
    // R22, R26: exactly one result.
    settled: { type: "final" },
  },
  // (Key by key, in this order: no object allocated and spread for an absent key, on every call.)
  output: ({ context }) => {
    const output: ToolCallOutput = { index: context.index, result: context.result!, isError: context.isError } as ToolCallOutput;
    if (context.durationMs !== undefined) output.durationMs = context.durationMs;
    output.settledAt = context.settledAt;
    if (context.executionFailed) output.executionFailed = true;
    return output;
  },
});
