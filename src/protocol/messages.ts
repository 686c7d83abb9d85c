/**
 * The data model's messages, models and the stream function (SPEC "Data model"). Field names are
 * part of the contract: they are structurally compatible with pi-agent-core 1.6. Plain,
 * JSON-serializable data, except the stream function itself.
 */
import type { ClientIdentity } from "./identity.js";

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
  /** Plain JSON: what the model sent, parsed (R13 keeps every value that enters a run JSON). */
  arguments: JsonObject;
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
  /** A JSON Schema object (`object`, as pi-ai's `Tool`: a TypeBox or pi-schema schema is one). */
  parameters: object;
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

/**
 * pi-ai's stop reasons. The loop treats `error` and `aborted` as failures (R6), `length` as
 * truncation (R61) and every other reason as a completed response: `pending` (the reason a
 * provider's partial message carries while it streams) and `deferred` (the response continues
 * asynchronously behind a provider handle) end a turn as `stop` does, as in pi-agent-core.
 */
export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

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

/** `details` is plain JSON: a tool's result is converted when it enters the run (R13). */
export interface ToolResultMessage<TDetails = JsonValue> {
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

/** SPEC R60: why a failure is, or is not, worth another attempt. */
export interface RetryClassification {
  retryable: boolean;
  /** The server asked to wait this long (`retry-after`), in ms. */
  afterMs?: number;
  /** What failed, for logs and the CLI's "retrying" line. */
  kind?: TransientFailureKind;
}

export type TransientFailureKind = "overloaded" | "rate_limited" | "server_error" | "connection" | "stall";

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
  /**
   * HTTP headers a provider sends with this model's requests (pi-ai's field). They may carry a key,
   * so they never enter machine context, input or snapshots (R14): the run keeps them in memory
   * and passes the model with them to the stream function; a restored run gets them from the model
   * it is given again (same api, provider and id).
   */
  headers?: Record<string, string>;
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
  | { type: "done"; reason: "stop" | "length" | "toolUse" | "deferred"; message: AssistantMessage }
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
  // The three callbacks below are methods, so that pi's (typed with pi-ai's `Model`, whose
  // `baseUrl` is required) type-check: they get the run's model as the app gave it.
  /** Inspect or replace the provider payload before it is sent; return undefined to keep it. */
  onPayload?(payload: unknown, model: Model): unknown;
  onResponse?(response: { status: number; headers: Record<string, string> }, model: Model): void | Promise<void>;
  onProviderStreamEvent?(data: unknown, model: Model): void | Promise<void>;
  /** A telemetry span (pi-telemetry's `TelemetrySpan`) for providers that report one. */
  telemetry?: unknown;
}

/**
 * What the stream function receives: the config's stream options plus the run's `signal`, the
 * resolved `apiKey` and the turn's `reasoning`. Open, so a stream function can read options another
 * layer added. `telemetry` arrives untouched too, read through the index signature (`unknown`):
 * it is not declared here so that pi's stream functions, which type it as pi-telemetry's span,
 * type-check (see `StreamFn`).
 */
export interface StreamOptions extends Omit<LoopStreamOptions, "telemetry"> {
  /** The turn's thinking level; absent when it is off (the loop never sends `"off"`, as pi's does not). */
  reasoning?: Exclude<ThinkingLevel, "off">;
  [option: string]: unknown;
}

/**
 * The provider seam: `(model: Model, context: TranscriptContext, options: StreamOptions) =>
 * AssistantMessageEventStream | Promise<AssistantMessageEventStream>`. **Contract: never throws or
 * rejects** for provider, network or model failures; they are encoded as a final message with
 * `stopReason: "error" | "aborted"` and `errorMessage`. (A stream function that throws anyway ends
 * the run cleanly, R56.)
 *
 * Declared as a method's type, so its parameters are compared both ways: pi's `StreamFn` (and
 * pi-ai's stream functions) type-check as they are, though their parameters are narrower than
 * what the loop declares. What the loop passes meets them: `context` is a normalized transcript
 * (what pi-ai's branded `TranscriptContext` certifies: prompt and tools as system messages, R30),
 * and `model` is the run's model as the app gave it (pi-ai's requires `baseUrl`, which a model
 * from pi-ai's catalog has; ours may omit it).
 */
export type StreamFn = {
  streamFn(model: Model, context: TranscriptContext, options: StreamOptions): AssistantMessageEventStream | Promise<AssistantMessageEventStream>;
}["streamFn"];
