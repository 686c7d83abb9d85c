/**
 * `runToolCall`'s host (SPEC "Entry points"): one tool call outside a run, through the same
 * tool-call machine and step worker a model-issued call uses. The host owns the worker, as the
 * run does, so the call finds it the same way (its parent's `steps` child).
 */
import { assign, setup } from "xstate";
import { getPlaceholderFor } from "./placeholders.js";
import type { createStepsWorker } from "../src/actors/steps-worker.js";
import { toolCallMachine, type ToolCallInput, type ToolCallOutput } from "./tool-call.machine.js";


export const toolCallHostMachine = setup({
  types: {
    input: {} as ToolCallInput,
    context: {} as { input: ToolCallInput; output: ToolCallOutput | null },
    output: {} as ToolCallOutput,
  },
  actors: {
    steps: getPlaceholderFor<typeof createStepsWorker>("steps"),
    toolCall: toolCallMachine,
  },
}).createMachine({
  id: "toolCallHost",
  context: ({ input }) => ({ input, output: null }),
  invoke: { id: "steps", src: "steps" },
  initial: "running",
  states: {
    running: {
      invoke: {
        id: "call",
        src: "toolCall",
        input: ({ context }) => context.input,
        onDone: { target: "done", actions: assign({ output: ({ event }) => event.output }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.output!,
});
