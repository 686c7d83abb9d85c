/**
 * The data model of the agent loop (SPEC "Data model"). Field names are part of the contract:
 * they are structurally compatible with pi-agent-core 1.6, so apps written against pi's events
 * work unchanged. Everything here is plain, JSON-serializable data except `AgentTool` and the hooks
 * of `AgentLoopConfig`, which never enter machine context.
 */
import type { z } from "zod";
import type { ClientIdentity } from "./identity/index.js";

export type { ClientIdentity, ClientAttribution, UserAgentMode } from "./identity/index.js";

// ---------------------------------------------------------------------------------------------
// Content and messages
// ---------------------------------------------------------------------------------------------

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Provider signature to echo back; for a redacted block, the provider's opaque payload. */
  thinkingSignature?: string;
  redacted?: boolean;
}

export interface ImageContent {
  type: "image";
  /** Base64 data. */
  data: string;
  mimeType: string;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's argument text was not a JSON object; `arguments` is then `{}` (R21). */
  argumentsError?: string;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** What the model sees of a tool. */
export interface ToolDecl {
  name: string;
  description: string;
  /** A JSON Schema object. */
  parameters: Record<string, unknown>;
}

export interface ToolReference {
  name: string;
}

/**
 * System instructions and tool declarations at one point of the transcript. Replaying every system
 * message in order yields the current prompt and the declared tool set (R30).
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  /** Named prompt sections; later messages replace a section by name, `null` removes it. */
  sections?: Record<string, string | null>;
  toolsAdded?: ToolDecl[];
  toolsRemoved?: ToolReference[];
  timestamp: number;
}

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
  /**
   * Not in pi. SPEC R61: set on a message the loop added itself (`"output_limit"`: it asks the
   * model to resume a truncated answer), so an app can render it as the loop's, not the user's.
   */
  recovery?: "output_limit";
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  /**
   * Not in pi. SPEC R60: how a failed response (`stopReason: "error"`) may be retried, as the
   * stream function classified it (the Anthropic provider fills it from the HTTP status, the SSE
   * error type and `retry-after`). Absent: the loop classifies the failure from `errorMessage`.
   */
  retry?: RetryClassification;
  /** Not in pi. SPEC R62: the request's prompt did not fit the model's context window. */
  contextOverflow?: boolean;
  timestamp: number;
  durationMs?: number;
  /** The thinking level the loop requested for this response (R42). */
  thinkingLevel?: ThinkingLevel;
}

export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  usage?: Usage;
  isError: boolean;
  timestamp: number;
  /** Milliseconds `execute()` took on a monotonic clock; absent when the tool did not run. */
  durationMs?: number;
}

/** A message a provider understands. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/**
 * App-defined messages. Extend by declaration merging:
 *
 * ```ts
 * declare module "xstate-agent-loop" {
 *   interface CustomAgentMessages { note: { role: "note"; text: string; timestamp: number } }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface CustomAgentMessages {}

/** Every message the loop carries. Only the request boundary converts these to `Message`s. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

// ---------------------------------------------------------------------------------------------
// Models and the stream function (the provider seam)
// ---------------------------------------------------------------------------------------------

export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** Dollars per million tokens, for every token kind of a request. */
export interface ModelCostRates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Rates that apply to the whole request when its prompt (input + cache read + cache write tokens) exceeds `inputTokensAbove`. */
export interface ModelCostTier extends ModelCostRates {
  inputTokensAbove: number;
}

export interface ModelCost extends ModelCostRates {
  /** Long-context pricing; the tier with the highest threshold the prompt exceeds wins. */
  tiers?: ModelCostTier[];
}

export interface Model {
  id: string;
  name: string;
  api: string;
  provider: string;
  baseUrl?: string;
  reasoning: boolean;
  input: ("text" | "image")[];
  /** Prices in dollars per million tokens; `tiers` replace them for long prompts. */
  cost: ModelCost;
  contextWindow: number;
  maxTokens: number;
}

export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: "stop" | "length" | "toolUse"; message: AssistantMessage }
  | { type: "error"; reason: "error" | "aborted"; error: AssistantMessage };

/** An async iterable of provider events whose `result()` resolves to the final message. */
export interface AssistantMessageEventStream extends AsyncIterable<AssistantMessageEvent> {
  result(): Promise<AssistantMessage>;
}

/** The normalized request context: prompt and tool declarations travel as system messages (R30). */
export interface TranscriptContext {
  messages: Message[];
}

/**
 * Provider-specific stream options, added by declaration merging (as `CustomAgentMessages`):
 *
 * ```ts
 * declare module "xstate-agent-loop" {
 *   interface CustomStreamOptions { topK?: number }
 * }
 * ```
 *
 * Every field declared here is accepted by `AgentLoopConfig` and passed to the stream function.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface CustomStreamOptions {}

/** Prompt cache retention preference; providers map it to what they support. */
export type CacheRetention = "none" | "short" | "long";

/** Token budgets per thinking level (token-based providers). */
export interface ThinkingBudgets {
  minimal?: number;
  low?: number;
  medium?: number;
  high?: number;
}

/**
 * The stream options of pi-ai 1.6's `SimpleStreamOptions`, so config written for pi compiles. The
 * loop passes each one set in `AgentLoopConfig` to the stream function untouched; what it means is
 * up to the stream function (the Anthropic provider reads `maxTokens`, `reasoning`, `identity` and
 * `headers`; see `anthropicStreamFn`). Providers add theirs through `CustomStreamOptions`.
 */
export interface LoopStreamOptions extends CustomStreamOptions {
  /** Ignored in a config: the stream function always gets the run's signal (the `signal` argument). */
  signal?: AbortSignal;
  apiKey?: string;
  /** Thinking level requested; absent means off. */
  reasoning?: ThinkingLevel;
  temperature?: number;
  /** Extra sampling parameters merged into the request body (OpenAI-compatible providers). */
  samplingParams?: Record<string, unknown>;
  maxTokens?: number;
  /** Session identifier for cache-aware providers. */
  sessionId?: string;
  /** Default `"short"`. */
  cacheRetention?: CacheRetention;
  /** Do not use or record server-side continuation state for this request. */
  disableContinuation?: boolean;
  /** Extra HTTP headers; they override provider defaults, and `null` removes a default header. */
  headers?: Record<string, string | null>;
  /** How the request identifies the app, merged field by field over `DEFAULT_AGENT_IDENTITY` on every request. */
  identity?: ClientIdentity;
  /** Request metadata; providers take the fields they know (Anthropic: `user_id`). */
  metadata?: Record<string, unknown>;
  transport?: "sse" | "websocket" | "websocket-cached" | "auto";
  thinkingBudgets?: ThinkingBudgets;
  toolChoice?: "auto" | "none";
  /** Ask a capable provider for a durable handle and continue the request asynchronously. */
  deferred?: boolean | { window?: "15m" | "1h" | "24h" };
  timeoutMs?: number;
  maxRetries?: number;
  /** Longest server-requested retry delay to wait for; 0 disables the cap. */
  maxRetryDelayMs?: number;
  websocketConnectTimeoutMs?: number;
  /** A fetch implementation for provider HTTP requests. */
  fetch?: typeof globalThis.fetch;
  /** Provider-scoped environment values, over `process.env`. */
  env?: Record<string, string>;
  /** Inspect or replace the provider payload before it is sent; return undefined to keep it. */
  onPayload?: (payload: unknown, model: Model) => unknown;
  onResponse?: (response: { status: number; headers: Record<string, string> }, model: Model) => void | Promise<void>;
  onProviderStreamEvent?: (data: unknown, model: Model) => void | Promise<void>;
  /** A telemetry span (pi-telemetry's `TelemetrySpan`) for providers that report one. */
  telemetry?: unknown;
}

/**
 * What the stream function receives: the config's stream options plus the run's `signal`, the
 * resolved `apiKey` and the turn's `reasoning`. Open, so a stream function can read options another
 * layer added.
 */
export interface StreamOptions extends LoopStreamOptions {
  [option: string]: unknown;
}

/**
 * The provider seam. **Contract: never throws or rejects** for provider, network or model
 * failures; they are encoded as a final message with `stopReason: "error" | "aborted"` and
 * `errorMessage`. (A stream function that throws anyway ends the run cleanly, R56.)
 */
export type StreamFn = (
  model: Model,
  context: TranscriptContext,
  options: StreamOptions,
) => AssistantMessageEventStream | Promise<AssistantMessageEventStream>;

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

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

/** A JSON Schema object or a zod schema (converted with zod's JSON Schema export, validated with zod). */
export type ToolParameters = Record<string, unknown> | z.ZodType;

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
    context?: import("./actors/sub-runs.js").ToolExecutionContext,
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

// ---------------------------------------------------------------------------------------------
// Hooks
// ---------------------------------------------------------------------------------------------

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
   * `undefined` keeps them. Does not poll queues.
   */
  prepareRequest?: (request: PrepareRequestContext, signal?: AbortSignal) => MaybePromise<AgentRequestUpdate | undefined | void>;
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
  requestLimiter?: import("./loop/request-limiter.js").RequestLimiter;
}

// ---------------------------------------------------------------------------------------------
// Tools that start while the model streams (SPEC R70–R73; opt-in: `streamingToolExecution`)
// ---------------------------------------------------------------------------------------------

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

/** What a tool declares for R70. */
export interface ConcurrencySafeTool<TParams = any> {
  /**
   * SPEC R70: may this call run alongside others? Called in an actor on the validated arguments;
   * absent = not safe; a throw = not safe; a tool with `executionMode: "sequential"` is never safe.
   */
  isConcurrencySafe?: (args: TParams) => boolean;
}

/** What `beforeToolCall` learns in streaming mode (R70). */
export interface StreamingToolCallContext {
  /**
   * Streaming mode only (absent otherwise): `true` when the call starts while the response still
   * streams; `assistantMessage` is then a copy of the partial message (its `stopReason` is not yet known).
   */
  streaming?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Recovery (SPEC R60–R62, R66): loop settings, never passed to the stream function
// ---------------------------------------------------------------------------------------------

/** SPEC R60: why a failure is, or is not, worth another attempt. */
export interface RetryClassification {
  retryable: boolean;
  /** The server asked to wait this long (`retry-after`), in ms. */
  afterMs?: number;
  /** What failed, for logs and the CLI's "retrying" line. */
  kind?: TransientFailureKind;
}

export type TransientFailureKind = "overloaded" | "rate_limited" | "server_error" | "connection" | "stall";

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

/** Returns the replacement transcript. It must keep every tool result next to its call. */
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
  /** The run's input + output tokens (its assistant messages' and tool results' usage). */
  maxTotalTokens?: number;
  /** The run's `cost.total`, in USD. */
  maxCostUsd?: number;
}

/**
 * SPEC R63: why a run ended, on every `agent_end` (additive to pi's event): `completed` (nothing
 * more to do), `aborted`/`error` (the last response, or a failure R56), `finish_turn_end`
 * (`finishTurn` said end), or a budget; R61 and R62 add `max_output_tokens` and `prompt_too_long`.
 */
export type AgentEndReason = "completed" | "aborted" | "error" | "finish_turn_end" | "max_turns" | "max_tokens" | "max_cost" | "max_output_tokens" | "prompt_too_long";

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

export type AgentEvent =
  | { type: "agent_start" }
  | { type: "agent_end"; messages: AgentMessage[]; reason?: AgentEndReason }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: any }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: any; partialResult: any }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: any;
      isError: boolean;
      durationMs?: number;
    };

/**
 * SPEC R66: events of the loop's own mechanisms, additive to pi's `AgentEvent` and emitted only
 * when their mechanism is configured. They travel in the same ordered stream as `AgentEvent`s:
 * `agentEvents(actor)` and `config.onRuntimeEvent` see them, `Agent.subscribe` with
 * `{runtimeEvents: true}`; pi's surfaces (`agentLoop`'s stream, an `emit` sink) never do.
 */
export type AgentRuntimeEvent =
  /** R60: a transient failure before content; the attempt was withheld and another follows after `delayMs`. */
  | { type: "retry_scheduled"; attempt: number; maxAttempts: number; delayMs: number; kind: TransientFailureKind | "unknown"; errorMessage: string; model: string }
  /** R61: the truncated response (closed with `message_end`) is discarded; the request goes again with `maxTokens`. */
  | { type: "output_limit_escalated"; fromMaxTokens: number | undefined; toMaxTokens: number }
  | { type: "message_discarded"; message: AssistantMessage; reason: "output_limit_escalated" }
  /**
   * R81: a durable run resumed after a crash retracts every provisional event the crashed process
   * may have delivered from sequence number `fromSeq` on (a response still streaming, a tool's
   * progress); the event itself has that sequence number. It carries no message: none had ended.
   */
  | { type: "message_discarded"; reason: "interrupted"; fromSeq: number; message?: undefined }
  /** R61: the recovery message (its `message_start`/`message_end` follow) asks the model to resume. */
  | { type: "output_limit_recovery"; attempt: number; maxRecoveries: number }
  /** R62: the transcript was compacted; the run's context is now `messages`. */
  | { type: "transcript_replaced"; messages: AgentMessage[]; reason: "overflow" | "threshold" }
  /** R82: a call waits for `approve(approvalId)` or `reject(approvalId, reason)`. */
  | ({ type: "tool_approval_requested" } & ToolApprovalRequest)
  /** R82: the wait ended: approved (with replacement `args`, when given) or rejected (also by an abort or a cancelled batch). */
  | { type: "tool_approval_resolved"; approvalId: string; toolCallId: string; decision: "approved" | "rejected"; reason?: string; args?: unknown };

export type AgentRuntimeEventType = AgentRuntimeEvent["type"];

/** Everything a run emits, in one order: pi's events and, when configured, the loop's own (R66). */
export type AnyAgentEvent = AgentEvent | AgentRuntimeEvent;

/** An awaited event sink: the loop takes no further step until the returned promise settles. */
export type AgentEventSink = (event: AgentEvent) => void | Promise<void>;

// ---------------------------------------------------------------------------------------------
// Approval (SPEC R82)
// ---------------------------------------------------------------------------------------------

/** A call waiting for approval, as plain data (`agent.pendingApprovals`, `tool_approval_requested`). */
export interface ToolApprovalRequest {
  /** Unique within the session (the model's `toolCallId` may repeat). */
  approvalId: string;
  toolCallId: string;
  toolName: string;
  /** The validated arguments the call would execute with. */
  args: unknown;
  /** Why it waits: `beforeToolCall`'s `approval.reason`, or `Tool NAME requires approval` for `needsApproval`. */
  reason: string;
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
