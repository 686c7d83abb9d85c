/**
 * One tool call (R21–R23, R25, R29), spawned by the run machine as `tool:<index in batch>`.
 *
 *   preparing ─▶ gating ─▶ (awaitingExecution) ─▶ executing ─▶ finalizing ─▶ settled
 *       └──────────┴── immediate result (error, block, abort) ─────────────────────▲
 *
 * Every step that runs app code is a state that asks the run's step worker (`steps.ts`) for its
 * job and leaves on the reply: preparation (abort check, lookup, `prepareArguments`, validation),
 * `beforeToolCall`, `execute` and `afterToolCall` (gating and finalizing only when the hook is
 * configured). No app code runs in a transition (R15), and each job starts only after the call's
 * `tool_execution_start` reached the sink (R21).
 *
 * Parallel batches (R25): calls are started and prepared one by one; a prepared call says so
 * (`tool.ready`), so the run starts the next, and waits in `awaitingExecution` for the run's
 * `tool.execute`, sent to the batch once every preflight is done. The call's output is its one
 * result (R26); the run reports its `tool_execution_end`.
 *
 * Context and input are plain data: the call finds the run's worker as its parent's `steps`
 * child, so a restored call is wired again without any actor reference in its context (R13).
 */
import { assign, sendParent, setup, type AnyActorRef } from "xstate";
import type { AgentToolResult, ToolCall } from "../src/types.js";
import { applyAfterToolCall, errorResult, errorText } from "../src/loop/tool-results.js";
import type { ToolCallOutcome } from "./run.types.js";
import { currentStep, isStepReply, replyOutput, stepRequest, timeOf, type ExecutionOutcome, type StepJobs, type StepReissue, type StepReply } from "./steps.js";

export interface ToolCallInput {
  /** Position in the batch; also the child id suffix, so ids stay bounded. */
  index: number;
  toolCall: ToolCall;
  /** `"parallel"`: wait for `tool.execute` after the preflight (R25). */
  mode: "sequential" | "parallel";
  hooks: { beforeToolCall: boolean; afterToolCall: boolean };
  /** When the call started (the time of an immediate result before any step replied). */
  startedAt: number;
}

export type ToolCallOutput = ToolCallOutcome;

export interface ToolCallContext extends ToolCallInput {
  /** Validated arguments (a copy; the transcript keeps what the model sent). */
  args: unknown;
  /** Set once the call has a result, immediate or executed. */
  result: AgentToolResult | null;
  isError: boolean;
  durationMs?: number;
  settledAt: number;
}

export type ToolCallEvent = { type: "tool.execute" } | StepReply | StepReissue;

export type ToolCallParentEvent = { type: "tool.ready"; index: number };

type ToolStepName = "prepareToolCall" | "gateToolCall" | "executeToolCall" | "finalizeToolCall";

const toolStepInput: { [K in ToolStepName]: (context: ToolCallContext) => StepJobs[K]["input"] } = {
  prepareToolCall: (context) => ({ toolCall: context.toolCall }),
  gateToolCall: (context) => ({ toolCall: context.toolCall, args: context.args }),
  executeToolCall: (context) => ({ toolCall: context.toolCall, args: context.args }),
  finalizeToolCall: (context) => ({ toolCall: context.toolCall, args: context.args, result: context.result!, isError: context.isError }),
};

/** The run's step worker: the parent's `steps` child (the run, or `runToolCall`'s host). */
export function stepsWorkerOf(self: AnyActorRef): AnyActorRef {
  const worker = (self._parent?.getSnapshot() as { children?: Record<string, AnyActorRef> } | undefined)?.children?.steps;
  if (!worker) throw new Error("tool-call machine: no step worker (a tool call runs inside a run or runToolCall's host)");
  return worker;
}

/** A step state: asks for its job on entry (again on `step.reissue`), cancels it if left before the reply. */
const step = <K extends ToolStepName>(job: K) =>
  ({
    entry: { type: "requestStep", params: { job } },
    exit: "cancelStep",
    meta: { step: job },
  }) as const;

const reply = replyOutput;

export const toolCallMachine = setup({
  types: {
    input: {} as ToolCallInput,
    context: {} as ToolCallContext,
    events: {} as ToolCallEvent,
    output: {} as ToolCallOutput,
  },
  actions: {
    // Sent when the action executes, not when it is resolved: a call created while its host
    // initializes finds the worker once it starts.
    requestStep: ({ context, self, event }, { job }: { job: ToolStepName }) =>
      stepsWorkerOf(self).send(stepRequest(job, toolStepInput[job](context) as never, self, event.type === "step.reissue")),
    cancelStep: ({ event, self }) => {
      if (!isStepReply(event)) stepsWorkerOf(self).send({ type: "step.cancel", replyTo: self });
    },
    // R13: a restored call asks again for the job of the step it was in.
    reissueStep: ({ context, self }) => {
      const job = currentStep<ToolStepName>(self);
      if (job) stepsWorkerOf(self).send(stepRequest(job, toolStepInput[job](context) as never, self, true));
    },
    recordArgs: assign(({ event }) => {
      const preparation = reply(event, "prepareToolCall");
      return preparation.ready ? { args: preparation.args } : {};
    }),
    settle: assign(({ context, event }, result: AgentToolResult) => ({ result, isError: true, settledAt: timeOf(event, context.startedAt) })),
    settleWithThrown: assign(({ context, event }) => ({
      result: errorResult(errorText((event as { error?: unknown }).error)),
      isError: true,
      settledAt: timeOf(event, context.startedAt),
    })),
    recordExecution: assign(({ context, event }, outcome: ExecutionOutcome) => ({
      result: outcome.result,
      isError: outcome.isError,
      durationMs: outcome.durationMs,
      settledAt: timeOf(event, context.startedAt),
    })),
    applyAfterToolCall: assign(({ context, event }) => ({
      ...applyAfterToolCall(context.result!, context.isError, reply(event, "finalizeToolCall")),
      settledAt: timeOf(event, context.startedAt),
    })),
    /** R25: this call's preflight passed; the run may start the next one. */
    reportReady: sendParent(({ context }): ToolCallParentEvent => ({ type: "tool.ready", index: context.index })),
  },
  guards: {
    isImmediate: ({ event }) => !reply(event, "prepareToolCall").ready,
    hasBeforeToolCall: ({ context }) => context.hooks.beforeToolCall,
    isBlocked: ({ event }) => !reply(event, "gateToolCall").allowed,
    runsInParallel: ({ context }) => context.mode === "parallel",
    // R23, R29: only a call that executed is finalized.
    isFinalized: ({ context, event }) => context.hooks.afterToolCall && reply(event, "executeToolCall").executed,
  },
}).createMachine({
  id: "toolCall",
  context: ({ input }) => ({
    index: input.index,
    toolCall: input.toolCall,
    mode: input.mode,
    hooks: input.hooks,
    startedAt: input.startedAt,
    args: undefined,
    result: null,
    isError: false,
    settledAt: input.startedAt,
  }),
  initial: "preparing",
  on: {
    // R21, R22, R23: a step that throws is an error result.
    "step.failed": { target: ".settled", actions: "settleWithThrown" },
    "step.reissue": { actions: "reissueStep" },
  },
  states: {
    // R21: abort check, lookup, prepareArguments, validation.
    preparing: {
      ...step("prepareToolCall"),
      on: {
        "step.prepareToolCall.done": [
          { guard: "isImmediate", target: "settled", actions: { type: "settle", params: ({ event }) => immediateResult(event) } },
          { guard: "hasBeforeToolCall", target: "gating", actions: "recordArgs" },
          { guard: "runsInParallel", target: "awaitingExecution", actions: "recordArgs" },
          { target: "executing", actions: "recordArgs" },
        ],
      },
    },
    // R21: beforeToolCall may block (with reason and terminate); a throw is an error result.
    gating: {
      ...step("gateToolCall"),
      on: {
        "step.gateToolCall.done": [
          { guard: "isBlocked", target: "settled", actions: { type: "settle", params: ({ event }) => blockedResult(event) } },
          { guard: "runsInParallel", target: "awaitingExecution" },
          { target: "executing" },
        ],
      },
    },
    // R25: this preflight is done; the run executes the batch's passed calls together.
    awaitingExecution: {
      entry: "reportReady",
      on: { "tool.execute": "executing" },
    },
    // R22: execute, forwarding updates; durationMs on the injected monotonic clock.
    executing: {
      ...step("executeToolCall"),
      on: {
        "step.executeToolCall.done": [
          { guard: "isFinalized", target: "finalizing", actions: { type: "recordExecution", params: ({ event }) => reply(event, "executeToolCall") } },
          { target: "settled", actions: { type: "recordExecution", params: ({ event }) => reply(event, "executeToolCall") } },
        ],
      },
    },
    // R23: afterToolCall overrides field by field; a throw is an error result.
    finalizing: {
      ...step("finalizeToolCall"),
      on: { "step.finalizeToolCall.done": { target: "settled", actions: "applyAfterToolCall" } },
    },
    // R22, R26: exactly one result.
    settled: { type: "final" },
  },
  output: ({ context }) => ({
    index: context.index,
    result: context.result!,
    isError: context.isError,
    ...(context.durationMs !== undefined ? { durationMs: context.durationMs } : {}),
    settledAt: context.settledAt,
  }),
});

function immediateResult(event: ToolCallEvent): AgentToolResult {
  const preparation = reply(event, "prepareToolCall");
  return preparation.ready ? errorResult("unreachable: the call was prepared") : preparation.result;
}

function blockedResult(event: ToolCallEvent): AgentToolResult {
  const decision = reply(event, "gateToolCall");
  return decision.allowed ? errorResult("unreachable: the call was allowed") : decision.result;
}
