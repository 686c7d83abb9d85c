/**
 * `runToolCall`'s host (SPEC "Entry points"): one tool call outside a run, through the same steps
 * a model-issued call takes (R21–R26): the preflight (preparation, `beforeToolCall`), then the
 * tool-call machine. The host owns the step worker, as the run does, so the call finds it the same
 * way (its parent's `steps` child).
 */
import { assign, sendTo, setup } from "xstate";
import type { ToolCall } from "../src/protocol/index.js";
import { getPlaceholderFor } from "./placeholders.js";
import { toolCallMachine, type ToolCallOutput } from "./tool-call.machine.js";
import { replyOutput, stepRequest, type StepReissue, type StepReply, type StepWorkerLogic } from "./steps.js";

export interface ToolCallHostInput {
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
    events: {} as StepReply | StepReissue,
    output: {} as ToolCallOutput,
  },
  actors: {
    steps: getPlaceholderFor<() => StepWorkerLogic>("steps"),
    toolCall: toolCallMachine,
  },
  actions: {
    requestPreflight: sendTo("steps", ({ context, self, event }) =>
      stepRequest("preflightCalls", { calls: [{ index: 0, toolCall: context.toolCall }], gate: context.hooks.beforeToolCall }, self, event.type === "step.reissue"),
    ),
  },
  guards: {
    isImmediate: ({ event }) => !replyOutput(event, "preflightCalls")[0].ready,
  },
}).createMachine({
  id: "toolCallHost",
  context: ({ input }) => ({ ...input, args: undefined, output: null }),
  invoke: { id: "steps", src: "steps" },
  initial: "preflighting",
  states: {
    // R21: preparation and beforeToolCall; an immediate result ends the call.
    preflighting: {
      entry: "requestPreflight",
      meta: { step: "preflightCalls" },
      on: {
        "step.reissue": { actions: "requestPreflight" },
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
