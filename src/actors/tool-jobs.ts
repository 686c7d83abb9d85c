/**
 * The tool-call steps' work (R21–R23, R29, R13): preparation, `beforeToolCall`, `execute` and
 * `afterToolCall`, each run by the step worker for one call's state.
 */
import type { AfterToolCallResult, AgentToolResult } from "../types.js";
import type { ExecutionOutcome, GateDecision, Preparation, StepJobs } from "../../machines/steps.js";
import { validateToolArguments } from "../tools/index.js";
import { abortedResult, blockedResult, errorResult, errorText, interruptedResult, toolNotFoundResult } from "../loop/tool-results.js";
import { toPlainData } from "../loop/plain-data.js";
import { checkAfterToolCallResult, checkBeforeToolCallResult, checkToolResult } from "../boundary/index.js";
import type { RunRuntime } from "./run-runtime.js";
import type { JobScope } from "./steps-worker.js";
import { toolExecutionContext } from "./sub-runs.js";

type Input<K extends keyof StepJobs> = StepJobs[K]["input"];

export const toolJobs = {
  /** R21: abort check, lookup, `prepareArguments`, validation of a copy of the arguments. */
  async prepareToolCall(runtime: RunRuntime, { toolCall: call }: Input<"prepareToolCall">): Promise<Preparation> {
    if (runtime.signal.aborted) return { ready: false, result: abortedResult() };
    const tool = runtime.tools.find(call.name);
    if (!tool) return { ready: false, result: toolNotFoundResult(call.name) };
    let raw: unknown = call.arguments;
    if (tool.prepareArguments) {
      try {
        raw = tool.prepareArguments(raw);
      } catch (error) {
        return { ready: false, result: errorResult(errorText(error)) };
      }
    }
    const validation = validateToolArguments(tool, { arguments: raw, argumentsError: call.argumentsError });
    return validation.ok ? { ready: true, args: toPlainData(validation.args) } : { ready: false, result: errorResult(validation.message) };
  },

  /** R21: `beforeToolCall`, normalized; an abort that came while it ran wins. */
  async gateToolCall(runtime: RunRuntime, input: Input<"gateToolCall">, { signal }: JobScope): Promise<GateDecision> {
    const decision = checkBeforeToolCallResult(await runtime.config.beforeToolCall!({ ...runtime.hookContext(), toolCall: input.toolCall, args: input.args }, signal));
    if (signal.aborted) return { allowed: false, result: abortedResult() };
    if (decision?.block) return { allowed: false, result: blockedResult(decision.reason, decision.terminate) };
    return { allowed: true };
  },

  /** R22, R29, R13: run `execute`, forwarding updates until it settles; durationMs on the injected clock. */
  async executeToolCall(runtime: RunRuntime, input: Input<"executeToolCall">, scope: JobScope): Promise<ExecutionOutcome> {
    const { events, clock } = runtime;
    const { toolCall, args } = input;
    const { signal } = scope;
    // R29: a call that had not started when the abort came does not run.
    if (signal.aborted) return { executed: false, result: abortedResult(), isError: true };
    const tool = runtime.tools.find(toolCall.name)!;
    // R13: an execution in flight at the snapshot runs again only if its tool says it may.
    if (scope.reissue && tool.replay !== "safe") return { executed: false, result: interruptedResult(toolCall.name), isError: true };
    let settled = false;
    // R22: updates after `execute` settled are dropped.
    const onUpdate = (partialResult: AgentToolResult) => {
      if (settled) return;
      events.push({ type: "tool_execution_update", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments, partialResult: toPlainData(partialResult) });
    };
    const started = clock.monotonic();
    try {
      const value = await tool.execute(toolCall.id, args, signal, onUpdate, toolExecutionContext(runtime, scope));
      settled = true;
      const result = toPlainData(checkToolResult(toolCall.name, value));
      return { executed: true, result, isError: result.isError === true, durationMs: clock.monotonic() - started };
    } catch (error) {
      settled = true;
      return { executed: true, result: errorResult(errorText(error)), isError: true, durationMs: clock.monotonic() - started };
    }
  },

  /** R23: `afterToolCall`'s overrides (the machine merges them). */
  async finalizeToolCall(runtime: RunRuntime, input: Input<"finalizeToolCall">, { signal }: JobScope): Promise<AfterToolCallResult | undefined> {
    const override = checkAfterToolCallResult(await runtime.config.afterToolCall!({ ...runtime.hookContext(), ...input }, signal));
    return override ? toPlainData(override) : undefined;
  },
};
