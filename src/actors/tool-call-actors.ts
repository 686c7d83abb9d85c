/**
 * The tool-call machine's implementations (R21–R23, R29) over one run's dependencies.
 */
import { assign, fromPromise, type ActorSystem } from "xstate";
import type { AfterToolCallResult, AgentToolResult, ToolCall } from "../types.js";
import type { ExecutionOutcome, GateDecision, ToolCallContext, ToolCallEvent } from "../../machines/tool-call.machine.js";
import { validateToolArguments } from "../tools/index.js";
import { abortedResult, blockedResult, errorResult, errorText, toolNotFoundResult } from "../loop/tool-results.js";
import { monotonicNow } from "../providers/assistant-stream.js";
import type { RunDeps } from "./run-deps.js";

export type ToolDeps = Pick<RunDeps, "config" | "signal" | "events" | "tools" | "hookContext">;

/** R21: abort check, lookup, `prepareArguments`, validation of a copy of the arguments. */
export function prepareToolCall(deps: ToolDeps, call: ToolCall): { args: unknown } | { result: AgentToolResult } {
  if (deps.signal.aborted) return { result: abortedResult() };
  const tool = deps.tools.find(call.name);
  if (!tool) return { result: toolNotFoundResult(call.name) };
  let raw: unknown = call.arguments;
  if (tool.prepareArguments) {
    try {
      raw = tool.prepareArguments(raw);
    } catch (error) {
      return { result: errorResult(errorText(error)) };
    }
  }
  const validation = validateToolArguments(tool, { arguments: raw, argumentsError: call.argumentsError });
  return validation.ok ? { args: validation.args } : { result: errorResult(validation.message) };
}

/** A tool's return value, checked: a malformed result is the tool's bug and becomes an error result. */
function checkedResult(name: string, value: unknown): AgentToolResult {
  if (value && typeof value === "object" && Array.isArray((value as AgentToolResult).content)) return value as AgentToolResult;
  return errorResult(`Tool ${name} returned an invalid result (expected { content: [...], details })`);
}

/** Implementations that find their run's dependencies through the actor system (see `system-deps.ts`). */
export function createToolCallImplementations(resolve: (system: ActorSystem<any>) => ToolDeps) {
  return {
    actions: {
      prepareCall: assign<ToolCallContext, ToolCallEvent, unknown, ToolCallEvent, never>(({ context, system }) => {
        const prepared = prepareToolCall(resolve(system), context.toolCall);
        return "result" in prepared ? { result: prepared.result, isError: true } : { args: prepared.args };
      }),
    },
    actors: {
      gateToolCall: fromPromise<GateDecision, { toolCall: ToolCall; args: unknown }>(async ({ input, system }) => {
        const deps = resolve(system);
        await deps.events.settled();
        const decision = await deps.config.beforeToolCall!(
          { ...deps.hookContext(), toolCall: input.toolCall, args: input.args },
          deps.signal,
        );
        if (deps.signal.aborted) return { allowed: false, result: abortedResult() };
        if (decision?.block) return { allowed: false, result: blockedResult(decision.reason, decision.terminate) };
        return { allowed: true };
      }),
      executeToolCall: fromPromise<ExecutionOutcome, { toolCall: ToolCall; args: unknown }>(({ input, system }) =>
        executeToolCall(resolve(system), input.toolCall, input.args),
      ),
      finalizeToolCall: fromPromise<
        AfterToolCallResult | undefined,
        { toolCall: ToolCall; args: unknown; result: AgentToolResult; isError: boolean }
      >(async ({ input, system }) => {
        const deps = resolve(system);
        await deps.events.settled();
        return deps.config.afterToolCall!({ ...deps.hookContext(), ...input }, deps.signal);
      }),
    },
  };
}

/** R22, R29: run `execute`, forwarding updates until it settles; durationMs on a monotonic clock. */
async function executeToolCall(deps: ToolDeps, toolCall: ToolCall, args: unknown): Promise<ExecutionOutcome> {
  const { events, signal } = deps;
  await events.settled();
  // R29: a call that had not started when the abort came does not run.
  if (signal.aborted) return { executed: false, result: abortedResult(), isError: true };
  const tool = deps.tools.find(toolCall.name)!;
  let settled = false;
  // R22: updates after `execute` settled are dropped.
  const onUpdate = (partialResult: AgentToolResult) => {
    if (settled) return;
    events.push({
      type: "tool_execution_update",
      toolCallId: toolCall.id,
      toolName: toolCall.name,
      args: toolCall.arguments,
      partialResult,
    });
  };
  const started = monotonicNow();
  try {
    const value = await tool.execute(toolCall.id, args, signal, onUpdate);
    settled = true;
    const result = checkedResult(toolCall.name, value);
    return { executed: true, result, isError: result.isError === true, durationMs: monotonicNow() - started };
  } catch (error) {
    settled = true;
    return { executed: true, result: errorResult(errorText(error)), isError: true, durationMs: monotonicNow() - started };
  }
}
