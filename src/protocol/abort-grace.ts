/**
 * SPEC R67, abort grace: what an abandoned step is, what it is called, and what the run still owes
 * the calls it had started (R55). Pure, apart from the error class; the step worker
 * (`src/actors/steps-worker.ts`) abandons, the run machine's `failing` state reports.
 */
import type { AgentEvent } from "./events.js";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "./messages.js";
import type { AgentToolResult } from "./tools.js";
import type { StepName } from "./execution.js";
import { ABORTED_TEXT, abortedResult, toolResultMessage } from "./tool-results.js";

/** What an abandoned job is called in its error text: the app code that did not stop. */
const SUBJECT: Record<StepName, string> = {
  getSteeringMessages: "getSteeringMessages",
  getFollowUpMessages: "getFollowUpMessages",
  prepareNextTurn: "prepareNextTurn",
  prepareRequest: "prepareRequest",
  transformContext: "transformContext",
  convertToLlm: "convertToLlm",
  resolveApiKey: "getApiKey",
  streamResponse: "the stream function",
  finishTurn: "finishTurn",
  // R60: the wait itself ends on the abort; only an app's random source could keep it.
  drawBackoff: "the random source",
  acquireRequestSlot: "the request limiter",
  waitForRetry: "the retry wait",
  compact: "the compactor",
  // Preparation is synchronous: only beforeToolCall can keep a preflight waiting.
  preflightCalls: "beforeToolCall",
  // R67 gives a call one text whether execute or afterToolCall kept it.
  executeToolCall: "the tool",
  finalizeToolCall: "the tool",
  // R70: a streamed call's own check (isConcurrencySafe) and preflight (beforeToolCall).
  checkToolCall: "isConcurrencySafe",
  preflightToolCall: "beforeToolCall",
};

/** `Operation aborted (finishTurn did not stop within 500 ms)`. */
export const abandonedText = (job: StepName, graceMs: number): string => `${ABORTED_TEXT} (${SUBJECT[job]} did not stop within ${graceMs} ms)`;

/** Is `job` one of a tool call's own steps (abandoning it settles the call, not the run)? */
export const isCallStep = (job: StepName): boolean =>
  job === "executeToolCall" || job === "finalizeToolCall" || job === "checkToolCall" || job === "preflightToolCall";

/** A tool result whose `tool_execution_end` the abandoned job had already emitted (an immediate preflight result). */
export interface EmittedResult {
  toolCallId: string;
  result: AgentToolResult;
  isError: boolean;
}

/**
 * The reason a step was abandoned: sent as its `step.failed` error, so the machines can tell an
 * abandonment (the run ends `aborted`) from a throw (R56, `error`). Never persisted: the
 * transition that receives it reports everything.
 */
export class StepAbandonedError extends Error {
  override name = "StepAbandonedError";
  constructor(
    readonly job: StepName,
    readonly graceMs: number,
    /**
     * The assistant message the job had opened (`message_start` emitted) and the run never got:
     * closed by the worker with `stopReason: "aborted"` (R56's rule for an open message).
     */
    readonly partial: AssistantMessage | undefined,
    /** Calls whose `tool_execution_start` the job emitted, in order. */
    readonly startedCalls: readonly string[],
    /** Of those, the ones whose `tool_execution_end` it emitted too. */
    readonly emittedResults: readonly EmittedResult[],
  ) {
    super(abandonedText(job, graceMs));
  }
}

export const isStepAbandoned = (error: unknown): error is StepAbandonedError => error instanceof StepAbandonedError;

/**
 * Follows what a job emits, so that an abandoned one can be closed properly (only kept when an
 * abort grace is configured): the assistant message it opened and the calls it started.
 */
export class JobTrail {
  /** The last assistant message the job opened, and whether its `message_end` went out. */
  message: AssistantMessage | undefined = undefined;
  ended = false;
  readonly started: string[] = [];
  readonly results: EmittedResult[] = [];

  note(event: { type: string }): void {
    const e = event as AgentEvent;
    switch (e.type) {
      case "message_start":
      case "message_update":
        if (e.message.role === "assistant") (this.message = e.message), (this.ended = false);
        return;
      case "message_end":
        if (e.message.role === "assistant") (this.message = e.message), (this.ended = true);
        return;
      case "tool_execution_start":
        this.started.push(e.toolCallId);
        return;
      case "tool_execution_end":
        this.results.push({ toolCallId: e.toolCallId, result: e.result, isError: e.isError });
        return;
    }
  }
}

/** What `answerStartedCalls` reads of the run's turn (the run machine's `TurnState`). */
export interface AbandonedTurn {
  open: boolean;
  toolResults: readonly ToolResultMessage[];
  batch: { calls: readonly ToolCall[]; outcomes: readonly ({ result: AgentToolResult; isError: boolean; durationMs?: number } | null)[] } | null;
}

/**
 * R55 for an abandoned run step: every call of the open turn's batch that had started and has no
 * result message yet gets one: its recorded outcome, the immediate result the abandoned preflight
 * had already reported, or `Operation aborted` (then with its `tool_execution_end` first). Every
 * `tool_execution_end` comes before the result messages, which follow in source order (R25).
 */
export function answerStartedCalls(turn: AbandonedTurn, error: StepAbandonedError, at: number): { events: AgentEvent[]; messages: ToolResultMessage[] } {
  const events: AgentEvent[] = [];
  const messages: ToolResultMessage[] = [];
  const batch = turn.open ? turn.batch : null;
  if (!batch) return { events, messages };
  const answered = new Set(turn.toolResults.map((message) => message.toolCallId));
  const started = new Set(error.startedCalls);
  const emitted = new Map(error.emittedResults.map((entry) => [entry.toolCallId, entry]));
  batch.calls.forEach((call, index) => {
    if (answered.has(call.id)) return;
    const outcome = batch.outcomes[index] ?? emitted.get(call.id);
    if (!outcome && !started.has(call.id)) return;
    const result = outcome?.result ?? abortedResult();
    const isError = outcome?.isError ?? true;
    if (!outcome) events.push({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError });
    messages.push(toolResultMessage(call, result, isError, (outcome as { durationMs?: number } | undefined)?.durationMs, at));
  });
  for (const message of messages) events.push({ type: "message_start", message }, { type: "message_end", message });
  return { events, messages };
}
