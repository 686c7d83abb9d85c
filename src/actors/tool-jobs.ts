/**
 * The tool-call steps' work (R21–R23, R29): the synchronous preparation the machine runs as an
 * action, and the three jobs the effect worker runs for it.
 */
import type { AfterToolCallResult, AgentToolResult, ToolCall } from "../types.js";
import type { EffectJobs, ExecutionOutcome, GateDecision } from "../../machines/effects.js";
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

/** R21: `beforeToolCall`, normalized; an abort that came while it ran wins. */
export async function gateToolCall(deps: ToolDeps, input: EffectJobs["gateToolCall"]["input"]): Promise<GateDecision> {
  const decision = await deps.config.beforeToolCall!({ ...deps.hookContext(), toolCall: input.toolCall, args: input.args }, deps.signal);
  if (deps.signal.aborted) return { allowed: false, result: abortedResult() };
  if (decision?.block) return { allowed: false, result: blockedResult(decision.reason, decision.terminate) };
  return { allowed: true };
}

/** R22, R29: run `execute`, forwarding updates until it settles; durationMs on a monotonic clock. */
export async function executeToolCall(deps: ToolDeps, input: EffectJobs["executeToolCall"]["input"]): Promise<ExecutionOutcome> {
  const { events, signal } = deps;
  const { toolCall, args } = input;
  // R29: a call that had not started when the abort came does not run.
  if (signal.aborted) return { executed: false, result: abortedResult(), isError: true };
  const tool = deps.tools.find(toolCall.name)!;
  let settled = false;
  // R22: updates after `execute` settled are dropped.
  const onUpdate = (partialResult: AgentToolResult) => {
    if (settled) return;
    events.push({ type: "tool_execution_update", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments, partialResult });
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

/** R23: `afterToolCall`'s overrides (the machine merges them). */
export function finalizeToolCall(
  deps: ToolDeps,
  input: EffectJobs["finalizeToolCall"]["input"],
): Promise<AfterToolCallResult | undefined> {
  return deps.config.afterToolCall!({ ...deps.hookContext(), ...input }, deps.signal);
}

/** A tool's return value, checked: a malformed result is the tool's bug and becomes an error result. */
function checkedResult(name: string, value: unknown): AgentToolResult {
  if (value && typeof value === "object" && Array.isArray((value as AgentToolResult).content)) return value as AgentToolResult;
  return errorResult(`Tool ${name} returned an invalid result (expected { content: [...], details })`);
}
