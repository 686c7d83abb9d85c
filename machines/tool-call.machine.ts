/**
 * One tool call (R21–R23, R29), spawned by the run machine as `tool:<index in batch>`.
 *
 *   preparing ─▶ gating ─▶ (awaitingExecution) ─▶ executing ─▶ finalizing ─▶ settled
 *       └──────────┴── immediate result (error, block, abort) ───────────────────▲
 *
 * Preparation (abort check, lookup, `prepareArguments`, validation) is synchronous and runs as
 * one provided action; every step that awaits app code is an invoked actor. In a parallel batch
 * the call stops in `awaitingExecution` after its preflight and tells the parent it is ready, so
 * preflights run one by one in source order and executions run together (R25).
 * The definition is pure: the runtime provides `prepareCall` and the three actors.
 */
import { assign, fromPromise, sendParent, setup } from "xstate";
import type { AfterToolCallResult, AgentToolResult, ToolCall } from "../src/types.js";
import { applyAfterToolCall, errorResult, errorText } from "../src/loop/tool-results.js";

export interface ToolCallInput {
  /** Position in the batch; also the child id suffix, so ids stay bounded. */
  index: number;
  toolCall: ToolCall;
  /** `"parallel"`: wait for `EXECUTE` after the preflight (R25). */
  mode: "sequential" | "parallel";
  hooks: { beforeToolCall: boolean; afterToolCall: boolean };
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

/** What `beforeToolCall` decided, already normalized (R21). */
export type GateDecision = { allowed: true } | { allowed: false; result: AgentToolResult };

/** What `execute` produced (R22); `executed: false` when the abort came first (R29). */
export interface ExecutionOutcome {
  executed: boolean;
  result: AgentToolResult;
  isError: boolean;
  durationMs?: number;
}

export type ToolCallEvent = { type: "EXECUTE" };

export type ToolCallParentEvent = { type: "TOOL.READY"; index: number };

const notProvided = (name: string) => () => {
  throw new Error(`tool-call machine: "${name}" is not provided`);
};

export const toolCallMachine = setup({
  types: {
    input: {} as ToolCallInput,
    context: {} as ToolCallContext,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actors: {
    /** `beforeToolCall`, normalized to a decision; checks the abort after the hook (R21). */
    gateToolCall: fromPromise<GateDecision, { toolCall: ToolCall; args: unknown }>(notProvided("gateToolCall")),
    /** `tool.execute` with updates forwarded; checks the abort first (R22, R29). */
    executeToolCall: fromPromise<ExecutionOutcome, { toolCall: ToolCall; args: unknown }>(notProvided("executeToolCall")),
    /** `afterToolCall`'s overrides (R23). */
    finalizeToolCall: fromPromise<
      AfterToolCallResult | undefined,
      { toolCall: ToolCall; args: unknown; result: AgentToolResult; isError: boolean }
    >(notProvided("finalizeToolCall")),
  },
  actions: {
    /** Abort check, lookup, `prepareArguments`, validation: sets `args` or an immediate `result`. */
    prepareCall: notProvided("prepareCall"),
    settleImmediately: assign((_, result: AgentToolResult) => ({ result, isError: true })),
    settleWithThrown: assign((_, error: unknown) => ({ result: errorResult(errorText(error)), isError: true })),
    recordExecution: assign((_, outcome: ExecutionOutcome) => ({
      result: outcome.result,
      isError: outcome.isError,
      durationMs: outcome.durationMs,
    })),
    applyOverrides: assign(({ context }, override: AfterToolCallResult | undefined) =>
      applyAfterToolCall(context.result!, context.isError, override),
    ),
    reportReady: sendParent(({ context }): ToolCallParentEvent => ({ type: "TOOL.READY", index: context.index })),
  },
  guards: {
    hasImmediateResult: ({ context }) => context.result !== null,
    hasBeforeToolCall: ({ context }) => context.hooks.beforeToolCall,
    hasAfterToolCall: ({ context }) => context.hooks.afterToolCall,
    runsInParallel: ({ context }) => context.mode === "parallel",
  },
}).createMachine({
  id: "toolCall",
  context: ({ input }) => ({ ...input, args: undefined, result: null, isError: false }),
  initial: "preparing",
  states: {
    // R21: abort check, lookup, prepareArguments, validation.
    preparing: {
      entry: "prepareCall",
      always: [
        { guard: "hasImmediateResult", target: "settled" },
        { guard: "hasBeforeToolCall", target: "gating" },
        { guard: "runsInParallel", target: "awaitingExecution" },
        { target: "executing" },
      ],
    },
    // R21: beforeToolCall may block (with reason and terminate); a throw is an error result.
    gating: {
      invoke: {
        src: "gateToolCall",
        input: ({ context }) => ({ toolCall: context.toolCall, args: context.args }),
        onDone: [
          {
            guard: ({ event }) => !event.output.allowed,
            target: "settled",
            actions: {
              type: "settleImmediately",
              params: ({ event }) => (event.output.allowed ? errorResult("unreachable") : event.output.result),
            },
          },
          { guard: "runsInParallel", target: "awaitingExecution" },
          { target: "executing" },
        ],
        onError: { target: "settled", actions: { type: "settleWithThrown", params: ({ event }: { event: { error: unknown } }) => event.error } },
      },
    },
    // R25: preflight done; the parent starts every ready call together.
    awaitingExecution: {
      entry: "reportReady",
      on: { EXECUTE: "executing" },
    },
    // R22: execute, forwarding updates; durationMs on a monotonic clock.
    executing: {
      invoke: {
        src: "executeToolCall",
        input: ({ context }) => ({ toolCall: context.toolCall, args: context.args }),
        onDone: [
          {
            // R29/R23: a call the abort stopped before it ran skips afterToolCall.
            guard: ({ event }) => !event.output.executed,
            target: "settled",
            actions: { type: "recordExecution", params: ({ event }) => event.output },
          },
          {
            guard: "hasAfterToolCall",
            target: "finalizing",
            actions: { type: "recordExecution", params: ({ event }) => event.output },
          },
          { target: "settled", actions: { type: "recordExecution", params: ({ event }) => event.output } },
        ],
        onError: { target: "settled", actions: { type: "settleWithThrown", params: ({ event }: { event: { error: unknown } }) => event.error } },
      },
    },
    // R23: afterToolCall overrides field by field; a throw is an error result.
    finalizing: {
      invoke: {
        src: "finalizeToolCall",
        input: ({ context }) => ({
          toolCall: context.toolCall,
          args: context.args,
          result: context.result!,
          isError: context.isError,
        }),
        onDone: { target: "settled", actions: { type: "applyOverrides", params: ({ event }) => event.output } },
        onError: { target: "settled", actions: { type: "settleWithThrown", params: ({ event }: { event: { error: unknown } }) => event.error } },
      },
    },
    settled: { type: "final" },
  },
  output: ({ context }) => ({
    index: context.index,
    result: context.result!,
    isError: context.isError,
    durationMs: context.durationMs,
  }),
});
