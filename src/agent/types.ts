/**
 * The public types of the stateful `Agent` (SPEC R50–R55), structurally compatible with
 * pi-agent-core 1.6's `AgentState`, `AgentOptions` and listener signature.
 */
import type { InspectOption } from "../boundary/inspect-observer.js";
import type { EventDelivery } from "../durable/delivery.js";
import type {
  StreamingToolSettings,
  RunBudget,
  AgentEvent,
  AnyAgentEvent,
  AgentLoopConfig,
  AgentLoopTurnUpdate,
  AgentMessage,
  AgentTool,
  LoopStreamOptions,
  Message,
  Model,
  PrepareNextTurnContext,
  QueueMode,
  StreamFn,
  ThinkingLevel,
  ToolExecutionMode,
  RetrySettings,
  OutputLimitSettings,
  CompactSettings,
  OutputSettings,
} from "../types.js";
import type { Clock, RandomSource } from "../loop/clock.js";
import type { DurableOptions, LiveAt } from "../durable/durable-run.js";
import type { RequestLimiter } from "../loop/request-limiter.js";

/**
 * The Agent's state. `systemPrompt` is replayed from the transcript's system messages (change it
 * by appending a system message). Assigning `tools` or `messages` copies the top-level array;
 * differences between `tools` and the tools the transcript declares are announced to the model
 * with a system message before the next request (R30).
 */
export interface AgentState {
  readonly systemPrompt: string;
  /** The model for future runs. */
  model: Model;
  /** The thinking level for future runs (`"off"`: none requested). */
  thinkingLevel: ThinkingLevel;
  set tools(tools: AgentTool[]);
  /** The executable tools. */
  get tools(): AgentTool[];
  set messages(messages: AgentMessage[]);
  /** The transcript; each message is appended when its `message_end` reaches the Agent. */
  get messages(): AgentMessage[];
  /** True from `prompt()`/`continue()` until the `agent_end` listeners have settled. */
  readonly isStreaming: boolean;
  /** The message being streamed (between its `message_start` and `message_end`). */
  readonly streamingMessage?: AgentMessage;
  /** Ids of the tool calls executing now. */
  readonly pendingToolCalls: ReadonlySet<string>;
  /** From the most recent turn that ended with an error or abort; cleared when a run starts. */
  readonly errorMessage?: string;
  /**
   * SPEC R100: the validated final answer of the last run that ended (its `agent_end.output`);
   * undefined when it asked for none or got none. Typed: `promptForOutput`.
   */
  readonly output?: unknown;
}

/** R50: `systemPrompt` and `tools` become the leading system message unless `messages` starts with one. */
export type AgentInitialState = Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage" | "output">>;

/**
 * An event listener. Listeners are awaited one after another, in registration order, for every
 * event, and the run takes no further step until they settle (R51): an assistant `message_end`
 * listener finishes before any of that message's tools is prepared. `signal` is the run's abort
 * signal. A listener that throws ends the run with an assistant failure message (R55).
 */
/**
 * `delivery` (an Agent with `durable` only, SPEC R81): the event's sequence number in its session
 * and whether it is provisional; pass the last one you processed to `resume({ after })`.
 */
export type AgentListener = (event: AgentEvent, signal: AbortSignal, delivery?: EventDelivery) => Promise<void> | void;

/** A listener that also gets the loop's own events (SPEC R66), in the same order: `subscribe(listener, { runtimeEvents: true })`. */
export type AgentRuntimeListener = (event: AnyAgentEvent, signal: AbortSignal, delivery?: EventDelivery) => Promise<void> | void;

/**
 * The hooks an Agent passes to each run; each is read when the run starts. Their contracts are
 * those of `AgentLoopConfig`: none may throw, and one that does ends the run cleanly with an
 * assistant failure message (R56), except `beforeToolCall`/`afterToolCall`, whose throw becomes
 * that call's error tool result (R21, R23).
 */
export interface AgentHooks {
  /** Default: keep user, assistant, toolResult and system messages, drop app-defined ones. */
  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  transformContext?: AgentLoopConfig["transformContext"];
  getApiKey?: AgentLoopConfig["getApiKey"];
  beforeToolCall?: AgentLoopConfig["beforeToolCall"];
  afterToolCall?: AgentLoopConfig["afterToolCall"];
  finishTurn?: AgentLoopConfig["finishTurn"];
  prepareRequest?: AgentLoopConfig["prepareRequest"];
  /** Before every turn but the first, without the turn (the reference's form). Returns an update or `undefined`, as `AgentLoopConfig.prepareNextTurn`. */
  prepareNextTurn?: (signal?: AbortSignal) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  /** Before every turn but the first, with the completed turn. Wins over `prepareNextTurn`. */
  prepareNextTurnWithContext?: (
    context: PrepareNextTurnContext,
    signal?: AbortSignal,
  ) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
}

/**
 * Options the reference forwards to its stream function; forwarded here as stream options when
 * set (what they mean is up to the stream function; `identity` goes over `DEFAULT_AGENT_IDENTITY`).
 */
export type AgentStreamOptions = Pick<
  LoopStreamOptions,
  "sessionId" | "thinkingBudgets" | "transport" | "maxRetryDelayMs" | "onPayload" | "onResponse" | "onProviderStreamEvent" | "identity"
>;

/**
 * `agent.subscribe(listener, { after })` (SPEC R81, an Agent with `durable`): another tab, a
 * reconnecting client, a consumer that lost its place. The listener gets every event of the
 * session numbered above `after`, each once, in order, each with its `EventDelivery` as third
 * argument: first the stored ones (read from the store and replayed, as `replayRun` does, with
 * the flags they were delivered with), then the events of the run in progress (kept in memory as
 * they were delivered, the provisional events of a response still streaming included), then each
 * new event as it is delivered. A subscriber
 * that has caught up is a listener like the others (awaited, R51; a throw ends the run, R55);
 * while it catches up, the run does not wait for it. It also gets the events a resumed run
 * replays without delivering (delivered before the crash): it is a new consumer.
 *
 * `after` beyond the last event is allowed: the listener waits for the events above it. A
 * retraction (a resumed run's `message_discarded`, reason `interrupted`, R81) is numbered like any
 * event, above the events it takes back: no number is ever given to two events.
 */
export interface SubscribeFromOptions {
  /** The last sequence number you processed (0: from the session's first event). */
  after: number;
  /** The loop's own events too (R66), `message_discarded` included. */
  runtimeEvents?: boolean;
  /** Reading the stored events failed (a `StoreCorruptError`): the subscription has ended. Default: a console warning. */
  onError?: (error: unknown) => void;
}

/** `Agent.resume(options)` (R81). */
export interface AgentResumeOptions {
  /** Called once, when the resumed run has replayed its journal and goes live (see `Agent.resume`); `seq`: its first live event's number. */
  onLive?: (live: LiveAt) => void;
  /**
   * SPEC R81: the last sequence number your listeners processed (a listener's third argument):
   * every later event of the resumed run reaches them exactly once, in order. Without it, delivery
   * resumes at the first event the journal does not know was delivered (at least once).
   * `"journal"`: your view was rebuilt from the stored session (as the CLI's screen is): listeners
   * get what follows the journal, from the moment the run goes live.
   */
  after?: number | "journal";
}

export interface AgentOptions extends Partial<AgentHooks>, AgentStreamOptions, StreamingToolSettings {
  initialState?: AgentInitialState;
  /** The provider seam (see `StreamFn`). Default: the one set with `setDefaultStreamFn`; with none set, the constructor throws. */
  streamFn?: StreamFn;
  /** Default `"one-at-a-time"`. */
  steeringMode?: QueueMode;
  /** Default `"one-at-a-time"`. */
  followUpMode?: QueueMode;
  /** Default `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  /** SPEC R100: each run's structured final answer (see `AgentLoopConfig.output`); `state.output` holds it after the run. */
  output?: OutputSettings;
  /** SPEC R63: each run's limits (see `AgentLoopConfig.budget`); `agent.lastEndReason` says which one ended it. */
  budget?: RunBudget;
  /** SPEC R60: retry transient failures (see `AgentLoopConfig.retry`). */
  retry?: RetrySettings;
  /** SPEC R61: output-limit recovery (see `AgentLoopConfig.outputLimit`). */
  outputLimit?: OutputLimitSettings;
  /** SPEC R62: compaction (see `AgentLoopConfig.compact`); `state.messages` follows each `transcript_replaced`. */
  compact?: CompactSettings;
  /** SPEC R65: every call's default timeout, in ms. */
  toolTimeoutMs?: number;
  /** SPEC R67: how long an aborted run waits for app code that ignores its signal. */
  abortGraceMs?: number;
  /** Shared by the Agents (and runs) of a process: each request waits for its slot (`createRequestLimiter`). */
  requestLimiter?: RequestLimiter;
  /** SPEC R13: the runs' clock and random source (timestamps, timers, backoff jitter); default: the system's. */
  clock?: Clock;
  random?: RandomSource;
  /**
   * Any XState inspection observer, or several (each isolated from the others' failures); they see
   * the session, its runs and their tool calls. An attachable one (`otelObserver`) may attach nothing.
   */
  inspect?: InspectOption;
  /**
   * SPEC R80, R81: journal every run into `store` under `sessionId` (the store's session, not the
   * provider's `sessionId` stream option); the session's snapshot is saved whenever a run ended.
   * `agent.resume()` continues the stored session (after a crash, in a new process).
   */
  durable?: DurableOptions;
}
