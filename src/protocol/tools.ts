/**
 * The tool contract (SPEC R20–R27, R65, R70, R73, R82): what an `AgentTool` declares and returns,
 * and what its `execute` is given besides its arguments.
 */
import type { z } from "zod";
import type { AgentMessage, ImageContent, JsonValue, TextContent, ToolCall, Usage } from "./messages.js";
import type { AgentEvent } from "./events.js";

export type ToolExecutionMode = "sequential" | "parallel";
export type QueueMode = "all" | "one-at-a-time";

export interface AgentToolResult<TDetails = unknown> {
  /** What the model sees. */
  content: (TextContent | ImageContent)[];
  /** Structured details for logs and UIs; never sent to the model. */
  details: TDetails;
  /** Machine-readable result matching the tool's `outputSchema`; not sent to the model. */
  structuredContent?: JsonValue;
  usage?: Usage;
  /** Report a failure without throwing. */
  isError?: boolean;
  /** Stop after this batch, if every result of the batch says so (R27). */
  terminate?: boolean;
}

export type AgentToolUpdateCallback<TDetails = unknown> = (partialResult: AgentToolResult<TDetails>) => void;

/**
 * A JSON Schema object (any object type, as pi's `AgentTool`: a TypeBox or pi-schema schema is
 * one) or a zod schema (converted with zod's JSON Schema export, validated with zod).
 */
export type ToolParameters = object | z.ZodType;

export interface AgentTool<TParams = any, TDetails = any> extends ConcurrencySafeTool<TParams> {
  name: string;
  description: string;
  parameters: ToolParameters;
  /** Human-readable label for UIs. */
  label: string;
  /** Compatibility shim run on the raw arguments before validation. May throw (→ error result). */
  prepareArguments?: (args: unknown) => TParams;
  /** JSON Schema of `structuredContent`. */
  outputSchema?: object;
  /**
   * Runs the call. Throw on failure, or return `isError: true`. Honour `signal`. The fifth
   * argument (not in pi) says whether this is a re-run after a restore and runs sub-agents as
   * children of the call's actor (SPEC R13, R14).
   */
  execute: (
    toolCallId: string,
    params: TParams,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
    context?: ToolExecutionContext,
  ) => Promise<AgentToolResult<TDetails>>;
  /** `"sequential"` makes the whole batch that contains a call to this tool sequential (R20). */
  executionMode?: ToolExecutionMode;
  /**
   * SPEC R13: may an execution that was in flight when a run was persisted run again after a
   * restore? `"safe"` (idempotent tools: reads, lookups) re-runs it, and `execute` is told so
   * (`context.replayed`); `"never"` (the default) gives the call the error result "Tool NAME was
   * interrupted before it finished; its outcome is unknown, so it was not run again."
   */
  replay?: "never" | "safe";
  /**
   * SPEC R65: the longest this tool's `execute` may take, in ms (overrides the loop's
   * `toolTimeoutMs`). At the timeout the call settles at once with the error result `Tool NAME
   * timed out after N ms` (no `afterToolCall`), its signal aborts, and its late outcome is dropped.
   */
  timeoutMs?: number;
  /**
   * SPEC R73: when this tool's own `execute` fails (throws or returns `isError`; not a validation
   * failure or a block), the batch's other running calls are aborted and its calls not yet started
   * are not run; each of them gets `Cancelled: sibling tool call NAME failed`. The turn goes on.
   */
  cancelSiblingsOnError?: boolean;
  /**
   * SPEC R82: the call waits for `approve`/`reject` after `beforeToolCall`, before it executes.
   * `true`: every call; a predicate decides per call from the validated arguments (it runs in the
   * preflight step, never in a transition; it must return a boolean; a throw or another value is
   * the call's error result). A session's "always allow" rules (`ApprovalRule`) skip the wait.
   */
  needsApproval?: boolean | ((args: TParams, context: { toolCall: ToolCall }) => boolean | Promise<boolean>);
}

export interface AgentContext {
  messages: AgentMessage[];
  tools?: AgentTool[];
}

export interface AgentToolCallOutcome {
  toolCall: ToolCall;
  result: AgentToolResult;
  isError: boolean;
  /** Absent when the tool did not run. */
  durationMs?: number;
}

/** What a tool declares for R70. */
export interface ConcurrencySafeTool<TParams = any> {
  /**
   * SPEC R70: may this call run alongside others? Called in an actor on the validated arguments;
   * absent = not safe; a throw = not safe; a tool with `executionMode: "sequential"` is never safe.
   */
  isConcurrencySafe?: (args: TParams) => boolean;
}

export interface SubRunRequest {
  prompts?: AgentMessage[];
  messages?: AgentMessage[];
  /**
   * Each event of the sub-run, in order (a sync observer; the sub-run does not wait for it). It
   * should not throw: a throw aborts the sub-run, the listener gets no later event, and
   * `runSubAgent` rejects with the thrown error once the sub-run ended.
   */
  onEvent?: (event: AgentEvent) => void;
}

/**
 * What a tool's `execute` gets as its fifth argument (SPEC R13, R14): whether this execution is a
 * re-run after a restore, and a way to run a nested run (a sub-agent) as a child of the call's own
 * actor, in the same actor system, so the inspector and the trace show it under the call.
 */
export interface ToolExecutionContext {
  /** `true` when this execution is a re-run after a restore (only for `replay: "safe"` tools, R13). */
  replayed: boolean;
  /**
   * Runs a sub-agent as a child of this call's actor; resolves with the messages it added (R14).
   * What they used is added to the call's result `usage` (R63: the parent's budget counts it), so
   * the tool's own `usage` should not repeat it. Sub-agents nest at most 8 deep: deeper, it
   * rejects at once (a tool that delegates to an agent holding the same tool would otherwise
   * recurse for as long as the model keeps calling it).
   */
  runSubAgent(options: SubAgentOptions, request: SubRunRequest): Promise<AgentMessage[]>;
}

/**
 * A sub-agent's options: `AgentRunOptions` (`createAgentRunLogic`'s). A tool may run an agent whose
 * config holds tools, so the two contracts refer to each other; `./config.ts` completes this
 * interface (declaration merging) so that the modules import one way: config → tools.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface SubAgentOptions {}
