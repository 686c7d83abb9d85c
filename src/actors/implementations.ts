/**
 * The machines' implementations. They find their run's dependencies through the actor system
 * (`system-deps.ts`), so the machines are provided once, not per run.
 */
import { assign, type ActorSystem } from "xstate";
import { toolCallMachine, type ToolCallContext, type ToolCallEvent } from "../../machines/tool-call.machine.js";
import { createEffectsWorker } from "./effects-worker.js";
import { prepareToolCall, type ToolDeps } from "./tool-jobs.js";
import type { RunDeps } from "./run-deps.js";

export function createToolCallImplementations(resolve: (system: ActorSystem<any>) => ToolDeps) {
  return {
    actions: {
      prepareCall: assign<ToolCallContext, ToolCallEvent, unknown, ToolCallEvent, never>(({ context, system }) => {
        const prepared = prepareToolCall(resolve(system), context.toolCall);
        return "result" in prepared ? { result: prepared.result, isError: true } : { args: prepared.args };
      }),
      reportEnd: ({ context, system }: { context: ToolCallContext; system: ActorSystem<any> }) => {
        const { toolCall, result, isError, durationMs } = context;
        resolve(system).events.push({
          type: "tool_execution_end",
          toolCallId: toolCall.id,
          toolName: toolCall.name,
          result: result!,
          isError,
          ...(durationMs !== undefined ? { durationMs } : {}),
        });
      },
    },
  };
}

export function createRunImplementations(resolve: (system: ActorSystem<any>) => RunDeps) {
  return {
    actors: {
      effects: createEffectsWorker(resolve),
      toolCall: toolCallMachine.provide(createToolCallImplementations(resolve)),
    },
  };
}
