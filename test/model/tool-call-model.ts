/**
 * The tool-call machine's test model: input variants (batch mode, which tool hooks are configured,
 * and whether the call needs approval: the machine itself sees only `afterToolCall` and the
 * approval, the rest decides how the run gets the call there), the synthetic events of each state
 * (the step worker's `step.<job>.done`/`step.failed` replies; R82's decisions the run forwards),
 * every simple path to `settled`, and the run that makes the real child actor `tool:0` follow it.
 * (`step.reissue` is taken by the directed runs of directed-runs.ts.)
 */
import { type SnapshotFrom } from "xstate";
import { getSimplePaths, type StatePath } from "xstate/graph";
import type { AgentLoopConfig, AgentMessage, AgentTool, ScriptedResponse } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { toolCallMachine, type ToolCallEvent, type ToolCallInput } from "../../machines/tool-call.machine.js";
import type { StepJobs, StepName } from "../../machines/steps.js";
import { abortedResult, errorResult } from "../../src/loop/tool-results.js";
import { FAULTY_TOOLS, statePath, type LoopArgs } from "./harness.js";
import { approveToolCall, rejectToolCall } from "../../src/agent/index.js";
import type { RunActor } from "../../src/index.js";

export interface ToolVariant {
  mode: "sequential" | "parallel";
  beforeToolCall: boolean;
  afterToolCall: boolean;
  /** R82: call 0's tool needs approval. */
  approval: boolean;
}

export const toolVariants: ToolVariant[] = [
  ...(["sequential", "parallel"] as const).flatMap((mode) =>
    [false, true].flatMap((beforeToolCall) => [false, true].map((afterToolCall) => ({ mode, beforeToolCall, afterToolCall, approval: false }))),
  ),
  // R82: beforeToolCall changes nothing for a waiting call (it ran before the wait).
  ...(["sequential", "parallel"] as const).flatMap((mode) => [false, true].map((afterToolCall) => ({ mode, beforeToolCall: false, afterToolCall, approval: true }))),
];

export const describeVariant = (v: ToolVariant) =>
  `${v.mode}${v.beforeToolCall ? ", beforeToolCall" : ""}${v.afterToolCall ? ", afterToolCall" : ""}${v.approval ? ", needs approval" : ""}`;

type ToolSnapshot = SnapshotFrom<typeof toolCallMachine>;
export type ToolPath = StatePath<ToolSnapshot, ToolCallEvent>;

/** For traversal only: no step worker to ask. */
const traversable = toolCallMachine.provide({ actions: { requestStep: () => {}, cancelStep: () => {}, reissueStep: () => {} } });

const ok = { content: [{ type: "text" as const, text: "ok" }], details: {} };

const done = <K extends StepName>(job: K, output: StepJobs[K]["output"]) => ({ type: `step.${job}.done`, output, at: 0 }) as ToolCallEvent;
const failed = (job: StepName, why: string): ToolCallEvent => ({ type: "step.failed", job, error: new Error(why), at: 0 });

/**
 * An abort after the call passed its preflight and before it executes (`executed: false`) is
 * realizable where something runs in between: a later call's preparation in a parallel batch
 * (preflighted in the same step, after this call's), or the call's own `prepareArguments` when no
 * `beforeToolCall` follows it (`beforeToolCall` sees the abort and blocks the call, R21).
 */
const abortRealizable = (v: ToolVariant) => v.mode === "parallel" || !v.beforeToolCall || v.approval;

function toolEvents(variant: ToolVariant) {
  return (snapshot: ToolSnapshot): ToolCallEvent[] => {
    switch (statePath(snapshot.value)) {
      // R82: approved (as it was, or with replacement arguments), rejected, aborted, or (parallel
      // only: a sequential batch starts no sibling while a call waits) cancelled by a sibling (R73).
      case "awaitingApproval":
        return [
          { type: "approval.approve", approvalId: "approval-1" },
          { type: "approval.approve", approvalId: "approval-1", args: { replaced: true } },
          { type: "approval.reject", approvalId: "approval-1", reason: "no" },
          { type: "approval.abort" },
          ...(variant.mode === "parallel" ? [{ type: "call.cancel", failedTool: "cancels", at: 0 } as const] : []),
        ];
      case "executing":
        return [
          done("executeToolCall", { executed: true, result: ok, isError: false, durationMs: 1 }),
          done("executeToolCall", { executed: true, result: errorResult("tool threw"), isError: true, durationMs: 1 }),
          ...(abortRealizable(variant) ? [done("executeToolCall", { executed: false, result: abortedResult(), isError: true })] : []),
          failed("executeToolCall", "execute job failed"),
        ];
      case "finalizing":
        return [done("finalizeToolCall", undefined), failed("finalizeToolCall", "afterToolCall threw")];
      default:
        return [];
    }
  };
}

export function toolPaths(variant: ToolVariant): ToolPath[] {
  const input: ToolCallInput = {
    index: 0,
    toolCall: { type: "toolCall", id: "c0", name: "ok", arguments: {} },
    args: {},
    afterToolCall: variant.afterToolCall,
    startedAt: 0,
    ...(variant.approval ? { approval: { approvalId: "approval-1", reason: "Tool ok requires approval" } } : {}),
  };
  return getSimplePaths(traversable, {
    input,
    events: toolEvents(variant),
    serializeState: (s) => JSON.stringify([s.status, s.value, s.context.result !== null]),
    toState: (s) => s.status === "done",
  }) as ToolPath[];
}

// ---------------------------------------------------------------------------------------------
// Realizing a path
// ---------------------------------------------------------------------------------------------

interface ToolPlan {
  execute: "ok" | "throw" | "abort" | "fault";
  finalize: "none" | "throw" | null;
  /** R82: what is decided while call 0 waits. */
  decision: "approve" | "approveWithArgs" | "reject" | "abort" | "cancel" | null;
}

export function toolPlanOf(path: ToolPath): ToolPlan {
  const plan: ToolPlan = { execute: "ok", finalize: null, decision: null };
  for (let i = 1; i < path.steps.length; i++) {
    const state = statePath(path.steps[i - 1].state.value);
    const event = path.steps[i].event as ToolCallEvent & { output?: any };
    const isFailed = event.type === "step.failed";
    if (state === "awaitingApproval") {
      plan.decision =
        event.type === "approval.approve" ? ("args" in event ? "approveWithArgs" : "approve") : event.type === "approval.reject" ? "reject" : event.type === "approval.abort" ? "abort" : "cancel";
    }
    if (state === "executing") plan.execute = isFailed ? "fault" : !event.output.executed ? "abort" : event.output.isError ? "throw" : "ok";
    if (state === "finalizing") plan.finalize = isFailed ? "throw" : "none";
  }
  return plan;
}

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });
const schema = { type: "object", properties: {} };
const mkTool = (name: string, execute: AgentTool["execute"]): AgentTool => ({ name, label: name, description: name, parameters: schema, execute });

export function realizeTool(variant: ToolVariant, path: ToolPath): Omit<LoopArgs, "coverage"> {
  const plan = toolPlanOf(path);
  const controller = new AbortController();
  // R29: the abort arrives after call 0 passed its preflight and before it executes: in a helper
  // call's prepareArguments in a parallel batch, in call 0's own prepareArguments otherwise
  // (R82: or right after its approval, before its execution starts).
  const abort = plan.execute === "abort" && !variant.approval;
  const helper = abort && variant.mode === "parallel";
  const name = plan.execute === "throw" ? "throws" : plan.execute === "fault" ? FAULTY_TOOLS.execFault : abort && !helper ? "abortsInPreparation" : "ok";
  const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: (m) => m as never, toolExecution: variant.mode };
  if (variant.beforeToolCall) {
    // (Allows every call: a call it blocks never reaches the tool-call machine.)
    config.beforeToolCall = async () => undefined;
  }
  if (variant.afterToolCall) {
    config.afterToolCall = async ({ toolCall: call }) => {
      if (call.id === "call_0" && plan.finalize === "throw") throw new Error("afterToolCall threw (scripted)");
      return undefined;
    };
  }
  const abortsInPreparation: AgentTool = {
    ...mkTool("abortsInPreparation", async () => ok),
    prepareArguments: (args) => {
      controller.abort();
      return args;
    },
  };
  // R73: a sibling that fails and cancels the rest of the batch while call 0 waits.
  const cancels: AgentTool = {
    ...mkTool("cancels", async () => {
      throw new Error("cancels failed (scripted)");
    }),
    cancelSiblingsOnError: true,
  };
  const sibling = plan.decision === "cancel" ? [toolCall("cancels", {}, "call_1")] : [];
  const calls = [toolCall(name, {}, "call_0"), ...(helper ? [toolCall("abortsInPreparation", {}, "call_1")] : []), ...sibling];
  const responses: ScriptedResponse[] = [{ content: [text("calling"), ...calls] }, { content: [text("done")] }];
  const faulty = plan.execute === "fault";
  const tools = [
    mkTool("ok", async () => ok),
    mkTool("throws", async () => {
      throw new Error("tool threw (scripted)");
    }),
    abortsInPreparation,
    mkTool(FAULTY_TOOLS.execFault, async () => ok),
    cancels,
  ];
  let actor: RunActor | undefined;
  // R82: call 0 waits; the decision the path takes is sent once the run asked for it.
  const decide = (approvalId: string) => {
    switch (plan.decision) {
      case "approve":
      case "approveWithArgs":
        approveToolCall(actor!, approvalId, plan.decision === "approveWithArgs" ? { args: {} } : undefined);
        if (plan.execute === "abort") controller.abort();
        return;
      case "reject":
        return rejectToolCall(actor!, approvalId, "no");
      case "abort":
        return controller.abort();
    }
  };
  return {
    prompts: [user("hi")],
    context: { messages: [], tools: variant.approval ? tools.map((tool) => ({ ...tool, needsApproval: (_: unknown, { toolCall: call }: { toolCall: { id: string } }) => call.id === "call_0" })) : tools },
    config,
    streamFn: scriptedStreamFn(responses),
    signal: controller.signal,
    faulty,
    onActor: (a) => (actor = a),
    onEvent: (event) => {
      if (event.type === "tool_approval_requested") queueMicrotask(() => decide(event.approvalId));
    },
  };
}

export function describeToolPath(path: ToolPath): string {
  return path.steps.map((step) => `${step.event.type}→${statePath(step.state.value)}`).join(" ");
}
