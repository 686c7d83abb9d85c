/**
 * The tool-call machine's test model: input variants (batch mode and which tool hooks are
 * configured: the machine itself sees only `afterToolCall`, the rest decides how the run gets the
 * call there), the synthetic events of each state (the step worker's `step.<job>.done`/`step.failed`
 * replies), every simple path to `settled`, and the run that makes the real child actor `tool:0`
 * follow it. (`step.reissue` is taken by the directed runs of directed-runs.ts.)
 */
import { type SnapshotFrom } from "xstate";
import { getSimplePaths, type StatePath } from "xstate/graph";
import type { AgentLoopConfig, AgentMessage, AgentTool, ScriptedResponse } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { toolCallMachine, type ToolCallEvent, type ToolCallInput } from "../../machines/tool-call.machine.js";
import type { StepJobs, StepName } from "../../machines/steps.js";
import { abortedResult, errorResult } from "../../src/loop/tool-results.js";
import { FAULTY_TOOLS, statePath, type LoopArgs } from "./harness.js";

export interface ToolVariant {
  mode: "sequential" | "parallel";
  beforeToolCall: boolean;
  afterToolCall: boolean;
}

export const toolVariants: ToolVariant[] = (["sequential", "parallel"] as const).flatMap((mode) =>
  [false, true].flatMap((beforeToolCall) => [false, true].map((afterToolCall) => ({ mode, beforeToolCall, afterToolCall }))),
);

export const describeVariant = (v: ToolVariant) => `${v.mode}${v.beforeToolCall ? ", beforeToolCall" : ""}${v.afterToolCall ? ", afterToolCall" : ""}`;

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
const abortRealizable = (v: ToolVariant) => v.mode === "parallel" || !v.beforeToolCall;

function toolEvents(variant: ToolVariant) {
  return (snapshot: ToolSnapshot): ToolCallEvent[] => {
    switch (statePath(snapshot.value)) {
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
}

export function toolPlanOf(path: ToolPath): ToolPlan {
  const plan: ToolPlan = { execute: "ok", finalize: null };
  for (let i = 1; i < path.steps.length; i++) {
    const state = statePath(path.steps[i - 1].state.value);
    const event = path.steps[i].event as ToolCallEvent & { output?: any };
    const isFailed = event.type === "step.failed";
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
  // call's prepareArguments in a parallel batch, in call 0's own prepareArguments otherwise.
  const abort = plan.execute === "abort";
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
  const calls = [toolCall(name, {}, "call_0"), ...(helper ? [toolCall("abortsInPreparation", {}, "call_1")] : [])];
  const responses: ScriptedResponse[] = [{ content: [text("calling"), ...calls] }, { content: [text("done")] }];
  const faulty = plan.execute === "fault";
  return {
    prompts: [user("hi")],
    context: {
      messages: [],
      tools: [
        mkTool("ok", async () => ok),
        mkTool("throws", async () => {
          throw new Error("tool threw (scripted)");
        }),
        abortsInPreparation,
        mkTool(FAULTY_TOOLS.execFault, async () => ok),
      ],
    },
    config,
    streamFn: scriptedStreamFn(responses),
    signal: controller.signal,
    faulty,
  };
}

export function describeToolPath(path: ToolPath): string {
  return path.steps.map((step) => `${step.event.type}→${statePath(step.state.value)}`).join(" ");
}
