/**
 * The tool-call machine's test model: input variants (mode, which tool hooks are configured,
 * whether preparation yields an immediate result), the synthetic events of each state (`EXECUTE`,
 * the worker's `done.<job>`/`failed` replies), every simple path to `settled`, and the run that
 * makes the real child actor `tool:0` follow it.
 */
import { assign, createActor, fromCallback, type SnapshotFrom } from "xstate";
import { getSimplePaths, type StatePath } from "xstate/graph";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, ScriptedResponse } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { toolCallMachine, type ToolCallContext, type ToolCallEvent, type ToolCallInput } from "../../machines/tool-call.machine.js";
import { abortedResult, errorResult } from "../../src/loop/tool-results.js";
import { FAULTY_TOOLS, statePath, type LoopArgs } from "./harness.js";

export interface ToolVariant {
  mode: "sequential" | "parallel";
  beforeToolCall: boolean;
  afterToolCall: boolean;
  /** Preparation fails (unknown tool) and the call settles at once. */
  immediate: boolean;
}

export const toolVariants: ToolVariant[] = (["sequential", "parallel"] as const).flatMap((mode) =>
  [false, true].flatMap((beforeToolCall) =>
    [false, true].flatMap((afterToolCall) => [false, true].map((immediate) => ({ mode, beforeToolCall, afterToolCall, immediate }))),
  ),
);

export const describeVariant = (v: ToolVariant) =>
  `${v.mode}${v.beforeToolCall ? ", beforeToolCall" : ""}${v.afterToolCall ? ", afterToolCall" : ""}${v.immediate ? ", unknown tool" : ""}`;

type ToolSnapshot = SnapshotFrom<typeof toolCallMachine>;
export type ToolPath = StatePath<ToolSnapshot, ToolCallEvent>;

/** For traversal only: preparation decided by the tool's name, and no parent to report to. */
const traversable = toolCallMachine.provide({
  actions: {
    prepareCall: assign(({ context }: { context: ToolCallContext }) =>
      context.toolCall.name === "missing" ? { result: errorResult("Tool missing not found"), isError: true } : { args: context.toolCall.arguments },
    ) as never,
    reportReady: () => {},
  },
});

const ok = { content: [{ type: "text" as const, text: "ok" }], details: {} };

/**
 * An abort between preflight and execution (`executed: false`) is only realizable where something
 * observable separates them: another call's preflight in a parallel batch, or the call's own
 * `tool_execution_start` when no `beforeToolCall` runs in between (a sequential call with
 * `beforeToolCall` goes straight from the gate to `execute`, so an abort lands in the gate, R21).
 */
const abortRealizable = (v: ToolVariant) => v.mode === "parallel" || !v.beforeToolCall;

function toolEvents(variant: ToolVariant) {
  return (snapshot: ToolSnapshot): ToolCallEvent[] => {
    switch (statePath(snapshot.value)) {
      case "gating":
        return [
          { type: "done.gateToolCall", output: { allowed: true } },
          { type: "done.gateToolCall", output: { allowed: false, result: errorResult("blocked") } },
          { type: "failed", job: "gateToolCall", error: new Error("beforeToolCall threw") },
        ];
      case "awaitingExecution":
        return [{ type: "EXECUTE" }];
      case "executing":
        return [
          { type: "done.executeToolCall", output: { executed: true, result: ok, isError: false, durationMs: 1 } },
          { type: "done.executeToolCall", output: { executed: true, result: errorResult("tool threw"), isError: true, durationMs: 1 } },
          ...(abortRealizable(variant) ? [{ type: "done.executeToolCall" as const, output: { executed: false, result: abortedResult(), isError: true } }] : []),
          { type: "failed", job: "executeToolCall", error: new Error("execute job failed") },
        ];
      case "finalizing":
        return [
          { type: "done.finalizeToolCall", output: undefined },
          { type: "failed", job: "finalizeToolCall", error: new Error("afterToolCall threw") },
        ];
      default:
        return [];
    }
  };
}

export function toolPaths(variant: ToolVariant): ToolPath[] {
  const input: ToolCallInput = {
    index: 0,
    toolCall: { type: "toolCall", id: "c0", name: variant.immediate ? "missing" : "ok", arguments: {} },
    mode: variant.mode,
    hooks: { beforeToolCall: variant.beforeToolCall, afterToolCall: variant.afterToolCall },
    effects: createActor(fromCallback(() => {})),
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
  gate: "allow" | "block" | "throw" | null;
  execute: "ok" | "throw" | "abort" | "fault" | null;
  finalize: "none" | "throw" | null;
}

export function toolPlanOf(path: ToolPath): ToolPlan {
  const plan: ToolPlan = { gate: null, execute: null, finalize: null };
  for (let i = 1; i < path.steps.length; i++) {
    const state = statePath(path.steps[i - 1].state.value);
    const event = path.steps[i].event as ToolCallEvent & { output?: any };
    const isFailed = event.type === "failed";
    if (state === "gating") plan.gate = isFailed ? "throw" : event.output.allowed ? "allow" : "block";
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
  const name = variant.immediate ? "missing" : plan.execute === "throw" ? "throws" : plan.execute === "fault" ? FAULTY_TOOLS.execFault : "ok";
  // R29: the abort arrives before call 0 executes: at a helper call's preflight in a parallel batch,
  // at call 0's own tool_execution_start otherwise.
  const abort = plan.execute === "abort";
  const helper = abort && variant.mode === "parallel";
  const abortAt = helper ? "call_1" : "call_0";
  const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: (m) => m as never, toolExecution: variant.mode };
  if (variant.beforeToolCall) {
    config.beforeToolCall = async ({ toolCall: call }) => {
      if (call.id !== "call_0") return undefined;
      if (plan.gate === "throw") throw new Error("beforeToolCall threw (scripted)");
      return plan.gate === "block" ? { block: true, reason: "blocked (scripted)" } : undefined;
    };
  }
  if (variant.afterToolCall) {
    config.afterToolCall = async ({ toolCall: call }) => {
      if (call.id === "call_0" && plan.finalize === "throw") throw new Error("afterToolCall threw (scripted)");
      return undefined;
    };
  }
  const calls = [toolCall(name, {}, "call_0"), ...(helper ? [toolCall("ok", {}, "call_1")] : [])];
  const responses: ScriptedResponse[] = [{ content: [text("calling"), ...calls] }, { content: [text("done")] }];
  return {
    prompts: [user("hi")],
    context: {
      messages: [],
      tools: [
        mkTool("ok", async () => ok),
        mkTool("throws", async () => {
          throw new Error("tool threw (scripted)");
        }),
        mkTool(FAULTY_TOOLS.execFault, async () => ok),
      ],
    },
    config,
    streamFn: scriptedStreamFn(responses),
    signal: controller.signal,
    onEvent: (event: AgentEvent) => {
      if (abort && event.type === "tool_execution_start" && event.toolCallId === abortAt) controller.abort();
    },
    faulty: plan.execute === "fault",
  };
}

export function describeToolPath(path: ToolPath): string {
  return path.steps.map((step) => `${step.event.type}→${statePath(step.state.value)}`).join(" ");
}
