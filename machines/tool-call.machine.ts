/**
 * One tool call's execution (R22, R23, R26, R29), spawned by the run machine as
 * `tool:<index in batch>` once the call passed its preflight (R21: start, preparation,
 * `beforeToolCall`, which the run's `preflightCalls` step runs, in source order).
 *
 *   executing ─▶ finalizing ─▶ settled
 *       └─────────────────────────▲  (no afterToolCall, or the call did not run)
 *
 * `call.cancel` (R73: a sibling whose tool cancels on error failed) settles it at once from
 * `executing` or `finalizing`; leaving the state aborts its job's signal.
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
 * Context and input are plain data: the call finds the run's worker as its parent's `steps`
 * child, so a restored call is wired again without any actor reference in its context (R13).
 */
import { assertEvent, assign, sendParent, setup, type AnyActorRef } from "xstate";
import type { AgentToolResult, AssistantMessage, ToolCall } from "../src/types.js";
import { applyAfterToolCall, errorResult, errorText, siblingCancelledResult } from "../src/loop/tool-results.js";
import type { ToolCallOutcome } from "./run.types.js";
import { currentStep, isStepReply, replyOutput, stepRequest, timeOf, type ExecutionOutcome, type StepJobs, type StepReissue, type StepReply } from "./steps.js";

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
}

/** R70: the run starts the call; `streaming`: the response has not ended yet. */
export interface CallStart {
  type: "call.start";
  streaming: boolean;
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
  /** R70: streaming mode's input, and whether the call started before its response ended. */
  streamed: StreamedCallInput | null;
  startedStreaming: boolean;
  /** R70: the check's answer (reported again after a restore). */
  safe: boolean | null;
}

/** R73: the run cancels the call: a sibling whose tool cancels on error failed. */
export interface CallCancel {
  type: "call.cancel";
  /** The failed sibling's tool (its name is in the cancelled result). */
  failedTool: string;
  at: number;
}

export type ToolCallEvent = StepReply | StepReissue | CallCancel | CallStart;

type ToolStepName = "executeToolCall" | "finalizeToolCall" | "checkToolCall" | "preflightToolCall";

const toolStepInput: { [K in ToolStepName]: (context: ToolCallContext) => StepJobs[K]["input"] } = {
  executeToolCall: (context) => ({ toolCall: context.toolCall, args: context.args, startedAt: context.startedAt }),
  finalizeToolCall: (context) => ({ toolCall: context.toolCall, args: context.args, result: context.result!, isError: context.isError }),
  checkToolCall: (context) => ({ toolCall: context.toolCall, sequential: context.streamed!.sequential }),
  preflightToolCall: (context) => ({
    toolCall: context.toolCall,
    partial: context.startedStreaming ? context.streamed!.partial : null,
    gate: context.streamed!.gate,
  }),
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
      executionFailed: outcome.executed && outcome.isError,
    })),
    // R73: cancelled because a sibling failed; its own outcome (if it still comes) is dropped.
    settleAsCancelled: assign(({ event }) => {
      assertEvent(event, "call.cancel");
      return { result: siblingCancelledResult(event.failedTool), isError: true, settledAt: event.at, executionFailed: false };
    }),
    // R70: the check goes to the run, which starts calls in source order.
    recordCheck: assign({ safe: ({ event }) => reply(event, "checkToolCall") }),
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
        ? { args: preflight.args, startedAt: event.at, settledAt: event.at }
        : { result: preflight.result, isError: true, settledAt: event.at };
    }),
    applyAfterToolCall: assign(({ context, event }) => ({
      ...applyAfterToolCall(context.result!, context.isError, reply(event, "finalizeToolCall")),
      settledAt: timeOf(event, context.startedAt),
    })),
  },
  guards: {
    // R23, R29, R13: only a call that executed is finalized.
    isFinalized: ({ context, event }) => context.afterToolCall && reply(event, "executeToolCall").executed,
    isStreamed: ({ context }) => context.streamed !== null,
    preflightPassed: ({ event }) => reply(event, "preflightToolCall").ready,
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
    streamed: input.streamed ?? null,
    startedStreaming: false,
    safe: null,
  }),
  // R70: a call of streaming mode checks and preflights itself first.
  initial: "entering",
  on: {
    // R22, R23: a step that throws is an error result.
    "step.failed": { target: ".settled", actions: "settleWithThrown" },
    "step.reissue": { actions: "reissueStep" },
  },
  states: {
    entering: { always: [{ guard: "isStreamed", target: "checking" }, { target: "executing" }] },
    // ── R70: streaming mode only ────────────────────────────────────────────────────────────
    // The check, reported to the run (`call.checked`).
    checking: {
      ...step("checkToolCall"),
      on: { "step.checkToolCall.done": { target: "waitingToStart", actions: ["recordCheck", "reportCheck"] } },
    },
    // Until the run starts it: calls start in source order, an unsafe call alone (R70). R13: a
    // restored call reports its check again (the report may have been in flight at the snapshot).
    waitingToStart: {
      on: { "call.start": { target: "preflighting", actions: "recordStart" }, "step.reissue": { actions: "reportCheck" } },
    },
    // R21: preparation and beforeToolCall, after the run's tool_execution_start reached the sink.
    preflighting: {
      ...step("preflightToolCall"),
      on: {
        "step.preflightToolCall.done": [
          { guard: "preflightPassed", target: "executing", actions: "recordPreflight" },
          { target: "settled", actions: "recordPreflight" },
        ],
        "call.cancel": { target: "settled", actions: "settleAsCancelled" },
      },
    },
    // ── end of R70 ──────────────────────────────────────────────────────────────────────────
    // R22: execute, forwarding updates; durationMs on the injected monotonic clock.
    executing: {
      ...step("executeToolCall"),
      on: {
        "step.executeToolCall.done": [
          { guard: "isFinalized", target: "finalizing", actions: { type: "recordExecution", params: ({ event }) => reply(event, "executeToolCall") } },
          { target: "settled", actions: { type: "recordExecution", params: ({ event }) => reply(event, "executeToolCall") } },
        ],
        "call.cancel": { target: "settled", actions: "settleAsCancelled" },
      },
    },
    // R23: afterToolCall overrides field by field; a throw is an error result.
    finalizing: {
      ...step("finalizeToolCall"),
      on: { "step.finalizeToolCall.done": { target: "settled", actions: "applyAfterToolCall" }, "call.cancel": { target: "settled", actions: "settleAsCancelled" } },
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
    ...(context.executionFailed ? { executionFailed: true as const } : {}),
  }),
});
