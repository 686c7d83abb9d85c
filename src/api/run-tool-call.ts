/**
 * `runToolCall`: one call through the same pipeline as a model-issued call (R21–R26), by running
 * the tool-call machine on its own. No events, no messages; never rejects.
 */
import { createActor, toPromise } from "xstate";
import type {
  AgentContext,
  AgentLoopConfig,
  AgentToolCallOutcome,
  AgentToolResult,
  AgentTool,
  AssistantMessage,
  ToolCall,
} from "../types.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { createToolCallImplementations } from "../actors/implementations.js";
import { createEffectsWorker } from "../actors/effects-worker.js";
import type { ToolDeps } from "../actors/tool-jobs.js";
import type { RunDeps } from "../actors/run-deps.js";
import { EventQueue } from "../bridge/event-queue.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { errorResult, errorText } from "../loop/tool-results.js";
import { checkToolCallArguments } from "../boundary/tool-call-arguments.js";

export interface RunToolCallOptions extends Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall"> {
  tools: readonly AgentTool[];
  /** Passed to the hooks as the message that issued the call. */
  assistantMessage: AssistantMessage;
  /** Passed to the hooks as the current context. */
  context: AgentContext;
  signal?: AbortSignal;
  onUpdate?: (partialResult: AgentToolResult) => void | Promise<void>;
}

/**
 * Bad arguments (a signal that is not an `AbortSignal`, tools that are not tools) throw an
 * `AgentInputError` synchronously, at the call; once running, it never rejects.
 */
export function runToolCall(toolCall: ToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome> {
  checkToolCallArguments(toolCall, options);
  return run(toolCall, options);
}

async function run(toolCall: ToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome> {
  try {
    const signal = options.signal ?? new AbortController().signal;
    const events = new EventQueue(
      (event) => (event.type === "tool_execution_update" ? options.onUpdate?.(event.partialResult) : undefined),
      () => {},
    );
    const deps: ToolDeps = {
      config: { beforeToolCall: options.beforeToolCall, afterToolCall: options.afterToolCall } as AgentLoopConfig,
      signal,
      events,
      tools: new ToolRegistry(options.tools),
      hookContext: () => ({ assistantMessage: options.assistantMessage, context: options.context }),
    };
    // A standalone call: the machine is provided with this call's dependencies directly (its first
    // state prepares the call while the actor is created, before any system could be bound), and
    // it runs with its own effect worker; the tool jobs need only the tool dependencies.
    const resolve = () => deps;
    const effects = createActor(createEffectsWorker(resolve as () => RunDeps));
    effects.start();
    const actor = createActor(toolCallMachine.provide(createToolCallImplementations(resolve)), {
      input: {
        index: 0,
        toolCall,
        mode: "sequential",
        hooks: { beforeToolCall: !!options.beforeToolCall, afterToolCall: !!options.afterToolCall },
        effects,
      },
    });
    actor.start();
    const output = await toPromise(actor).finally(() => effects.stop());
    return {
      toolCall,
      result: output.result,
      isError: output.isError,
      ...(output.durationMs !== undefined ? { durationMs: output.durationMs } : {}),
    };
  } catch (error) {
    return { toolCall, result: errorResult(errorText(error)), isError: true };
  }
}
