/**
 * The tool-call steps' work (R21–R23, R29, R13): preparation, `beforeToolCall`, `execute` and
 * `afterToolCall`, each run by the step worker for one call's state.
 */
import type { AfterToolCallResult, AgentToolResult, AssistantMessage } from "../types.js";
import { addUsage, emptyUsage } from "../protocol/usage.js";
import type { CallPreflight, ExecutionOutcome, Preflight, PreflightApproval, StepJobs } from "../../machines/steps.js";
import type { AgentTool, AnyAgentEvent, ToolCall } from "../types.js";
import { approvalUnavailableResult, needsApprovalReason, rulesAllow } from "../../machines/approval.helpers.js";
import { describeValue } from "../boundary/describe-value.js";
import { validateToolArgumentsOfRun } from "../tools/validate.js";
import { abortedResult, blockedResult, errorResult, errorText, interruptedResult, toolNotFoundResult } from "../loop/tool-results.js";
import { toPlainData } from "../loop/plain-data.js";
import { checkAfterToolCallResult, checkBeforeToolCallResult, checkToolResult } from "../boundary/index.js";
import type { RunRuntime } from "./run-runtime.js";
import type { JobScope } from "./job-scope.js";
import { toolExecutionContext, type ExecutionContext } from "./sub-runs.js";

type Input<K extends keyof StepJobs> = StepJobs[K]["input"];

export const toolJobs = {
  /**
   * R21, R24, R25: for each call in order: `tool_execution_start` (delivered before anything
   * else happens), preparation, `beforeToolCall`; an immediate result ends at once.
   */
  async preflightCalls(runtime: RunRuntime, { calls, gate, approval }: Input<"preflightCalls">, scope: JobScope): Promise<Preflight[]> {
    const preflights: Preflight[] = [];
    for (const { index, toolCall } of calls) {
      // Marked before delivery: a listener that throws at this very start still leaves a started call (R55).
      runtime.startedCalls.add(toolCall.id);
      await delivered(runtime, scope, { type: "tool_execution_start", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments });
      const decision = await preflightDecision(runtime, toolCall, gate, approval, scope);
      if (decision.ready) {
        const ready: Preflight = { index, ready: true, args: decision.args };
        if (decision.approval) ready.approval = decision.approval;
        preflights.push(ready);
        continue;
      }
      // R25: an immediate result is reported at once, before the next call starts.
      await delivered(runtime, scope, { type: "tool_execution_end", toolCallId: toolCall.id, toolName: toolCall.name, result: decision.result, isError: true });
      preflights.push({ index, ready: false, result: decision.result, settledAt: runtime.clock.now() });
    }
    return preflights;
  },

  /** R22, R29, R13: run `execute`, forwarding updates until it settles; durationMs on the injected clock. */
  async executeToolCall(runtime: RunRuntime, input: Input<"executeToolCall">, scope: JobScope): Promise<ExecutionOutcome> {
    const { clock } = runtime;
    const { toolCall } = input;
    const { signal } = scope;
    // R29: a call that had not started when the abort came does not run.
    if (signal.aborted) return { executed: false, result: abortedResult(), isError: true };
    const tool = runtime.tools.find(toolCall.name)!;
    // R82: an approval's replacement arguments are prepared and validated as the model's were.
    let args = input.args;
    if (input.validate) {
      const validated = validatedArgs(tool, args, undefined);
      if (!validated.ready) return { executed: false, result: validated.result, isError: true };
      args = validated.args;
    }
    // R82: the validated replacement arguments go back with the outcome (last, as they always were).
    const replaced = input.validate === true;
    // R13: an execution in flight at the snapshot runs again only if its tool says it may.
    if (scope.reissue && tool.replay !== "safe") return { executed: false, result: interruptedResult(toolCall.name), isError: true };
    let settled = false;
    // R22: updates after `execute` settled are dropped, and so are those of a cancelled call.
    const onUpdate = (partialResult: AgentToolResult) => {
      if (settled || scope.cancelled) return;
      scope.emit({ type: "tool_execution_update", toolCallId: toolCall.id, toolName: toolCall.name, args: toolCall.arguments, partialResult: toPlainData(partialResult) });
    };
    const started = clock.monotonic();
    const context = toolExecutionContext(runtime, scope);
    const execution = (async (): Promise<ExecutionOutcome> => {
      try {
        const value = await tool.execute(toolCall.id, args, signal, onUpdate, context);
        const result = withSubRunSpend(toPlainData(checkToolResult(toolCall.name, value)), context);
        const outcome: ExecutionOutcome = { executed: true, result, isError: result.isError === true, durationMs: clock.monotonic() - started };
        if (replaced) outcome.args = args;
        return outcome;
      } catch (error) {
        const outcome: ExecutionOutcome = { executed: true, result: withSubRunSpend(errorResult(errorText(error)), context), isError: true, durationMs: clock.monotonic() - started };
        if (replaced) outcome.args = args;
        return outcome;
      } finally {
        settled = true;
      }
    })();
    const timeoutMs = tool.timeoutMs ?? runtime.config.toolTimeoutMs;
    if (timeoutMs === undefined) return execution;
    // R65: the deadline counts from the call's execution step, so a restored call waits only what was left.
    const remaining = Math.max(0, input.startedAt + timeoutMs - clock.now());
    let cancelTimer: () => void = () => {};
    const timedOut = new Promise<ExecutionOutcome>((resolve) => {
      cancelTimer = clock.setTimer(remaining, () => {
        settled = true;
        scope.abortOwn(new Error(`timed out after ${timeoutMs} ms`));
        resolve({ executed: false, result: errorResult(`Tool ${toolCall.name} timed out after ${timeoutMs} ms`), isError: true, durationMs: clock.monotonic() - started });
      });
    });
    // Whichever comes first; a late outcome is dropped.
    return Promise.race([execution, timedOut]).finally(cancelTimer);
  },

  /**
   * R70: may the streamed call run alongside others? `isConcurrencySafe` on a validated copy of
   * its arguments (absent, throwing, or a sequential tool or batch: not safe). A call that cannot
   * run (unknown tool, invalid arguments) executes nothing, so it is safe: its preflight gives it
   * its error result.
   */
  async checkToolCall(runtime: RunRuntime, { toolCall, sequential }: Input<"checkToolCall">): Promise<boolean> {
    const tool = runtime.tools.find(toolCall.name);
    if (!tool) return true;
    if (sequential || tool.executionMode === "sequential" || typeof tool.isConcurrencySafe !== "function") return false;
    let decision: Decision;
    try {
      decision = prepareCall(runtime, toolCall, true);
    } catch {
      return true;
    }
    if (!decision.ready) return true;
    try {
      return (await tool.isConcurrencySafe(decision.args)) === true;
    } catch {
      return false;
    }
  },

  /**
   * R70, R21: a streamed call's preflight, after the run emitted its `tool_execution_start` (the
   * worker starts this job once the sink has it). `beforeToolCall` is told whether the response
   * still streams and, if so, gets a copy of the partial message.
   */
  async preflightToolCall(runtime: RunRuntime, { toolCall, partial, gate, approval }: Input<"preflightToolCall">, scope: JobScope): Promise<CallPreflight> {
    const decision = await preflightDecision(runtime, toolCall, gate, approval, scope, partial);
    if (!decision.ready) return decision;
    return { ready: true, args: decision.args, ...(decision.approval ? { approval: decision.approval } : {}) };
  },

  /** R23: `afterToolCall`'s overrides (the machine merges them). */
  async finalizeToolCall(runtime: RunRuntime, input: Input<"finalizeToolCall">, { signal }: JobScope): Promise<AfterToolCallResult | undefined> {
    const override = checkAfterToolCallResult(await runtime.config.afterToolCall!({ ...runtime.hookContext(), ...input }, signal));
    return override ? toPlainData(override) : undefined;
  },
};

/**
 * R63: `result` with what the execution's sub-agents spent added to its own `usage`, so that the
 * parent run's budget and an Agent's usage totals count it. A call that timed out, was abandoned or
 * cancelled reports none (its result is not the execution's; what its sub-agents spent before they
 * were aborted is lost: a known gap, docs/reference/semantics.md).
 */
function withSubRunSpend(result: AgentToolResult, context: ExecutionContext): AgentToolResult {
  const { spent } = context;
  if (!spent || (spent.input === 0 && spent.output === 0 && spent.cacheRead === 0 && spent.cacheWrite === 0 && spent.totalTokens === 0 && spent.cost.total === 0)) return result;
  return { ...result, usage: addUsage(addUsage(emptyUsage(), result.usage ?? {}), spent) };
}

/** `tool`: the tool the preparation found (looked up once per preflight). */
type Ready = { ready: true; args: unknown; approval?: { reason: string }; tool?: AgentTool };
type Decision = Ready | { ready: false; result: AgentToolResult };

/**
 * R21, R82: one call's preflight after its start: preparation, `beforeToolCall` (when `gate`; a
 * streamed call's hook gets the partial message, R70), then whether it waits for approval. It never
 * fails the run: whatever throws is that call's error result (R21, R26).
 */
async function preflightDecision(
  runtime: RunRuntime,
  toolCall: ToolCall,
  gate: boolean,
  approval: PreflightApproval | undefined,
  // The job's signal is made when a hook is given it (an AbortController per preflight costs ~4 µs on Node 20).
  scope: Pick<JobScope, "signal">,
  partial?: AssistantMessage | null,
): Promise<Decision> {
  let decision: Decision;
  try {
    decision = prepareCall(runtime, toolCall);
  } catch (error) {
    decision = { ready: false, result: errorResult(errorText(error)) };
  }
  const tool = decision.ready ? decision.tool : undefined;
  if (decision.ready && gate) decision = await gateCall(runtime, toolCall, decision.args, scope.signal, partial);
  if (decision.ready) decision = await approvalOf(tool, toolCall, decision, approval, scope);
  return decision;
}

/** R21: abort check, lookup, `prepareArguments`, validation of a copy of the arguments. */
function prepareCall(runtime: RunRuntime, call: ToolCall, ignoreAbort = false): Decision {
  if (runtime.aborted && !ignoreAbort) return { ready: false, result: abortedResult() };
  const tool = runtime.tools.find(call.name);
  if (!tool) return { ready: false, result: toolNotFoundResult(call.name) };
  const decision = validatedArgs(tool, call.arguments, call.argumentsError);
  // (The spread last: see `appended` in machines/run.helpers.ts.)
  return decision.ready ? { tool, ...decision } : decision;
}

/** R21: `prepareArguments`, then validation with the reference's coercions (of a copy). */
function validatedArgs(tool: AgentTool, raw: unknown, argumentsError: string | undefined): Decision {
  if (tool.prepareArguments) {
    try {
      raw = tool.prepareArguments(raw);
    } catch (error) {
      return { ready: false, result: errorResult(errorText(error)) };
    }
  }
  const plain = { known: false };
  const validation = validateToolArgumentsOfRun(tool, { arguments: raw, argumentsError }, plain);
  if (!validation.ok) return { ready: false, result: errorResult(validation.message) };
  // R13: plain data; a copy plain by construction needs no second walk to say so.
  return { ready: true, args: plain.known ? validation.args : toPlainData(validation.args) };
}

/**
 * R82: does the call wait for approval? `beforeToolCall` asked for it, or the tool's
 * `needsApproval` (a predicate runs here, in the step, on the validated arguments); an "always
 * allow" rule lets it through; with nobody to ask (`approval` absent), it is refused.
 */
async function approvalOf(tool: AgentTool | undefined, toolCall: ToolCall, decision: Ready, approval: PreflightApproval | undefined, scope: Pick<JobScope, "signal">): Promise<Decision> {
  let reason = decision.approval?.reason;
  if (reason === undefined) {
    let needs: AgentTool["needsApproval"];
    let answer: unknown;
    try {
      needs = tool?.needsApproval;
      if (typeof needs === "function") answer = await needs(decision.args, { toolCall });
    } catch (error) {
      return { ready: false, result: errorResult(errorText(error)) };
    }
    if (needs === undefined || needs === false) return decision;
    if (typeof needs === "function") {
      if (scope.signal.aborted) return { ready: false, result: abortedResult() };
      if (typeof answer !== "boolean") return { ready: false, result: errorResult(`needsApproval of tool ${toolCall.name} returned ${describeValue(answer)}; expected a boolean`) };
      if (!answer) return decision;
    } else if (needs !== true) {
      return { ready: false, result: errorResult(`needsApproval of tool ${toolCall.name} must be a boolean or a function, got ${describeValue(needs)}`) };
    }
    reason = needsApprovalReason(toolCall.name);
  }
  if (!approval) return { ready: false, result: approvalUnavailableResult(toolCall.name) };
  if (rulesAllow(approval.rules, toolCall.name, decision.args)) return { ready: true, args: decision.args };
  return { ready: true, args: decision.args, approval: { reason } };
}

/** R21: `beforeToolCall`, normalized; a throw is an error result; an abort that came while it ran wins. */
async function gateCall(runtime: RunRuntime, toolCall: ToolCall, args: unknown, signal: AbortSignal, streamed?: AssistantMessage | null): Promise<Decision> {
  try {
    // R70: in streaming mode the hook learns whether the response still streams (then it sees the partial message).
    const context =
      streamed === undefined
        ? { ...runtime.hookContext(), toolCall, args }
        : { ...runtime.hookContext(), ...(streamed ? { assistantMessage: structuredClone(streamed) } : {}), toolCall, args, streaming: streamed !== null };
    const decision = checkBeforeToolCallResult(await runtime.config.beforeToolCall!(context, signal));
    if (signal.aborted) return { ready: false, result: abortedResult() };
    if (decision?.block) return { ready: false, result: blockedResult(decision.reason, decision.terminate) };
    // R82: the hook asks for approval (with its reason, else the default one).
    if (decision?.approval) return { ready: true, args, approval: { reason: decision.approval.reason || needsApprovalReason(toolCall.name) } };
    return { ready: true, args };
  } catch (error) {
    return { ready: false, result: errorResult(errorText(error)) };
  }
}

/** Pushes `event` and waits until the sink is idle again (R21: what follows comes after it). */
async function delivered(runtime: RunRuntime, scope: JobScope, event: AnyAgentEvent): Promise<void> {
  scope.emit(event);
  for (let settled = runtime.events.settled(); settled; settled = runtime.events.settled()) await settled;
}
