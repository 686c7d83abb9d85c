/**
 * The run machine's data: input, context and what its steps exchange. Everything here is plain,
 * serializable data (no functions, no class instances, no API key), so snapshots persist as JSON
 * and the inspector shows them as they are (SPEC R13, R14).
 */
import type { AgentEndReason, AgentMessage, AgentToolResult, ApprovalRule, AssistantMessage, Message, Model, RunBudget, ThinkingLevel, ToolCall, ToolExecutionMode, ToolResultMessage, TransientFailureKind } from "../../src/protocol/index.js";
import type { KeyedToolDecl } from "../../src/protocol/transcript/index.js";
import type { RunApprovals } from "../approval.helpers.js";

/** Which optional hooks the config has: a hook's state is entered only when it is configured. */
export interface HookFlags {
  transformContext: boolean;
  getApiKey: boolean;
  getSteeringMessages: boolean;
  getFollowUpMessages: boolean;
  prepareNextTurn: boolean;
  prepareRequest: boolean;
  finishTurn: boolean;
  beforeToolCall: boolean;
  afterToolCall: boolean;
  /** Not a hook: a shared request limiter, whose slot each request waits for. */
  requestLimiter: boolean;
}

/** The executable tool set as plain data: declarations (R30) and the names that force a sequential batch (R20). */
export interface ToolSetData {
  tools: KeyedToolDecl[];
  sequentialTools: string[];
  /** R73: the tools whose failed `execute` cancels the rest of the batch. */
  siblingCancellingTools: string[];
}

/**
 * R110: the trace a run belongs to, as plain strings: its first run span's W3C `traceparent`
 * (`00-{trace id}-{span id}-{flags}`) and the conversation it traced. A run restored from a
 * snapshot or resumed from its journal in another process links its new span to this one. The
 * machine never reads it.
 */
export interface TraceOrigin {
  traceparent: string;
  conversationId?: string;
}

/** What a run starts from. Built by `runInput` (src/api/run-input.ts) from the caller's config. */
export interface RunInput extends ToolSetData {
  /**
   * The key under which the run's runtime (hooks, tools, sink) is served in this process
   * (`RunHosts`, src/api/run-hosts.ts), set by its host; given to its step worker.
   */
  host?: string;
  /** `agentLoop` prompts (R1); `null` for `agentLoopContinue` (R2). */
  prompts: AgentMessage[] | null;
  /** The transcript so far (the run never mutates it, and copies it before its caller could: `initialRunContext`). */
  messages: AgentMessage[];
  model: Model;
  thinkingLevel: ThinkingLevel;
  toolExecution: ToolExecutionMode;
  hooks: HookFlags;
  /** `Agent.continue()` from an assistant tail already drained the steering queue (R52). */
  skipInitialSteeringPoll?: boolean;
  /**
   * R3: the initial steering poll is the Agent's own queue's, and that queue was empty as the run
   * started: the poll is deferred to the run's first job, whose worker looks at the queue where the
   * poll would drain (`StepRequest.checksSteering`); the run polls only if something came meanwhile.
   */
  defersInitialSteeringPoll?: boolean;
  /** When the run started, on the injected clock (R13): the time of what the machine itself creates before any step replied. */
  startedAt: number;
  /** Forward every AgentEvent to the parent actor as `agent.event` (R14: an app machine that invokes the run). */
  forwardEvents?: boolean;
  /** R63: the run's limits (plain numbers). */
  budget?: RunBudget;
  /** R60–R62: which recovery mechanisms are on, with their settings (plain data; the compactor stays in the runtime). */
  recovery?: RecoverySettings;
  /** R82: the session's approval id prefix (ids unique within it) and its "always allow" rules. */
  approval?: { idPrefix?: string; rules?: ApprovalRule[] };
  /** R70: tools start while the response streams (`streamingToolExecution: true`). */
  streamingTools?: StreamingToolsSettings;
  /** R110: the run's trace, when an observer traced it (`TraceOrigin`). */
  trace?: TraceOrigin;
  /** R100: the run asks for a structured final answer (the schema stays in the runtime, with the answer tool). */
  output?: OutputRunSettings;
}

/** R100: how the run asks for its final answer (plain data; resolved with defaults by `src/loop/output-tool.ts`). */
export interface OutputRunSettings {
  /** The final-answer tool the model calls (part of the tool set, declared through R30). */
  toolName: string;
  /** Invalid answers (or turns without one) before the run ends with `output_invalid`. */
  maxAttempts: number;
  /** The user message that asks for the answer when a response ends without calling the tool. */
  reminder: string;
}

/**
 * What a run actor outputs (R14): the messages it added (R12); R100: with the validated answer as
 * the array's `output` property when the run asked for one and got it.
 */
export type RunOutput = AgentMessage[] & { output?: unknown };

/** R100: the answers so far. */
export interface OutputState {
  /** Invalid answers, and turns that ended without one. */
  attempts: number;
  /** The validated answer, once the model gave one (the run then ends). */
  answer: { value: unknown } | null;
}

/** R70: streaming tool execution's settings. */
export interface StreamingToolsSettings {
  /** `maxConcurrentTools` (default 10). */
  maxConcurrent: number;
}

/** R60–R62, resolved with their defaults (`src/loop/recovery-settings.ts`); `null`: off. */
export interface RecoverySettings {
  retry: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; fallbackModel: Model | null; overloadsBeforeFallback: number } | null;
  outputLimit: { escalatedMaxTokens: number | null; maxRecoveries: number; prompt: string } | null;
  compact: { thresholdTokens: number | null } | null;
  /** The config's `maxTokens` stream option (R61: escalation only when it is below the model's maximum). */
  requestMaxTokens: number | null;
}

/** What the recovery mechanisms track (R60–R62). */
export interface RecoveryState {
  /** R60: failed attempts of the request in progress. */
  failedAttempts: number;
  /** R60: consecutive overloads (the fallback model after `overloadsBeforeFallback`). */
  overloads: number;
  /** R60: the withheld failure being retried, and when its wait ends (injected clock). */
  retry: { failure: ResponseFailure; message: AssistantMessage; until: number | null } | null;
  /** R61: the escalated output limit (once per run; later requests keep it). */
  maxTokens: number | null;
  /** R61: consecutive recovery messages. */
  recoveries: number;
  /** R62: the request in progress already compacted once. */
  compacted: boolean;
  /** R62: why the compaction in progress runs. */
  compaction: "overflow" | "threshold" | null;
  /** R62: the withheld overflow a compaction answers (surfaced if the compactor finds nothing to compact). */
  overflow: AssistantMessage | null;
  /** R62: the length of the last replacement: usage measured before it no longer sizes the transcript. */
  compactedLength: number;
  /** R62: a proactive compaction could not bring the transcript under the threshold: no more for this run. */
  proactiveOff: boolean;
  /** R62: the surfaced failure was a second overflow (the run ends with `prompt_too_long`). */
  overflowed: boolean;
}

/** How a failed response may be recovered (R60, R62), classified by the worker. */
export interface ResponseFailure {
  retryable: boolean;
  afterMs: number | null;
  kind: TransientFailureKind | "unknown";
  contextOverflow: boolean;
}

/** What a stream step returns: the final message, and whether its events were withheld (R60). */
export interface StreamedResponse {
  message: AssistantMessage;
  /** No message event was emitted: the failure came before the first content event. */
  withheld: boolean;
  /** The classification of a failed response. */
  failure: ResponseFailure | null;
}

/** The finalized outcome of one call: exactly one per call (R26). */
export interface ToolCallOutcome {
  index: number;
  result: AgentToolResult;
  isError: boolean;
  /** Absent when `execute` did not run. */
  durationMs?: number;
  /** When the call settled, on the injected clock (its result message's timestamp). */
  settledAt: number;
  /** R73: the call's own `execute` failed (thrown or `isError`), whatever `afterToolCall` made of it. */
  executionFailed?: true;
}

/** The tool batch of the current turn. */
export interface ToolBatch {
  calls: ToolCall[];
  /** R20: how the batch runs. */
  mode: ToolExecutionMode;
  /** Sequential batches: the index of the call in progress (R24). */
  cursor: number;
  /** Finalized outcomes by source index (R26: exactly one each). */
  outcomes: (ToolCallOutcome | null)[];
  /** R70–R73: the batch started while its response streamed (streaming mode only). */
  streamed?: StreamedCalls;
}

/**
 * R70–R73: the calls of a response in streaming mode, by source index: each is a tool-call child
 * from the moment it is known (its `toolcall_end`, or the response's end).
 */
export interface StreamedCalls {
  /** `isConcurrencySafe` on the validated arguments; `null` while the call's check runs. */
  safe: (boolean | null)[];
  /** `tool_execution_start` was emitted (calls start in source order, so a prefix). */
  started: boolean[];
  /** The response ended (its calls are all known; results follow once every call settled). */
  ended: boolean;
  /** R73: the tool whose failure cancelled the calls not yet started. */
  cancelledBy: string | null;
}

/** Run-wide settings, fixed for the run. */
export interface RunSettings {
  /** `agentLoop` (R1) or `agentLoopContinue` (R2). */
  mode: "prompt" | "continue";
  toolExecution: ToolExecutionMode;
  hooks: HookFlags;
  skipInitialSteeringPoll: boolean;
  /** R3: see `RunInput.defersInitialSteeringPoll`. */
  defersInitialSteeringPoll: boolean;
  forwardEvents: boolean;
  budget: RunBudget;
  recovery: RecoverySettings;
  /** R70: `null` when tools wait for the response's end (pi's behaviour). */
  streamingTools: StreamingToolsSettings | null;
  /** R100: `null` when the run asks for no structured answer. */
  output: OutputRunSettings | null;
  /** R110: from the input; `null` when no observer traced the run. */
  trace: TraceOrigin | null;
  /** When the run started (`RunInput.startedAt`): the time of what happens before any step replied (see `runStartedAt`). */
  startedAt: number;
}

/** The current turn. */
export interface TurnState {
  /** Between `turn_start` and `turn_end`. */
  open: boolean;
  /** The turn's assistant message. */
  assistant: AssistantMessage | null;
  /** The turn's tool-result messages, in source order. */
  toolResults: ToolResultMessage[];
  batch: ToolBatch | null;
  /** `finishTurn`'s decision (R8, R10). */
  decision: "continue" | "end" | null;
}

/**
 * Kept to at most 19 top-level keys on purpose (test/loop/context-shape.test.ts): every `assign`
 * copies the context (`Object.assign({}, context, update)`), and V8 makes an object given 20 or
 * more keys that way a slow dictionary, whose every later copy costs ~30 µs on Node 24 instead of
 * ~0.4 µs. Run-wide data goes in `settings`.
 */
export interface RunContext {
  /** The key of the run's runtime in this process (`RunInput.host`); a host that restores the run gives it its own. */
  host: string;
  /** The working transcript: `context.messages` of the hooks. */
  messages: AgentMessage[];
  /** What this run added (R12). */
  newMessages: AgentMessage[];
  /** Tools the transcript declares, `[name, declaration key]` in declaration order (R30). */
  declared: [string, string][];
  /** The executable tool set, as plain data (the functions stay in the runtime). */
  toolSet: ToolSetData;
  model: Model;
  thinkingLevel: ThinkingLevel;
  settings: RunSettings;
  /** Prompts, steering or follow-up messages waiting for injection before the next request. */
  pending: AgentMessage[];
  /** Messages `prepareNextTurn` returned, injected before `pending` (R4). */
  prepared: AgentMessage[];
  turn: TurnState;
  /** The request being built (R40): after `transformContext`, then after `convertToLlm`. */
  request: { messages: AgentMessage[] | null; llmMessages: Message[] | null };
  /** The run's signal was aborted (R29); survives a restore. */
  aborted: boolean;
  /** R63: what the run has used so far: completed turns, input + output tokens, cost in USD. */
  spent: { turns: number; tokens: number; cost: number };
  /** R60–R62: retries, escalation, recoveries and compaction in progress. */
  recovery: RecoveryState;
  /** R63: why the run ends (`agent_end.reason`); set on the transition into `done`. */
  endReason: AgentEndReason;
  /** Why the run failed (R56). */
  failure: string | null;
  /** R82: approval ids issued, the calls waiting for approval, the "always allow" rules. */
  approval: RunApprovals;
  /** R100: invalid answers so far, and the validated one. */
  output: OutputState;
}

/** What a turn hook sees (plain data; the runtime adds the executable tools). */
export interface TurnSnapshot {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  messages: AgentMessage[];
  newMessages: AgentMessage[];
}

/** A hook's replacement state, as plain data (R4a, R4c). */
export interface StateUpdate {
  /** Replacement transcript (`context.messages`). */
  messages?: AgentMessage[];
  /** Replacement tool set (`context.tools`); the runtime keeps the functions. */
  toolSet?: ToolSetData;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}

export interface TurnUpdate extends StateUpdate {
  /** Messages to inject before the next request (R4b). */
  prepared?: AgentMessage[];
}
