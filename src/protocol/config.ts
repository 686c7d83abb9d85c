/**
 * Hooks and configuration (SPEC "Hooks"): `AgentLoopConfig` with every hook's contract (what it may
 * return, whether it may throw), the loop settings (recovery R60–R62, budgets R63, streaming tools
 * R70, approvals R82) and what `createAgentRunLogic` is made of.
 */
import type { AgentMessage, AssistantMessage, ImageContent, JsonValue, Message, Model, TextContent, ThinkingLevel, ToolCall, ToolResultMessage, Usage, LoopStreamOptions, StreamFn } from "./messages.js";
import type { AgentRuntimeEvent } from "./events.js";
import type { AgentContext, AgentTool, AgentToolResult, ToolExecutionMode, ToolParameters } from "./tools.js";
import type { Clock, JobExecutor, RandomSource, RequestLimiter } from "./execution.js";

export interface BeforeToolCallContext extends StreamingToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  /** The validated arguments. */
  args: unknown;
  context: AgentContext;
}

/**
 * `block: true` turns the call into an error result with `reason` (R21). SPEC R82: `approval`
 * makes the call wait for `approve`/`reject` (`reason` is shown to whoever decides); `block` wins.
 */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  terminate?: boolean;
  approval?: { reason?: string };
}

export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  args: unknown;
  /** The executed result before overrides. */
  result: AgentToolResult;
  isError: boolean;
  context: AgentContext;
}

/**
 * Field-by-field overrides (R23): each given field replaces the executed value; no deep merge.
 * `content` without `structuredContent` drops the old `structuredContent`.
 */
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: JsonValue;
  isError?: boolean;
  usage?: Usage;
  terminate?: boolean;
}

export interface AgentTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  context: AgentContext;
  /** What the run would return if it ended now. */
  newMessages: AgentMessage[];
}

export type PrepareNextTurnContext = AgentTurnContext;

export type AgentTurnDecision = { action: "continue" } | { action: "end" };

export interface AgentLoopTurnUpdate {
  context?: AgentContext;
  /** Appended before the next request, with message events. */
  messages?: AgentMessage[];
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}

export interface PrepareRequestContext {
  context: AgentContext;
  model: Model;
  thinkingLevel: ThinkingLevel;
}

export type AgentRequestUpdate = Omit<AgentLoopTurnUpdate, "messages">;

type MaybePromise<T> = T | Promise<T>;

/**
 * Configuration of one run: the model, the hooks, and the stream options of `LoopStreamOptions`
 * (pi-ai's `SimpleStreamOptions`, passed to the stream function untouched). Closed: a misspelt key
 * (`beforeToolcall`) does not compile; providers declare extra options in `CustomStreamOptions`.
 *
 * Hook contract, for every hook below unless it says otherwise: it must not throw or reject.
 * One that does anyway ends the run cleanly (R56): an assistant failure message carrying the
 * thrown message as `errorMessage`, then `turn_end` and `agent_end`; the run resolves, never
 * rejects. The tool hooks are the exception: a throwing `beforeToolCall`/`afterToolCall` turns
 * that one call into an error tool result and the run goes on (R21, R23). Hooks that receive a
 * `signal` get the run's abort signal and should honour it.
 */
export interface AgentLoopConfig extends LoopStreamOptions, StreamingToolSettings {
  model: Model;
  /** Thinking level requested; absent means off. */
  reasoning?: ThinkingLevel;
  /** Fallback when `getApiKey` is absent or returns nothing. Never stored in machine context. */
  apiKey?: string;
  /**
   * AgentMessage[] → provider messages, at the request boundary (every request). Required. Drop
   * what a provider cannot take (UI-only messages); `defaultConvertToLlm` keeps the four provider
   * roles, and `(messages) => messages` type-checks when the app defines no custom messages.
   */
  convertToLlm: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  /**
   * Runs before `convertToLlm` on every request (pruning, context injection). Returns the messages
   * to convert; the run's context itself is unchanged.
   */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** Resolves a key per request (short-lived tokens); `undefined` falls back to `apiKey`. */
  getApiKey?: (provider: string) => MaybePromise<string | undefined>;
  /**
   * Polled at run start, after each turn, and after `prepareNextTurn` when nothing is pending
   * (R3, R4, R9). Returns the messages to inject before the next request; `[]` when none.
   */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** Polled when the run would otherwise end (R10). Messages returned start another turn; `[]` when none. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  /**
   * Called before every turn but the first, with the turn that just ended (R4a). May return
   * replacement `context`, `model`, `thinkingLevel`, and `messages` to append before the next
   * request; `undefined` keeps everything.
   */
  prepareNextTurn?: (context: PrepareNextTurnContext, signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  /**
   * Called before every request, the first included, with pending messages already appended (R4c).
   * The returned `context`, `model`, `thinkingLevel` replace the run's for this and later requests;
   * `undefined` keeps them. Does not poll queues. (A method, so pi's hook type-checks: it types
   * `request.model` as pi-ai's `Model`, whose `baseUrl` is required; it gets the run's model as
   * the app gave it.)
   */
  prepareRequest?(request: PrepareRequestContext, signal?: AbortSignal): MaybePromise<AgentRequestUpdate | undefined | void>;
  /**
   * Called after a turn's messages, before `turn_end` (R8). `{action: "end"}` ends the run with no
   * queue poll and no further request; `{action: "continue"}` ensures one more request if nothing
   * else causes one (R10, R11); `undefined` keeps normal scheduling. After an error or aborted
   * response it is called too, and its decision is ignored (R6).
   */
  finishTurn?: (turn: AgentTurnContext, signal?: AbortSignal) => MaybePromise<AgentTurnDecision | undefined | void>;
  /**
   * Called for each tool call after its arguments validated, before it executes (R21). Return
   * `{block: true, reason?}` to skip execution: the call gets an error result with `reason` (or
   * `Tool execution was blocked`), and `terminate` joins the batch's early-termination rule (R27);
   * `undefined` lets it run. May throw: the call gets an error result with the thrown message and
   * the run continues.
   */
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  /**
   * Called after a tool executed, before its `tool_execution_end` (R23); never for calls that did
   * not run (errors before execution, blocks). Return field-by-field overrides of the result (see
   * `AfterToolCallResult`) or `undefined` to keep it. May throw: the call gets an error result with
   * the thrown message and the run continues.
   */
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  /** Default `"parallel"` (R20). */
  toolExecution?: ToolExecutionMode;
  /**
   * SPEC R63: limits checked after each `turn_end`, before the next turn's `prepareNextTurn` or
   * `turn_start`. A run that reached one ends with `agent_end{reason: "max_turns" | "max_tokens" |
   * "max_cost"}`; queued messages stay queued. A loop setting: never passed to the stream function.
   */
  budget?: RunBudget;
  /** SPEC R65: every call's timeout in ms unless its tool sets `timeoutMs`. A loop setting, never passed to the stream function. */
  toolTimeoutMs?: number;
  /**
   * SPEC R60: retry transient failures (overloaded, rate limited, 5xx, connection reset, stall)
   * that happen before the response's first content, with exponential backoff and full jitter.
   * Off when absent. With retries on, the stream function is given `maxRetries: 0` so every
   * attempt is the loop's and visible (`retry_scheduled`).
   */
  retry?: RetrySettings;
  /** SPEC R61: recover from answers cut off by the output limit (`stopReason: "length"`). Off when absent. */
  outputLimit?: OutputLimitSettings;
  /** SPEC R62: compact the transcript when the prompt overflows the context window. Off when absent. */
  compact?: CompactSettings;
  /**
   * SPEC R67: after an abort, how long (ms) tools and hooks that ignore their signal may keep the
   * run waiting. When it runs out they are abandoned: a call gets `Operation aborted (the tool did
   * not stop within N ms)`, an abandoned hook or stream function ends the run as aborted. Their
   * late results are dropped (the abandoned code may still be running). Absent: wait for them.
   */
  abortGraceMs?: number;
  /**
   * SPEC R66: receives the loop's additive events (`AgentRuntimeEvent`) in order with the run's
   * `AgentEvent`s, awaited like the event sink. pi's sinks never see them.
   */
  onRuntimeEvent?: (event: AgentRuntimeEvent) => void | Promise<void>;
  /**
   * Shared by the runs of one process (`createRequestLimiter`): each request waits for a slot in
   * the `awaitingRequestSlot` state and holds it until its response ended. A loop setting.
   */
  requestLimiter?: RequestLimiter;
  /**
   * SPEC R100: the run's structured final answer. The model is given a final-answer tool whose
   * parameters are `schema`; the run ends when it calls it with arguments that validate, and the
   * value is `agent_end.output`. A loop setting: never passed to the stream function.
   */
  output?: OutputSettings;
}

/**
 * SPEC R100: a run's structured final answer. The model answers by calling the final-answer tool
 * (`toolName`, declared like any tool, R30), which works with every provider: its arguments are the
 * answer, validated as tool arguments are (R21). An invalid answer, or a response that ends without
 * calling the tool, goes back to the model (the validation error as the call's result; a reminder
 * message when it did not call) and counts as one attempt; after `maxAttempts` the run ends with
 * `agent_end.reason: "output_invalid"`.
 */
export interface OutputSettings<S extends ToolParameters = ToolParameters> {
  /** The answer's shape: a zod schema or a JSON Schema, whose root is an object (a tool's arguments are one). */
  schema: S;
  /** Invalid answers (or turns without one) before the run ends with `output_invalid`. Default 3. */
  maxAttempts?: number;
  /** The final-answer tool's name. Default `final_answer`. */
  toolName?: string;
  /** The final-answer tool's description (what the model is told it is for). */
  description?: string;
}

/** Loop settings of R70 (never passed to the stream function). */
export interface StreamingToolSettings {
  /**
   * SPEC R70: start each tool call as soon as its `toolcall_end` arrives, while the response
   * still streams (concurrency-safe calls in parallel, in source order; an unsafe call alone).
   * Off (default): pi's events exactly.
   */
  streamingToolExecution?: boolean;
  /** SPEC R70: at most this many calls run at once in streaming mode (default 10). */
  maxConcurrentTools?: number;
}

/** What `beforeToolCall` learns in streaming mode (R70). */
export interface StreamingToolCallContext {
  /**
   * Streaming mode only (absent otherwise): `true` when the call starts while the response still
   * streams; `assistantMessage` is then a copy of the partial message (its `stopReason` is not yet known).
   */
  streaming?: boolean;
}

export interface RetrySettings {
  /** Attempts per request, the first included. Default 5. */
  maxAttempts?: number;
  /** The first backoff's ceiling, in ms; it doubles per attempt (full jitter: a uniform draw below it). Default 500. */
  baseDelayMs?: number;
  /** The ceiling of any backoff, in ms (a longer `retry-after` is still honoured). Default 32 000. */
  maxDelayMs?: number;
  /** After `overloadsBeforeFallback` consecutive overloads, the request's next attempts use this model (Claude Code does this). */
  fallbackModel?: Model;
  /** Default 3. */
  overloadsBeforeFallback?: number;
}

export interface OutputLimitSettings {
  /**
   * The output limit of the one escalated attempt. Default: the model's `maxTokens`. No escalation
   * when the request already asked for it (its `maxTokens` stream option, or the model's maximum).
   */
  escalatedMaxTokens?: number;
  /** Consecutive recovery messages before the run ends with `max_output_tokens`. Default 3. */
  maxRecoveries?: number;
  /** The recovery message's text. */
  recoveryPrompt?: string;
}

/** What a compactor is given (SPEC R62). */
export interface CompactRequest {
  /** The run's transcript (`context.messages`). */
  messages: AgentMessage[];
  model: Model;
  /** `"overflow"`: the last request did not fit; `"threshold"`: proactive, at a turn boundary. */
  reason: "overflow" | "threshold";
  /** The transcript's estimated size in tokens (last usage plus characters since / 4). */
  estimatedTokens: number;
  /**
   * One model request with the run's stream function, model, key and stream options (no tools,
   * no events, not part of the transcript): what a summarizing compactor calls.
   */
  complete(messages: Message[], options?: { maxTokens?: number }): Promise<AssistantMessage>;
}

/**
 * Returns the replacement transcript. It must keep every tool result next to its call and must not
 * be empty: the loop refuses either with a `CompactionError` of kind `invalid_result` (the run then
 * ends `error`, R56). Returning the transcript itself, or messages equal to it one by one, means
 * "nothing to compact": the overflow surfaces (`prompt_too_long`).
 */
export type Compactor = (request: CompactRequest, signal: AbortSignal) => Promise<AgentMessage[]>;

export interface CompactSettings {
  compactor: Compactor;
  /**
   * Proactive compaction: at a turn boundary, compact when the estimated transcript exceeds this
   * many tokens (spends model calls; off when absent).
   */
  thresholdTokens?: number;
}

/** SPEC R63: a run's limits; each is reached when the run's total is at least the limit. */
export interface RunBudget {
  /** Completed turns. */
  maxTurns?: number;
  /**
   * The run's input + output tokens: every model response it received, also those it withheld or
   * discarded (R60–R62) and those of a compaction's `complete` calls, and tool results' `usage`.
   */
  maxTotalTokens?: number;
  /** The run's `cost.total`, in USD, of the same responses. */
  maxCostUsd?: number;
}

/**
 * "Always allow" for the rest of the session (plain data, kept in the session's snapshot): later
 * calls of `toolName` (with `path`: only those whose validated `path` argument is that path, or
 * lies under it when it ends with `/`) skip the approval wait.
 */
export interface ApprovalRule {
  toolName: string;
  path?: string;
}

/** `approve(approvalId, options)`. */
export interface ApproveOptions {
  /** Replacement arguments: validated again (an invalid replacement is the call's validation error result). */
  args?: unknown;
  /** Also allow this tool (or only this path of it) for the rest of the session. */
  always?: true | { path: string };
}

/** What a run is made of: the arguments of `createAgentRunLogic` (SPEC R14). */
export interface AgentRunOptions {
  streamFn: StreamFn;
  /** The executable tools; on restore (R13), every tool the snapshot names (hooks' included) must be here. */
  tools?: readonly AgentTool[];
  config: AgentLoopConfig;
  /** The run's clock (R13); default: `Date.now` and `performance.now`. */
  clock?: Clock;
  /** The run's random source (R13); default: `Math.random`. */
  random?: RandomSource;
  /** Where the run's jobs execute (R90: as journaled steps of a durable-execution engine); default: in the worker. */
  executor?: JobExecutor;
}

declare module "./tools.js" {
  /** A tool's sub-agent runs with the options of any embedded run. */
  interface SubAgentOptions extends AgentRunOptions {}
}
