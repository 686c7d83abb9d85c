/** Pure helpers of the run machine: its initial context and the questions its guards ask. */
import type { AgentMessage, AssistantMessage, ToolCall, Usage } from "../../src/protocol/index.js";
import type { Spend } from "../steps.js";
import { emptyUsage } from "../../src/protocol/usage.js";
import { estimateTokens } from "../../src/protocol/token-estimate.js";
import { initialApprovals } from "../approval.helpers.js";
import { diffDeclaredTools } from "../../src/protocol/transcript/index.js";
import type { RecoverySettings, RecoveryState, RunContext, RunInput, ToolBatch, ToolCallOutcome, TurnSnapshot, TurnState } from "./types.js";

export const noRecovery: RecoverySettings = { retry: null, outputLimit: null, compact: null, requestMaxTokens: null };

export const idleRecovery: RecoveryState = {
  failedAttempts: 0,
  overloads: 0,
  retry: null,
  maxTokens: null,
  recoveries: 0,
  compacted: false,
  compaction: null,
  overflow: null,
  overflowed: false,
  compactedLength: 0,
  proactiveOff: false,
};

/**
 * R60–R62: a response was accepted (or surfaced): the request's retries and compaction are over.
 * (R61's escalated limit stays for the rest of the run: escalation happens once.)
 */
export function settledRequest(recovery: RecoveryState, message: AssistantMessage): RecoveryState {
  const overloads = message.stopReason === "error" ? recovery.overloads : 0;
  // The common case, nothing to reset, keeps the object (no copy per response).
  if (recovery.failedAttempts === 0 && recovery.retry === null && !recovery.compacted && recovery.overloads === overloads) return recovery;
  return { ...recovery, failedAttempts: 0, overloads, retry: null, compacted: false };
}

/** R60: the ceiling of the next backoff: `baseDelayMs · 2^(failed attempts − 1)`, at most `maxDelayMs` (the draw is below it). */
export function backoffCeiling(context: RunContext): number {
  const { baseDelayMs, maxDelayMs } = context.settings.recovery.retry!;
  return Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, context.recovery.failedAttempts - 1));
}

/**
 * R61: the limit of the one escalated attempt, if it is above what the truncated request had (its
 * `maxTokens` option, or failing that the tokens the response reached).
 */
export function escalatedLimit(context: RunContext, truncated: AssistantMessage): number | undefined {
  const limit = context.settings.recovery.outputLimit;
  if (limit === null || context.recovery.maxTokens !== null) return undefined;
  const target = limit.escalatedMaxTokens ?? context.model.maxTokens;
  const current = context.settings.recovery.requestMaxTokens ?? truncated.usage?.output ?? 0;
  return target > current ? target : undefined;
}

/** R61: the turn's answer was cut off and asked for nothing (calls get R28's results instead). */
export const endedTruncated = (context: RunContext): boolean =>
  context.turn.assistant?.stopReason === "length" && !hasToolCalls(context.turn.assistant);

/** R62: the transcript's estimated size (the usage of a message kept by a compaction no longer counts). */
export const estimatedTokens = (context: RunContext): number => estimateTokens(context.messages, { usageFrom: context.recovery.compactedLength });

export const closedTurn: TurnState = { open: false, assistant: null, toolResults: [], batch: null, decision: null };

export function initialRunContext(input: RunInput): RunContext {
  return {
    host: input.host ?? "",
    // The run's own transcript, never the caller's array (which the caller may change during the
    // run). A run with prompts appends them in its first transition (`injectPending`), which makes
    // the copy; any other run copies now. (One O(transcript) copy per run: each copy of a long
    // transcript lives as long as the run and is promoted by the collections it outlives.)
    messages: input.prompts !== null && input.prompts.length > 0 ? input.messages : input.messages.slice(),
    newMessages: [],
    declared: [],
    toolSet: { tools: input.tools, sequentialTools: input.sequentialTools, siblingCancellingTools: input.siblingCancellingTools },
    model: input.model,
    thinkingLevel: input.thinkingLevel,
    settings: {
      mode: input.prompts === null ? "continue" : "prompt",
      toolExecution: input.toolExecution,
      hooks: input.hooks,
      skipInitialSteeringPoll: input.skipInitialSteeringPoll ?? false,
      defersInitialSteeringPoll: input.defersInitialSteeringPoll ?? false,
      forwardEvents: input.forwardEvents ?? false,
      budget: input.budget ?? {},
      recovery: input.recovery ?? noRecovery,
      streamingTools: input.streamingTools ?? null,
      output: input.output ?? null,
      trace: input.trace ?? null,
      startedAt: input.startedAt,
    },
    pending: input.prompts ?? [],
    prepared: [],
    turn: closedTurn,
    request: { messages: null, llmMessages: null },
    aborted: false,
    spent: { turns: 0, tokens: 0, cost: 0 },
    recovery: idleRecovery,
    endReason: "completed",
    failure: null,
    approval: initialApprovals(input.approval),
    output: { attempts: 0, answer: null },
  };
}

/**
 * Appends `messages` to the transcript and to what this run added. Spread it last in an update
 * (`{ turn, ...appended(context, messages) }`): on Node 20's V8, an object literal that begins with
 * a spread and then adds keys gets a hidden class of its own every time it is built.
 */
export const appended = (context: RunContext, messages: AgentMessage[]) => ({
  messages: context.messages.concat(messages),
  newMessages: context.newMessages.concat(messages),
});

export const toolCallsOf = (message: AssistantMessage): ToolCall[] =>
  message.content.filter((block): block is ToolCall => block.type === "toolCall");

/** Whether the response asks for a tool call (a guard's question: nothing allocated). */
export const hasToolCalls = (message: AssistantMessage): boolean => message.content.some((block) => block.type === "toolCall");

/** How many calls of the batch have no outcome yet. */
export function unsettledCalls(batch: ToolBatch): number {
  let count = 0;
  for (const outcome of batch.outcomes) if (outcome === null) count++;
  return count;
}

export const isFailedResponse = (message: AssistantMessage | null): boolean =>
  message !== null && (message.stopReason === "error" || message.stopReason === "aborted");

/** R27: a batch whose every finalized result (of the calls its message asks for, R71) says `terminate` does not itself ask for another request. */
export function batchTerminates(turn: TurnState): boolean {
  const batch = turn.batch;
  if (batch === null || batch.outcomes.length === 0) return false;
  const answered = answeredCalls(turn);
  return answered.length > 0 && answered.every((index) => batch.outcomes[index]?.result.terminate === true);
}

/** R20: sequential when configured, or when any call targets a sequential tool. */
export function runsSequentially(context: RunContext, calls: ToolCall[]): boolean {
  if (context.settings.toolExecution === "sequential") return true;
  return calls.some((call) => context.toolSet.sequentialTools.includes(call.name));
}

/** R56: the assistant message that closes a failed run (R67: `aborted` when a step was abandoned). */
export function failureMessage(
  context: Pick<RunContext, "model">,
  errorMessage: string,
  at: number,
  stopReason: "error" | "aborted" = "error",
): AssistantMessage {
  // The reference Agent's failure message, field for field (one empty text block, no thinking level).
  return {
    role: "assistant",
    content: [{ type: "text", text: "" }],
    api: context.model.api,
    provider: context.model.provider,
    model: context.model.id,
    usage: emptyUsage(),
    stopReason,
    errorMessage,
    timestamp: at,
  };
}

/** The turn hooks' input. */
export function turnSnapshot(context: RunContext): TurnSnapshot {
  return {
    message: context.turn.assistant!,
    toolResults: context.turn.toolResults,
    messages: context.messages,
    newMessages: context.newMessages,
  };
}

/** R63: what messages used: their usage's input + output tokens and `cost.total`. */
export function spendOf(messages: readonly ({ usage?: Partial<Usage> } | null | undefined)[]): Spend {
  let tokens = 0;
  let cost = 0;
  for (const message of messages) {
    const usage = message?.usage;
    if (!usage) continue;
    tokens += (usage.input ?? 0) + (usage.output ?? 0);
    cost += usage.cost?.total ?? 0;
  }
  return { tokens, cost };
}

/**
 * R63: what a completed turn's tool results used (a `ToolResultMessage` may carry `usage`). The
 * responses are counted as they arrive (`countResponse`), each one the run received: those it
 * discarded or withheld (R60–R62) too.
 */
export const turnSpend = (turn: TurnState): Spend => spendOf(turn.toolResults);

/** R63: `spent` with `add` added (the same object when nothing was spent). */
export const spentWith = (spent: RunContext["spent"], add: Spend): RunContext["spent"] =>
  add.tokens === 0 && add.cost === 0 ? spent : { ...spent, tokens: spent.tokens + add.tokens, cost: spent.cost + add.cost };

// ---------------------------------------------------------------------------------------------
// R70–R73: tools that start while the model streams
// ---------------------------------------------------------------------------------------------

export const emptyStreamedBatch = (): ToolBatch => ({
  calls: [],
  mode: "parallel",
  cursor: 0,
  outcomes: [],
  streamed: { safe: [], started: [], ended: false, cancelledBy: null },
});

/** The batch with `calls` appended (each unchecked, not started, unsettled). */
export function withStreamedCalls(batch: ToolBatch, calls: ToolCall[]): ToolBatch {
  if (calls.length === 0) return batch;
  const streamed = batch.streamed!;
  return {
    ...batch,
    calls: batch.calls.concat(calls),
    outcomes: batch.outcomes.concat(calls.map(() => null)),
    streamed: { ...streamed, safe: streamed.safe.concat(calls.map(() => null)), started: streamed.started.concat(calls.map(() => false)) },
  };
}

/**
 * R70–R72: the call of the batch that answers each of the final message's calls, matched by id and
 * tool name, never by position (a provider's final message may order, replace or drop the calls it
 * reported while streaming): the first call of the batch with that id and name not yet matched;
 * `null` for a call that did not stream (or streamed as another tool: a replacement, which runs).
 * Outside streaming mode the batch is the message's calls, each its own.
 */
export function answeringCalls(batch: ToolBatch, finalCalls: readonly ToolCall[]): (number | null)[] {
  const key = (call: ToolCall) => `${call.id}\u0000${call.name}`;
  const unmatched = new Map<string, number[]>();
  batch.calls.forEach((call, index) => {
    const same = unmatched.get(key(call));
    if (same) same.push(index);
    else unmatched.set(key(call), [index]);
  });
  return finalCalls.map((call) => unmatched.get(key(call))?.shift() ?? null);
}

/** R72: the streamed calls the final message does not list (by id and tool name): they are not answered. */
export function droppedCalls(batch: ToolBatch, finalCalls: readonly ToolCall[]): number[] {
  const answering = new Set(answeringCalls(batch, finalCalls));
  const dropped: number[] = [];
  for (let index = 0; index < batch.calls.length; index++) if (!answering.has(index)) dropped.push(index);
  return dropped;
}

/**
 * R25, R71: the calls of the turn's batch whose results are appended, in the order of the message's
 * calls: in streaming mode the calls matched to the final message's (once its batch is closed,
 * each of them has one); otherwise every call of the batch, which is the message's.
 */
export function answeredCalls(turn: TurnState): number[] {
  const batch = turn.batch!;
  if (!batch.streamed || turn.assistant === null) return batch.calls.map((_, index) => index);
  return answeringCalls(batch, toolCallsOf(turn.assistant)).filter((index): index is number => index !== null);
}

/**
 * R55, R67, R72: the turn's batch as a failure answers it: the calls whose results the turn appends,
 * in that order (a streamed call the final message dropped never gets a result message).
 */
export function answerableBatch(turn: TurnState): Pick<ToolBatch, "calls" | "outcomes"> | null {
  const batch = turn.batch;
  if (!batch) return null;
  const indices = answeredCalls(turn);
  if (indices.length === batch.calls.length && indices.every((index, k) => index === k)) return batch;
  return { calls: indices.map((index) => batch.calls[index]!), outcomes: indices.map((index) => batch.outcomes[index]!) };
}

/** The batch with `outcome` recorded for a call that settled without its actor (R72, R73): it counts as started. */
export function settledStreamed(batch: ToolBatch, outcome: ToolCallOutcome): ToolBatch {
  const outcomes = batch.outcomes.slice();
  outcomes[outcome.index] = outcome;
  const started = batch.streamed!.started.slice();
  started[outcome.index] = true;
  return { ...batch, outcomes, streamed: { ...batch.streamed!, started } };
}

/**
 * R70: the calls that may start now, in source order. Calls start in order, so the started ones
 * are a prefix: from the first call not started, each checked safe call starts while fewer than
 * `maxConcurrent` run and no unsafe call runs; an unsafe call starts only when nothing runs, and
 * runs alone. The first call that must wait (unchecked, unsafe, over the limit, or R100's answer
 * while the response streams) holds back every later one.
 *
 * R100: the answer is the final message's: a call of the answer tool starts only once the response
 * ended, so an answer the final message drops, or that a `length` response cut off (R28, R72), is
 * never taken, and both modes give it the same events.
 */
export function callsToStart(batch: ToolBatch, maxConcurrent: number, answerTool: string | null): number[] {
  const { safe, started } = batch.streamed!;
  let running = 0;
  for (let index = 0; index < batch.calls.length; index++) {
    if (!started[index] || batch.outcomes[index] !== null) continue;
    if (safe[index] === false) return [];
    running++;
  }
  const starting: number[] = [];
  for (let index = started.indexOf(false); index !== -1 && index < batch.calls.length; index++) {
    if (started[index]) continue;
    if (!batch.streamed!.ended && batch.calls[index].name === answerTool) break;
    const check = safe[index];
    if (check === null) break;
    if (check === false) {
      if (running === 0 && starting.length === 0) starting.push(index);
      break;
    }
    if (running + starting.length >= maxConcurrent) break;
    starting.push(index);
  }
  return starting;
}

/** When the run started (a snapshot persisted before it moved into `settings` has it at the top). */
export const runStartedAt = (context: RunContext): number => context.settings.startedAt ?? (context as { startedAt?: number }).startedAt ?? 0;

/**
 * R4b, R30: is there anything to inject before the turn's request: prepared or pending messages,
 * or tools that differ from what the transcript declares? (The run's tools usually match the
 * declared ones key for key and in order: that is checked on the array, with no Map built.)
 */
export function hasMessagesToInject({ pending, prepared, declared, toolSet: { tools } }: RunContext): boolean {
  if (pending.length > 0 || prepared.length > 0) return true;
  if (declared.length === tools.length && declared.every(([, key], i) => tools[i].key === key)) return false;
  return diffDeclaredTools(new Map(declared), tools) !== undefined;
}
