/**
 * Typed tool hooks: `beforeToolCall` and `afterToolCall` whose `args` are the validated arguments
 * of the tool the call is for, told apart by `toolName`, for a list of tools made with
 * `defineTool` (issue 34). The hooks of `AgentLoopConfig` see `args: unknown`, because a run may
 * call any tool; these see only calls of the listed tools, so their types hold.
 */
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentLoopConfig,
  AgentTool,
  BeforeToolCallContext,
  BeforeToolCallResult,
} from "../types.js";

/** What a tool's `execute` gets as its fifth argument (SPEC R13, R14). */
export type ToolExecutionContext = NonNullable<Parameters<AgentTool["execute"]>[4]>;

/** A tool's validated argument type (`unknown` for an untyped `AgentTool`). */
export type ToolArgs<T> = T extends AgentTool<infer P, any> ? (0 extends 1 & P ? unknown : P) : never;

/** `beforeToolCall`'s context for a call of one of `T`'s tools: `toolName` says which, `args` are its validated arguments. */
export type TypedBeforeToolCallContext<T extends AgentTool> = T extends AgentTool
  ? Omit<BeforeToolCallContext, "args"> & { toolName: T["name"]; args: ToolArgs<T> }
  : never;

/** `afterToolCall`'s context for a call of one of `T`'s tools: `toolName` says which, `args` are its validated arguments. */
export type TypedAfterToolCallContext<T extends AgentTool> = T extends AgentTool
  ? Omit<AfterToolCallContext, "args"> & { toolName: T["name"]; args: ToolArgs<T> }
  : never;

/** The typed hooks, with `AgentLoopConfig`'s contracts: each may throw (that call's error result, R21, R23). */
export interface TypedToolCallHooks<T extends AgentTool> {
  beforeToolCall?: (context: TypedBeforeToolCallContext<T>, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: TypedAfterToolCallContext<T>, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
}

/** Hooks to spread into an `AgentLoopConfig` or `new Agent({...})`. */
export type ToolCallHooks = Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall">;

/**
 * `beforeToolCall`/`afterToolCall` typed by `tools`: each hook is called only for calls of a
 * listed tool (any other call runs as if the hook were absent), with `toolName` and that tool's
 * validated `args`, so `if (toolName === "write_file") args.path` needs no cast.
 */
export function toolCallHooks<const T extends readonly AgentTool[]>(tools: T, hooks: TypedToolCallHooks<T[number]>): ToolCallHooks {
  const names = new Set(tools.map((tool) => tool.name));
  const result: ToolCallHooks = {};
  const { beforeToolCall, afterToolCall } = hooks;
  if (beforeToolCall) {
    result.beforeToolCall = async (context, signal) =>
      names.has(context.toolCall.name)
        ? beforeToolCall({ ...context, toolName: context.toolCall.name } as TypedBeforeToolCallContext<T[number]>, signal)
        : undefined;
  }
  if (afterToolCall) {
    result.afterToolCall = async (context, signal) =>
      names.has(context.toolCall.name)
        ? afterToolCall({ ...context, toolName: context.toolCall.name } as TypedAfterToolCallContext<T[number]>, signal)
        : undefined;
  }
  return result;
}
