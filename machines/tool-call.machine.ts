/**
 * One tool call (R21–R23, R25, R29), spawned by the run machine as `tool:<index in batch>`.
 *
 *   preparing ─▶ gating ─▶ (awaitingExecution) ─▶ executing ─▶ finalizing ─▶ settled
 *       └──────────┴── immediate result (error, block, abort) ─────────────────────▲
 *
 * Preparation (abort check, lookup, `prepareArguments`, validation) is synchronous and runs as
 * one provided action, while the actor is created. The steps that await app code
 * (`beforeToolCall`, `execute`, `afterToolCall`) are states that ask the run's effect worker
 * (`machines/effects.ts`) for the job and wait for its reply; each is entered only when needed
 * (gating and finalizing only when the hook is configured). The call reports its own
 * `tool_execution_end` when it settles, so an immediate result is reported at once (R25).
 *
 * Parallel batches (R25): without `beforeToolCall` every preflight is synchronous, so the run
 * starts all calls in one step and each goes straight on to execute (the worker starts no job
 * before that step is over). With `beforeToolCall` preflights are asynchronous: the run starts
 * the calls one by one, each passed call says so (`TOOL.READY`) and waits in `awaitingExecution`
 * for the run's `EXECUTE`, sent to the whole batch once every preflight is done.
 */
import { assign, sendParent, sendTo, setup, type AnyActorRef } from "xstate";
import type { AgentToolResult, ToolCall } from "../src/types.js";
import { applyAfterToolCall, errorResult, errorText } from "../src/loop/tool-results.js";
import { effectRequest, type EffectReply, type ExecutionOutcome } from "./effects.js";

export interface ToolCallInput {
  /** Position in the batch; also the child id suffix, so ids stay bounded. */
  index: number;
  toolCall: ToolCall;
  /** `"parallel"` with `beforeToolCall`: wait for `EXECUTE` after the gate (R25). */
  mode: "sequential" | "parallel";
  hooks: { beforeToolCall: boolean; afterToolCall: boolean };
  /** The run's effect worker. */
  effects: AnyActorRef;
}

/** The finalized outcome: exactly one per call (R26). */
export interface ToolCallOutput {
  index: number;
  result: AgentToolResult;
  isError: boolean;
  /** Absent when `execute` did not run. */
  durationMs?: number;
}

export interface ToolCallContext extends ToolCallInput {
  /** Validated arguments (a copy; the transcript keeps what the model sent). */
  args: unknown;
  /** Set once the call has a result, immediate or executed. */
  result: AgentToolResult | null;
  isError: boolean;
  durationMs?: number;
}

export type ToolCallEvent = { type: "EXECUTE" } | EffectReply;

export type ToolCallParentEvent = { type: "TOOL.READY"; index: number };

const settleWithThrown = { type: "settleWithThrown", params: ({ event }: { event: { error: unknown } }) => event.error } as const;
const settleBlocked = {
  type: "settleImmediately",
  params: ({ event }: { event: ToolCallEvent }) => (event.type === "done.gateToolCall" && !event.output.allowed ? event.output.result : errorResult("unreachable")),
} as const;

export const toolCallMachine = setup({
  types: {
    input: {} as ToolCallInput,
    context: {} as ToolCallContext,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actions: {
    /** Abort check, lookup, `prepareArguments`, validation: sets `args` or an immediate `result`. */
    prepareCall: () => {
      throw new Error('tool-call machine: "prepareCall" is not provided');
    },
    /** `tool_execution_end` with the final result, to the run's event sink. */
    reportEnd: () => {
      throw new Error('tool-call machine: "reportEnd" is not provided');
    },
    gate: sendTo(
      ({ context }) => context.effects,
      ({ context, self }) => effectRequest("gateToolCall", { toolCall: context.toolCall, args: context.args }, self),
    ),
    execute: sendTo(
      ({ context }) => context.effects,
      ({ context, self }) => effectRequest("executeToolCall", { toolCall: context.toolCall, args: context.args }, self),
    ),
    finalize: sendTo(
      ({ context }) => context.effects,
      ({ context, self }) =>
        effectRequest(
          "finalizeToolCall",
          { toolCall: context.toolCall, args: context.args, result: context.result!, isError: context.isError },
          self,
        ),
    ),
    settleImmediately: assign((_, result: AgentToolResult) => ({ result, isError: true })),
    settleWithThrown: assign((_, error: unknown) => ({ result: errorResult(errorText(error)), isError: true })),
    recordExecution: assign((_, outcome: ExecutionOutcome) => ({
      result: outcome.result,
      isError: outcome.isError,
      durationMs: outcome.durationMs,
    })),
    /** R25: this call's asynchronous preflight passed; the run may start the next one. */
    reportReady: sendParent(({ context }): ToolCallParentEvent => ({ type: "TOOL.READY", index: context.index })),
  },
  guards: {
    hasImmediateResult: ({ context }) => context.result !== null,
    hasBeforeToolCall: ({ context }) => context.hooks.beforeToolCall,
    isBlocked: ({ event }) => event.type === "done.gateToolCall" && !event.output.allowed,
    runsInParallel: ({ context }) => context.mode === "parallel",
  },
}).createMachine({
  id: "toolCall",
  context: ({ input }) => ({
    index: input.index,
    toolCall: input.toolCall,
    mode: input.mode,
    hooks: input.hooks,
    effects: input.effects,
    args: undefined,
    result: null,
    isError: false,
  }),
  initial: "preparing",
  states: {
    // R21: abort check, lookup, prepareArguments, validation.
    preparing: {
      entry: "prepareCall",
      always: [
        { guard: "hasImmediateResult", target: "settled" },
        { guard: "hasBeforeToolCall", target: "gating" },
        { target: "executing" },
      ],
    },
    // R21: beforeToolCall may block (with reason and terminate); a throw is an error result.
    gating: {
      entry: "gate",
      on: {
        "done.gateToolCall": [
          { guard: "isBlocked", target: "settled", actions: settleBlocked },
          { guard: "runsInParallel", target: "awaitingExecution" },
          { target: "executing" },
        ],
        failed: { target: "settled", actions: settleWithThrown },
      },
    },
    // R25: this preflight is done; the run executes the batch's passed calls together.
    awaitingExecution: {
      entry: "reportReady",
      on: { EXECUTE: "executing" },
    },
    // R22: execute, forwarding updates; durationMs on a monotonic clock.
    executing: {
      entry: "execute",
      on: {
        "done.executeToolCall": [
          {
            // R29/R23: a call the abort stopped before it ran skips afterToolCall.
            guard: ({ event, context }) => event.output.executed && context.hooks.afterToolCall,
            target: "finalizing",
            actions: { type: "recordExecution", params: ({ event }) => event.output },
          },
          { target: "settled", actions: { type: "recordExecution", params: ({ event }) => event.output } },
        ],
        failed: { target: "settled", actions: settleWithThrown },
      },
    },
    // R23: afterToolCall overrides field by field; a throw is an error result.
    finalizing: {
      entry: "finalize",
      on: {
        "done.finalizeToolCall": {
          target: "settled",
          actions: assign(({ context, event }) => applyAfterToolCall(context.result!, context.isError, event.output)),
        },
        failed: { target: "settled", actions: settleWithThrown },
      },
    },
    // R22, R26: exactly one result, reported at once.
    settled: { type: "final", entry: "reportEnd" },
  },
  output: ({ context }) => ({
    index: context.index,
    result: context.result!,
    isError: context.isError,
    durationMs: context.durationMs,
  }),
});
