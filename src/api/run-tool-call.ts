/**
 * `runToolCall`: one call through the same pipeline as a model-issued call (R21–R26): the
 * tool-call machine, hosted by a small machine that owns a step worker as a run does. No events,
 * no messages; never rejects.
 */
import { subAgents } from "./sub-agents.js";
import { createActor, toPromise } from "xstate";
import type { AgentContext, AgentLoopConfig, AgentToolCallOutcome, AgentToolResult, AgentTool, AssistantMessage, ToolCall } from "../types.js";
import { createRunRuntime } from "../actors/run-runtime.js";
import { provideToolCallHost } from "../actors/implementations.js";
import { errorResult, errorText } from "../loop/tool-results.js";
import { systemClock } from "../loop/clock.js";
import { RunHosts } from "./run-hosts.js";
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

let shared: { machine: ReturnType<typeof provideToolCallHost>; hosts: RunHosts } | undefined;

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
    if (!shared) {
      const hosts = new RunHosts();
      shared = { machine: provideToolCallHost(hosts), hosts };
    }
    const { machine, hosts } = shared;
    const host = hosts.newKey();
    const actor = createActor(machine, {
      input: {
        host,
        toolCall,
        hooks: { beforeToolCall: !!options.beforeToolCall, afterToolCall: !!options.afterToolCall },
        startedAt: systemClock.now(),
      },
    });
    const runtime = createRunRuntime({
      owner: actor,
      config: { beforeToolCall: options.beforeToolCall, afterToolCall: options.afterToolCall },
      streamFn: () => {
        throw new Error("runToolCall makes no model request");
      },
      tools: options.tools,
      signal: options.signal,
      subAgents,
      sink: (event) => (event.type === "tool_execution_update" ? options.onUpdate?.(event.partialResult) : undefined),
      onSinkFailure: () => {},
      // The hooks see the caller's message and context, not a run's.
      hookContext: () => ({ assistantMessage: options.assistantMessage, context: options.context }),
    });
    hosts.serve(host, runtime);
    actor.start();
    const output = await toPromise(actor);
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
