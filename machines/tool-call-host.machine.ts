/**
 * `runToolCall`'s host (SPEC "Entry points"): one tool call outside a run, through the same steps
 * a model-issued call takes (R21–R26): the preflight (preparation, `beforeToolCall`), then the
 * tool-call machine. The host owns the step worker, as the run does, and forwards its call's step
 * requests to it the same way.
 */
import { assign, setup } from "xstate";
import type { ToolCall } from "../src/protocol/index.js";
import { placeholderActor } from "./placeholders.js";
import { toolCallMachine, type ToolCallOutput } from "./tool-call.machine.js";
import { forwardStep, isRequesterActive, replyOutput, stepActions, stepState, type ForwardedStep, type StepReissue, type StepReply, type StepWorkerLogic } from "./steps.js";

export interface ToolCallHostInput {
  /** The key under which the host's runtime is served in this process (its step worker's input). */
  host: string;
  toolCall: ToolCall;
  hooks: { beforeToolCall: boolean; afterToolCall: boolean };
  startedAt: number;
}

interface ToolCallHostContext extends ToolCallHostInput {
  args: unknown;
  output: ToolCallOutput | null;
}

export const toolCallHostMachine = setup({
  types: {
    input: {} as ToolCallHostInput,
    context: {} as ToolCallHostContext,
    events: {} as StepReply | StepReissue | ForwardedStep,
    output: {} as ToolCallOutput,
  },
  actors: {
    steps: placeholderActor<StepWorkerLogic>("steps"),
    toolCall: toolCallMachine,
  },
  actions: {
    ...stepActions<ToolCallHostContext, StepReply | StepReissue | ForwardedStep, "preflightCalls">(
      { preflightCalls: (context) => ({ calls: [{ index: 0, toolCall: context.toolCall }], gate: context.hooks.beforeToolCall }) },
      "child",
    ),
    // The call's step requests and cancels, on their way to the worker.
    forwardStep: forwardStep<ToolCallHostContext, StepReply | StepReissue | ForwardedStep>(),
  },
  guards: {
    isRequesterActive,
    isImmediate: ({ event }) => !replyOutput(event, "preflightCalls")[0].ready,
  },
}).createMachine({
  id: "toolCallHost",
  context: ({ input }) => ({ ...input, args: undefined, output: null }),
  invoke: { id: "steps", src: "steps", input: ({ context }) => ({ host: context.host }) },
  on: {
    // R13: a restored worker asks for the job of the step the host waits in.
    "step.reissue": { actions: "reissueStep" },
    // Its call's steps run on the host's worker. (The host never cancels its call, so the call
    // never leaves a step before its reply: no `step.cancel` reaches the host.)
    "step.run": { guard: "isRequesterActive", actions: "forwardStep" },
  },
  initial: "preflighting",
  states: {
    // R21: preparation and beforeToolCall; an immediate result ends the call.
    preflighting: {
      ...stepState("preflightCalls"),
      on: {
        "step.preflightCalls.done": [
          {
            guard: "isImmediate",
            target: "done",
            actions: assign({
              output: ({ event }) => {
                const preflight = replyOutput(event, "preflightCalls")[0];
                return preflight.ready ? null : { index: 0, result: preflight.result, isError: true, settledAt: preflight.settledAt };
              },
            }),
          },
          { target: "running", actions: assign({ args: ({ event }) => (replyOutput(event, "preflightCalls")[0] as { args: unknown }).args }) },
        ],
        // A defect in the preflight itself: still exactly one result.
        "step.failed": { target: "done", actions: assign({ output: ({ event }) => ({ index: 0, result: { content: [{ type: "text", text: String((event as { error?: unknown }).error) }], details: {}, isError: true }, isError: true, settledAt: event.at }) }) },
      },
    },
    // R22, R23: the call's execution, in the same tool-call machine a run spawns.
    running: {
      invoke: {
        id: "call",
        src: "toolCall",
        input: ({ context }) => ({ index: 0, toolCall: context.toolCall, args: context.args, afterToolCall: context.hooks.afterToolCall, startedAt: context.startedAt }),
        onDone: { target: "done", actions: assign({ output: ({ event }) => event.output }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.output!,
});
