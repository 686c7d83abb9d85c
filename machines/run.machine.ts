/**
 * One run of the agent loop (SPEC R1–R12, R20–R30, R40–R42, R56), from `agent_start` to
 * `agent_end`. Every lifecycle step is a state. A step that awaits app code asks the run's step
 * worker (`steps`, invoked at the root; protocol in `steps.ts`) for its job on entry and leaves on
 * the reply; a hook's state is entered only when the hook is configured. Decisions between steps
 * are guarded transitions straight to the next step. Tool calls are spawned `toolCall` children
 * with bounded ids (`tool:<index in batch>`), stopped once settled.
 *
 * Three transitions live on the root because any step can raise them: a failed step ends the run
 * through `failing` (R56), `run.abort` marks the run aborted (R29), and `step.reissue` (sent by a
 * restored worker, R13) asks again for the job of the step the run was waiting in.
 *
 * The machine emits the `AgentEvent`s of its own transitions; the worker emits the ones produced
 * inside a job (stream deltas, tool updates) straight to the run's event sink, in one order. The
 * definition is pure: no clock, no I/O; times come from the steps' replies (R13).
 */
import {
  and,
  assertEvent,
  assign,
  emit,
  enqueueActions,
  not,
  or,
  sendTo,
  setup,
  stopChild,
  type ActorRefFrom,
  type AnyActorRef,
  type DoneActorEvent,
  type ErrorActorEvent,
} from "xstate";
import type { AgentEndReason, AnyAgentEvent, AgentMessage, AssistantMessage, ToolCall, ToolResultMessage, UserMessage } from "../src/protocol/index.js";
import { declareToolChanges, applySystemMessages } from "../src/protocol/transcript/index.js";
import { ABORTED_TEXT, abortedResult, errorText, siblingCancelledResult, toolResultMessage, truncatedCallResult } from "../src/protocol/tool-results.js";
import { normalizeTranscript } from "../src/protocol/normalize.js";
import { answerStartedCalls, isStepAbandoned, type StepAbandonedError } from "../src/protocol/abort-grace.js";
import type { RunContext, RunInput, StreamedResponse, ToolBatch, ToolCallOutcome, TurnUpdate } from "./run.types.js";
import {
  appended,
  backoffCeiling,
  endedTruncated,
  escalatedLimit,
  estimatedTokens,
  settledRequest,
  batchTerminates,
  callsToStart,
  closedTurn,
  emptyStreamedBatch,
  settledStreamed,
  withStreamedCalls,
  failureMessage,
  initialRunContext,
  isFailedResponse,
  runsSequentially,
  toolCallsOf,
  turnSnapshot,
  turnSpend,
} from "./run.helpers.js";
import { getPlaceholderFor } from "./placeholders.js";
import { estimateTokens } from "../src/protocol/token-estimate.js";
import { toolCallMachine, type CallApprovalNeeded, type CallChecked, type ToolCallInput } from "./tool-call.machine.js";
import { ruleAllows, ruleOf, withRule } from "./approval.helpers.js";
import {
  isStepReply,
  replyOutput,
  stepRequest,
  timeOf,
  type RunAbort,
  type RunApprovalEvent,
  type StepJobs,
  type StepReissue,
  type StepReply,
  type StreamToolCallReady,
  type StepWorkerLogic,
  currentStep,
} from "./steps.js";

export type { RunContext, RunInput, StateUpdate, TurnSnapshot, TurnUpdate } from "./run.types.js";

export type ToolDoneEvent = DoneActorEvent<ToolCallOutcome, `tool:${number}`>;
export type ToolErrorEvent = ErrorActorEvent<unknown, `tool:${number}`>;
export type RunEvent = ToolDoneEvent | ToolErrorEvent | StepReply | StepReissue | RunAbort | RunApprovalEvent | StreamToolCallReady | CallChecked | CallApprovalNeeded;

type RunStepName = Exclude<keyof StepJobs, "executeToolCall" | "finalizeToolCall" | "checkToolCall" | "preflightToolCall">;

const toolChildId = (index: number) => `tool:${index}` as const;
const indexOfChild = (actorId: string) => Number(actorId.slice("tool:".length));

/** What each step asks for, from the context. */
const runStepInput: { [K in RunStepName]: (context: RunContext) => StepJobs[K]["input"] } = {
  getSteeringMessages: () => null,
  getFollowUpMessages: () => null,
  prepareNextTurn: turnSnapshot,
  prepareRequest: (context) => ({ messages: context.messages, model: context.model, thinkingLevel: context.thinkingLevel }),
  transformContext: (context) => ({ messages: context.messages }),
  convertToLlm: (context) => ({ messages: context.request.messages ?? context.messages }),
  resolveApiKey: (context) => ({ provider: context.model.provider }),
  streamResponse: (context) => ({
    messages: context.request.llmMessages!,
    model: context.model,
    thinkingLevel: context.thinkingLevel,
    maxTokens: context.recovery.maxTokens,
    // R60, R62: a failure before content is withheld while something may recover from it.
    withhold: context.settings.recovery.retry !== null || context.settings.recovery.compact !== null,
    loopRetries: context.settings.recovery.retry !== null,
    // R70: the job reports each call whose toolcall_end arrives mid-stream.
    ...(context.settings.streamingTools !== null ? { streamTools: true } : {}),
  }),
  acquireRequestSlot: () => null,
  drawBackoff: (context) => ({ ceilingMs: backoffCeiling(context) }),
  waitForRetry: (context) => ({ until: context.recovery.retry!.until! }),
  compact: (context) => ({
    messages: context.messages,
    model: context.model,
    reason: context.recovery.compaction ?? "overflow",
    estimatedTokens: estimatedTokens(context),
  }),
  finishTurn: turnSnapshot,
  // R24, R25: a sequential batch preflights the call in progress, a parallel one every call.
  preflightCalls: (context) => {
    const batch = context.turn.batch!;
    const calls = batch.calls.map((toolCall, index) => ({ index, toolCall }));
    return { calls: batch.mode === "sequential" ? [calls[batch.cursor]] : calls, gate: context.settings.hooks.beforeToolCall, approval: { rules: context.approval.rules } };
  },
};

/** A step state: asks for its job on entry (and on `step.reissue`), cancels it if left before the reply. */
const step = <K extends RunStepName>(job: K) =>
  ({
    entry: { type: "requestStep", params: { job } },
    exit: "cancelStep",
    meta: { step: job },
  }) as const;

const reply = replyOutput;

/** The reply of the stream step (R41, R60). */
const streamed = (event: RunEvent) => reply(event, "streamResponse");
const response = (event: RunEvent) => streamed(event).message;

/** R5, R41: the response, appended to the transcript. */
const appendAssistant = { type: "appendAssistant", params: ({ event }: { event: RunEvent }) => response(event) } as const;

/** R60, R62: a withheld failure that nothing recovers is emitted after all, then handled as any failed response. */
const surfaceFailure = { type: "surfaceWithheld", params: ({ event }: { event: RunEvent }) => streamed(event) } as const;

/** The immediate result of a sequential batch's call in progress (its preflight failed it). */
const immediateOutcome = {
  type: "appendResult",
  params: ({ context }: { context: RunContext }) => context.turn.batch!.outcomes[context.turn.batch!.cursor]!,
} as const;

/** R4a: `turn_start` on the edge that enters the next turn's message injection. */
const openTurn = ["emitTurnStart", "markTurnOpen"] as const;
const openingTurn = { target: "#run.turn.injectingMessages", actions: openTurn } as const;

/** Applies a hook's update (R4a, R4c). */
const applyUpdateFrom = <K extends "prepareNextTurn" | "prepareRequest">(job: K) =>
  ({ type: "applyUpdate", params: ({ event }: { event: RunEvent }) => reply(event, job) as TurnUpdate }) as const;

/** Queues what a poll returned (R3, R9, R10). */
const queueFrom = <K extends "getSteeringMessages" | "getFollowUpMessages">(job: K) =>
  ({ type: "queuePending", params: ({ event }: { event: RunEvent }) => reply(event, job) }) as const;

/**
 * R22, R24, R26: settles a call from its actor's output, or from its crash (a runtime defect,
 * still exactly one result): its actor stopped, its `tool_execution_end` emitted, its outcome
 * recorded, and for a sequential call its result message.
 */
function settle(kind: "done" | "crashed", appendMessage: boolean) {
  const outcome = ({ event, context }: { event: RunEvent; context: RunContext }) =>
    kind === "done" ? (event as ToolDoneEvent).output : crashedCall(event as ToolErrorEvent, context);
  return [
    { type: "stopCall", params: ({ event }: { event: RunEvent }) => indexOfChild((event as ToolDoneEvent | ToolErrorEvent).actorId ?? "") },
    { type: "closeApproval", params: outcome },
    { type: "emitToolEnd", params: outcome },
    { type: "recordOutcome", params: outcome },
    ...(appendMessage ? [{ type: "appendResult", params: outcome } as const] : []),
  ] as const;
}

type Condition = "cancelsLaterCalls" | "settlesLastCall" | "settledEveryCall" | "preflightPassesNoCall" | "responseFailed" | "continuesInnerLoop" | "receivedFollowUps" | "isAborted" | "foundNothingToCompact";

/** R6, R8: the turn closes with finishTurn when configured (its decision ignored after an error response), then turn_end. */
function toTurnEnd<const A>(when: Condition | undefined, actions: A) {
  return [
    {
      guard: when ? and<RunContext, RunEvent, [Condition, "hasFinishTurn"]>([when, "hasFinishTurn"]) : "hasFinishTurn",
      target: "#run.turn.finishingTurn",
      actions,
    },
    { ...(when ? { guard: when } : {}), target: "#run.turn.endingTurn", actions },
  ] as const;
}

/** R40: a request starts with transformContext when configured, else with convertToLlm. */
function toRequest<const A>(actions: A) {
  return [
    { guard: "hasTransformContext", target: "#run.turn.requesting.transformingContext", actions },
    { target: "#run.turn.requesting.convertingToLlm", actions },
  ] as const;
}

/** The request's stream step, after its slot when a request limiter is configured; R70: in streaming mode, the state where calls run meanwhile. */
function toStreaming<const A>(when: "escalatesOutputLimit" | undefined, actions: A) {
  return [
    {
      guard: when ? and<RunContext, RunEvent, ["escalatesOutputLimit", "hasRequestLimiter"]>([when, "hasRequestLimiter"]) : "hasRequestLimiter",
      target: "#run.turn.requesting.awaitingRequestSlot",
      actions,
    },
    {
      guard: when ? and<RunContext, RunEvent, ["escalatesOutputLimit", "streamsTools"]>([when, "streamsTools"]) : "streamsTools",
      target: "#run.turn.requesting.streamingWithTools",
      reenter: true,
      actions,
    },
    { ...(when ? { guard: when } : {}), target: "#run.turn.requesting.streaming", reenter: true, actions },
  ] as const;
}

/** R4a: a next turn starts with prepareNextTurn when configured, and polls steering again when nothing is pending. */
function toNextTurn(when: Condition | undefined, repoll: boolean) {
  return [
    {
      guard: when ? and<RunContext, RunEvent, [Condition, "hasPrepareNextTurn"]>([when, "hasPrepareNextTurn"]) : "hasPrepareNextTurn",
      target: "#run.turn.preparingNextTurn",
    },
    ...(repoll
      ? [
          {
            guard: when ? and<RunContext, RunEvent, [Condition, "repollsSteering"]>([when, "repollsSteering"]) : "repollsSteering",
            target: "#run.turn.repollingSteering",
          } as const,
        ]
      : []),
    { ...(when ? { guard: when } : {}), ...openingTurn },
  ] as const;
}

/** R9, R10: after the turn and its steering poll, the inner loop continues, follow-ups are polled, or the run ends. */
const nextStep = (steering: boolean) =>
  [
    ...toNextTurn("continuesInnerLoop", steering),
    { guard: "hasGetFollowUpMessages", target: "#run.pollingFollowUps" },
    { guard: "decidedContinue", target: "#run.continuingAsDecided" },
    { target: "#run.done" },
  ] as const;

/**
 * R6, R7, R20, R28, R60–R62: what a response asks for, and how its tool batch runs. Taken on the
 * `requesting` state for both stream states (the reply comes only to the one that asked). R70:
 * in streaming mode the calls that started during the stream are answered on every route, ending
 * aborted (R72) unless the response's calls run on (`abortStreamedCalls` does nothing otherwise).
 */
const routeResponse = [
  // R60: a transient failure before content: back off, then another attempt.
  { guard: "retriesFailure", target: "#run.turn.requesting.schedulingRetry", actions: ["abortStreamedCalls", "recordRetryableFailure"] },
  // R62: the prompt overflowed: compact once, then the same request again.
  { guard: "compactsOverflow", target: "#run.turn.compactingOnOverflow", actions: ["abortStreamedCalls", { type: "startCompaction", params: { reason: "overflow" } }] },
  // R61: cut off by the output limit: discard it and ask again with the higher limit.
  { guard: and(["escalatesOutputLimit", "hasGetApiKey"]), target: "#run.turn.requesting.resolvingApiKey", actions: ["abortStreamedCalls", "escalateOutputLimit"] },
  ...toStreaming("escalatesOutputLimit", ["abortStreamedCalls", "escalateOutputLimit"]),
  // R72: an error or aborted response: calls still running are aborted, no result message.
  ...toTurnEnd("responseFailed", ["abortStreamedCalls", surfaceFailure, appendAssistant]),
  { guard: "responseTruncatesCalls", target: "#run.turn.rejectingTruncatedCalls", actions: [appendAssistant] },
  // R70, R71: the calls not yet known join the ones running; results once every call settled.
  {
    guard: and(["responseCallsTools", "streamsTools"]),
    target: "#run.turn.requesting.streamingWithTools.response.ended",
    actions: [appendAssistant, "closeStreamedBatch", "startCalls"],
  },
  {
    guard: and(["responseCallsTools", "responseRunsSequentially"]),
    target: "#run.turn.executingTools.preflightingCall",
    actions: [appendAssistant, { type: "startBatch", params: { mode: "sequential" } }],
  },
  {
    guard: "responseCallsTools",
    target: "#run.turn.executingTools.preflightingCalls",
    actions: [appendAssistant, { type: "startBatch", params: { mode: "parallel" } }],
  },
  ...toTurnEnd(undefined, ["abortStreamedCalls", appendAssistant]),
] as const;

/**
 * R70–R73: settles a streamed call (its actor stopped, its `tool_execution_end`, its outcome);
 * a call that settles while an aborted run's response still streams ends `Operation aborted` (R72).
 */
function settleStreamed(kind: "done" | "crashed") {
  const outcome = ({ event, context }: { event: RunEvent; context: RunContext }) => {
    const settled = kind === "done" ? (event as ToolDoneEvent).output : crashedCall(event as ToolErrorEvent, context);
    return context.aborted && !context.turn.batch!.streamed!.ended ? { index: settled.index, result: abortedResult(), isError: true, settledAt: settled.settledAt } : settled;
  };
  return [
    { type: "stopCall", params: ({ event }: { event: RunEvent }) => indexOfChild((event as ToolDoneEvent | ToolErrorEvent).actorId ?? "") },
    { type: "emitToolEnd", params: outcome },
    { type: "closeApproval", params: outcome },
    { type: "recordOutcome", params: outcome },
  ] as const;
}

/** R70, R71, R73: what the run does with its streamed calls, while the response streams and after. */
const streamedCallEvents = {
  "call.checked": { actions: ["recordCheck", "startCalls"] },
  // R82: a streamed call waits for approval (its id issued here; decisions reach it from `turn`).
  "call.approvalNeeded": { actions: "requestStreamedApproval" },
  "xstate.done.actor.*": [
    // R73: its tool cancels on error: running calls are cancelled, calls not started are not run.
    // (Not once an aborted run's response still streams: the call then ends Operation aborted, R72.)
    { guard: "cancelsStreamedSiblings", actions: [...settleStreamed("done"), "cancelStreamedCalls"] },
    { actions: [...settleStreamed("done"), "startCalls"] },
  ],
  "xstate.error.actor.*": { actions: [...settleStreamed("crashed"), "startCalls"] },
} as const;

export const runMachine = setup({
  types: {
    input: {} as RunInput,
    context: {} as RunContext,
    events: {} as RunEvent,
    output: {} as AgentMessage[],
    emitted: {} as AnyAgentEvent,
  },
  actors: {
    /** The run's step worker (`steps.ts`): runs each step's job and replies. Provided by the runtime. */
    steps: getPlaceholderFor<() => StepWorkerLogic>("steps"),
    toolCall: toolCallMachine,
  },
  actions: {
    requestStep: sendTo("steps", ({ context, event, self }, { job }: { job: RunStepName }) =>
      stepRequest(job, runStepInput[job](context) as never, self, event.type === "step.reissue"),
    ),
    cancelStep: enqueueActions(({ event, self, enqueue }) => {
      if (!isStepReply(event)) enqueue.sendTo("steps", { type: "step.cancel", replyTo: self });
    }),
    // R13: a restored run asks again for the job of the step it was waiting in.
    reissueStep: enqueueActions(({ context, self, enqueue }) => {
      const job = currentStep<RunStepName>(self);
      if (job) enqueue.sendTo("steps", stepRequest(job, runStepInput[job](context) as never, self, true));
      // R13, R70: a call.start may have been in flight at the snapshot: each started call is told
      // again (a call past waitingToStart ignores it).
      const streamed = context.turn.batch?.streamed;
      if (!streamed) return;
      context.turn.batch!.outcomes.forEach((outcome, index) => {
        if (outcome === null && streamed.started[index]) enqueue.sendTo(toolChildId(index), { type: "call.start", streaming: !streamed.ended });
      });
    }),
    // R29: the signal of every job, running or to come, aborts; the run winds down on its own.
    markAborted: assign({ aborted: true }),
    abortSteps: sendTo("steps", { type: "run.abort" }),
    // R80: a decision is an external input, journaled where the run takes it (before the call it frees asks for anything).
    reportDecision: sendTo("steps", ({ event }) => ({ type: "run.decided", decision: event as RunApprovalEvent })),
    // R1, R2, R30: agent_start, and the transcript's declared tools, replayed once per run.
    startRun: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: "agent_start" });
      const declared = new Map<string, string>();
      applySystemMessages(declared, context.messages);
      enqueue.assign({ declared: [...declared] });
    }),
    // R1, R4a: turn_start, and a fresh turn (see `openTurn`).
    emitTurnStart: emit({ type: "turn_start" }),
    markTurnOpen: assign({ turn: () => ({ ...closedTurn, open: true }) }),
    // R1, R4b, R30: declare tool changes, then inject prepared and pending messages with their events.
    injectPending: enqueueActions(({ context, event, enqueue }, params?: { promptsOnly: boolean }) => {
      // R1: prompts are injected at once; a continue run (R2) declares tools with its first request.
      if (params?.promptsOnly && context.settings.mode !== "prompt") return;
      const pending = context.prepared.length === 0 ? context.pending : context.prepared.concat(context.pending);
      const declared = new Map(context.declared);
      const now = timeOf(event as { type: string }, context.startedAt);
      const injected = declareToolChanges({ transcriptDeclared: declared, pending, tools: context.toolSet.tools, now });
      if (injected.length === 0) {
        if (context.pending.length > 0 || context.prepared.length > 0) enqueue.assign({ pending: [], prepared: [] });
        return;
      }
      applySystemMessages(declared, injected);
      for (const message of injected) {
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
      }
      enqueue.assign({ declared: [...declared], pending: [], prepared: [], ...appended(context, injected) });
    }),
    queuePending: assign(({ context }, messages: AgentMessage[]) => ({
      pending: messages.length === 0 ? context.pending : context.pending.concat(messages),
    })),
    // R4a, R4c: a hook's replacement context, model, thinking level and messages.
    applyUpdate: assign(({ context }, update: TurnUpdate) => {
      const next: Partial<RunContext> = {};
      if (update.messages) {
        next.messages = update.messages;
        const declared = new Map<string, string>();
        applySystemMessages(declared, update.messages);
        next.declared = [...declared];
      }
      if (update.toolSet) next.toolSet = update.toolSet;
      if (update.model) next.model = update.model;
      if (update.thinkingLevel) next.thinkingLevel = update.thinkingLevel;
      if (update.prepared && update.prepared.length > 0) next.prepared = context.prepared.concat(update.prepared);
      return next;
    }),
    // R40: what transformContext returned is what the request converts.
    recordTransformed: assign({ request: ({ event }) => ({ messages: reply(event, "transformContext"), llmMessages: null }) }),
    // R40: only provider messages, in order, reach the stream function.
    recordConverted: assign({ request: ({ event }) => ({ messages: null, llmMessages: normalizeTranscript(reply(event, "convertToLlm")) }) }),
    // R5, R41: one assistant message per request, appended; the request's recovery state ends with it.
    appendAssistant: assign(({ context }, message: AssistantMessage) => ({
      turn: { ...context.turn, assistant: message },
      request: { messages: null, llmMessages: null },
      recovery: settledRequest(context.recovery, message),
      ...appended(context, [message]),
    })),
    // R60, R62: the failure nothing recovered is emitted after all.
    surfaceWithheld: enqueueActions(({ context, enqueue }, { message, withheld, failure }: StreamedResponse) => {
      if (!withheld) return;
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      if (failure?.contextOverflow && context.settings.recovery.compact !== null) enqueue.assign({ recovery: { ...context.recovery, overflowed: true } });
    }),
    // R60: the attempt failed before content; it leaves nothing in the transcript.
    recordRetryableFailure: assign(({ context, event }) => {
      const { message, failure } = streamed(event);
      const overloads = failure!.kind === "overloaded" ? context.recovery.overloads + 1 : 0;
      return { recovery: { ...context.recovery, failedAttempts: context.recovery.failedAttempts + 1, overloads, retry: { failure: failure!, message, until: null } } };
    }),
    // R60: the wait ends `max(backoff, retry-after)` after now; after repeated overloads, the fallback model.
    scheduleRetry: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, "step.drawBackoff.done");
      const retry = context.recovery.retry!;
      const settings = context.settings.recovery.retry!;
      const delayMs = Math.max(event.output, retry.failure.afterMs ?? 0);
      const fallback = settings.fallbackModel !== null && context.recovery.overloads >= settings.overloadsBeforeFallback ? settings.fallbackModel : null;
      const model = fallback ?? context.model;
      enqueue.assign({ model, recovery: { ...context.recovery, retry: { ...retry, until: event.at + delayMs } } });
      enqueue.emit({
        type: "retry_scheduled",
        attempt: context.recovery.failedAttempts + 1,
        maxAttempts: settings.maxAttempts,
        delayMs,
        kind: retry.failure.kind,
        errorMessage: retry.message.errorMessage ?? "",
        model: model.id,
      });
    }),
    // R60, R29: aborted while waiting: the request ends as aborted (the withheld failure is not shown).
    surfaceAbortedRetry: enqueueActions(({ context, event, enqueue }) => {
      const message: AssistantMessage = {
        ...context.recovery.retry!.message,
        stopReason: "aborted",
        errorMessage: "Operation aborted",
        timestamp: timeOf(event as { type: string }, context.startedAt),
      };
      delete message.retry;
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({
        turn: { ...context.turn, assistant: message },
        request: { messages: null, llmMessages: null },
        recovery: settledRequest(context.recovery, message),
        ...appended(context, [message]),
      });
    }),
    // R61: the truncated response was closed (message_end); it is discarded and asked for again.
    escalateOutputLimit: enqueueActions(({ context, event, enqueue }) => {
      const message = response(event);
      const toMaxTokens = escalatedLimit(context, message)!;
      enqueue.emit({ type: "message_discarded", message, reason: "output_limit_escalated" });
      enqueue.emit({ type: "output_limit_escalated", fromMaxTokens: context.settings.recovery.requestMaxTokens ?? undefined, toMaxTokens });
      enqueue.assign({ recovery: { ...context.recovery, maxTokens: toMaxTokens } });
    }),
    // R61: consecutive truncated answers; the count resets with any answer that was not cut off.
    countTruncations: enqueueActions(({ context, enqueue }) => {
      // (Assigned only when it changes: every assign copies the context.)
      if (context.recovery.recoveries === 0 || endedTruncated(context)) return;
      enqueue.assign({ recovery: { ...context.recovery, recoveries: 0 } });
    }),
    // R61: the recovery message, marked as the loop's, waits for the next turn like steering.
    queueRecoveryMessage: enqueueActions(({ context, enqueue }) => {
      const limit = context.settings.recovery.outputLimit!;
      const attempt = context.recovery.recoveries + 1;
      const message: UserMessage = { role: "user", content: limit.prompt, timestamp: context.turn.assistant!.timestamp, recovery: "output_limit" };
      enqueue.emit({ type: "output_limit_recovery", attempt, maxRecoveries: limit.maxRecoveries });
      enqueue.assign({ pending: context.pending.concat(message), recovery: { ...context.recovery, recoveries: attempt } });
    }),
    startCompaction: assign(({ context, event }, { reason }: { reason: "overflow" | "threshold" }) => ({
      recovery: { ...context.recovery, compaction: reason, overflow: reason === "overflow" ? response(event) : null },
    })),
    // R62: the overflow nothing could shrink ends the request (and the run, prompt_too_long).
    surfaceOverflow: enqueueActions(({ context, enqueue }) => {
      const message = context.recovery.overflow!;
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({
        turn: { ...context.turn, assistant: message },
        request: { messages: null, llmMessages: null },
        recovery: { ...settledRequest(context.recovery, message), compaction: null, overflow: null, overflowed: true },
        ...appended(context, [message]),
      });
    }),
    // R62: the compacted transcript replaces the run's; what the run added starts again from it.
    // (A compactor that found nothing to compact replaces nothing; the request goes on.)
    replaceTranscript: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, "step.compact.done");
      const reason = context.recovery.compaction ?? "overflow";
      const replacement = event.output;
      // A proactive compaction that leaves the transcript above the threshold is not tried again this run (no thrashing).
      const threshold = context.settings.recovery.compact?.thresholdTokens ?? null;
      const proactiveOff =
        context.recovery.proactiveOff ||
        (reason === "threshold" && (replacement === null || estimateTokens(replacement, { usageFrom: replacement.length }) > (threshold ?? Infinity)));
      const recovery = { ...context.recovery, compaction: null, overflow: null, compacted: context.recovery.compacted || reason === "overflow", proactiveOff };
      if (replacement === null) return void enqueue.assign({ recovery });
      const declared = new Map<string, string>();
      applySystemMessages(declared, replacement);
      enqueue.emit({ type: "transcript_replaced", messages: replacement, reason });
      // R30: tools the replacement no longer declares (a compactor dropped their system message) are declared again.
      const redeclared = declareToolChanges({ transcriptDeclared: declared, pending: [], tools: context.toolSet.tools, now: event.at });
      applySystemMessages(declared, redeclared);
      for (const message of redeclared) {
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
      }
      const messages = redeclared.length === 0 ? replacement : replacement.concat(redeclared);
      enqueue.assign({
        messages,
        newMessages: redeclared,
        declared: [...declared],
        request: { messages: null, llmMessages: null },
        recovery: { ...recovery, compactedLength: replacement.length },
      });
    }),
    // R28: a truncated response's calls are rejected, never executed.
    rejectTruncatedCalls: enqueueActions(({ context, event, self, enqueue }) => {
      const at = timeOf(event as { type: string }, context.startedAt);
      const results: ToolResultMessage[] = [];
      // R72: in streaming mode, started calls are aborted with R28's text (no second start); a call
      // that already settled keeps its outcome (it ran: its end went out with it).
      const streamed = context.turn.batch?.streamed ? context.turn.batch : null;
      for (const [index, call] of toolCallsOf(context.turn.assistant!).entries()) {
        const settled = streamed?.outcomes[index];
        if (settled) {
          const message = toolResultMessage(call, settled.result, settled.isError, settled.durationMs, settled.settledAt);
          enqueue.emit({ type: "message_start", message });
          enqueue.emit({ type: "message_end", message });
          results.push(message);
          continue;
        }
        const result = truncatedCallResult(call);
        const started = streamed?.streamed!.started[index] === true;
        if (streamed && index < streamed.calls.length) discardCall(enqueue, self, index);
        if (started) {
          enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
          const message = toolResultMessage(call, result, true, undefined, at);
          enqueue.emit({ type: "message_start", message });
          enqueue.emit({ type: "message_end", message });
          results.push(message);
          continue;
        }
        enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
        enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
        const message = toolResultMessage(call, result, true, undefined, at);
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        results.push(message);
      }
      enqueue.assign({ turn: { ...context.turn, toolResults: results, ...(streamed ? { batch: { ...streamed, streamed: { ...streamed.streamed!, ended: true } } } : {}) }, ...appended(context, results) });
    }),
    startBatch: assign(({ context }, { mode }: { mode: ToolBatch["mode"] }) => {
      const calls = toolCallsOf(context.turn.assistant!);
      return { turn: { ...context.turn, batch: { calls, mode, cursor: 0, outcomes: calls.map(() => null) } } };
    }),
    // R21, R25: the preflight's immediate results (their tool_execution_end was emitted by the step).
    recordImmediateResults: assign(({ context, event }) => {
      const batch = context.turn.batch!;
      const preflights = reply(event, "preflightCalls");
      if (preflights.every((preflight) => preflight.ready)) return {};
      const outcomes = batch.outcomes.slice();
      for (const preflight of preflights) {
        if (!preflight.ready) outcomes[preflight.index] = { index: preflight.index, result: preflight.result, isError: true, settledAt: preflight.settledAt };
      }
      return { turn: { ...context.turn, batch: { ...batch, outcomes } } };
    }),
    // R22, R25: every call that passed its preflight executes now, each in its own actor.
    spawnPassedCalls: enqueueActions(({ context, event, enqueue }) => {
      const batch = context.turn.batch!;
      const startedAt = timeOf(event as { type: string }, context.startedAt);
      const { afterToolCall } = context.settings.hooks;
      let approval = context.approval;
      for (const preflight of reply(event, "preflightCalls")) {
        if (!preflight.ready) continue;
        const toolCall = batch.calls[preflight.index];
        const input: ToolCallInput = { index: preflight.index, toolCall, args: preflight.args, afterToolCall, startedAt };
        // R82: it waits for approval (an aborted run asks nobody: the call gets R29's result).
        if (preflight.approval && !context.aborted) {
          const request = { approvalId: `${approval.idPrefix}${approval.issued + 1}`, toolCallId: toolCall.id, toolName: toolCall.name, args: preflight.args, reason: preflight.approval.reason };
          approval = { ...approval, issued: approval.issued + 1, pending: approval.pending.concat({ ...request, index: preflight.index }) };
          input.approval = { approvalId: request.approvalId, reason: request.reason };
          enqueue.emit({ type: "tool_approval_requested", ...request });
        }
        enqueue.spawnChild("toolCall", { id: toolChildId(preflight.index), input });
      }
      if (approval !== context.approval) enqueue.assign({ approval });
    }),
    // R82: approved: the call executes (with the replacement arguments, validated again); `always`
    // adds a rule for the rest of the run, which also approves the batch's other waiting calls it covers.
    approveCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, "approval.approve");
      const entry = context.approval.pending.find((pending) => pending.approvalId === event.approvalId)!;
      const rule = event.always ? ruleOf(entry.toolName, event.always) : undefined;
      const approved = rule ? context.approval.pending.filter((pending) => pending === entry || ruleAllows(rule, pending.toolName, pending.args)) : [entry];
      const replaced = event.args !== undefined ? { args: event.args } : {};
      for (const pending of approved) {
        const own = pending === entry ? replaced : {};
        enqueue.emit({ type: "tool_approval_resolved", approvalId: pending.approvalId, toolCallId: pending.toolCallId, decision: "approved", ...own });
        enqueue.sendTo(toolChildId(pending.index), { type: "approval.approve", approvalId: pending.approvalId, ...own, ...(event.at !== undefined ? { at: event.at } : {}) });
      }
      enqueue.assign({
        approval: {
          ...context.approval,
          pending: context.approval.pending.filter((pending) => !approved.includes(pending)),
          rules: rule ? withRule(context.approval.rules, rule) : context.approval.rules,
        },
      });
    }),
    // R82: rejected: the call settles with an error result carrying the reason.
    rejectCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, "approval.reject");
      const entry = context.approval.pending.find((pending) => pending.approvalId === event.approvalId)!;
      enqueue.emit({ type: "tool_approval_resolved", approvalId: entry.approvalId, toolCallId: entry.toolCallId, decision: "rejected", reason: event.reason });
      enqueue.sendTo(toolChildId(entry.index), { type: "approval.reject", approvalId: entry.approvalId, reason: event.reason, ...(event.at !== undefined ? { at: event.at } : {}) });
      enqueue.assign({ approval: { ...context.approval, pending: context.approval.pending.filter((pending) => pending !== entry) } });
    }),
    // R82, R29: an abort settles every waiting call at once (each reports back as it settles).
    abortApprovals: enqueueActions(({ context, enqueue }) => {
      for (const pending of context.approval.pending) enqueue.sendTo(toolChildId(pending.index), { type: "approval.abort" });
    }),
    // R82: a waiting call that settled without a decision (aborted, or cancelled by a sibling, R73) is resolved as rejected.
    closeApproval: enqueueActions(({ context, enqueue }, outcome: ToolCallOutcome) => {
      if (context.approval.pending.length === 0) return;
      const entry = context.approval.pending.find((pending) => pending.index === outcome.index);
      if (!entry) return;
      const reason = outcome.result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
      enqueue.emit({ type: "tool_approval_resolved", approvalId: entry.approvalId, toolCallId: entry.toolCallId, decision: "rejected", reason });
      enqueue.assign({ approval: { ...context.approval, pending: context.approval.pending.filter((pending) => pending !== entry) } });
    }),
    // R82, R70: a streamed call's preflight asked for approval: its id, and the request (an
    // aborted run asks nobody: the call settles with R29's result).
    requestStreamedApproval: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, "call.approvalNeeded");
      // R13: a restored call reports again; its id was issued already.
      if (context.approval.pending.some((pending) => pending.index === event.index)) return;
      if (context.aborted) return void enqueue.sendTo(toolChildId(event.index), { type: "approval.abort" });
      const toolCall = context.turn.batch!.calls[event.index];
      const { approval } = context;
      const request = { approvalId: `${approval.idPrefix}${approval.issued + 1}`, toolCallId: toolCall.id, toolName: toolCall.name, args: event.args, reason: event.reason };
      enqueue.assign({ approval: { ...approval, issued: approval.issued + 1, pending: approval.pending.concat({ ...request, index: event.index }) } });
      enqueue.emit({ type: "tool_approval_requested", ...request });
    }),
    // ── R70–R73: tools that start while the model streams ─────────────────────────────────────
    // A call whose toolcall_end arrived: its own actor checks it (a call re-reported by a stream
    // re-issued after a restore, R13, is already known).
    spawnStreamedCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, "stream.toolCallReady");
      const batch = context.turn.batch?.streamed ? context.turn.batch : emptyStreamedBatch();
      if (event.index !== batch.calls.length) return;
      const next = withStreamedCalls(batch, [event.toolCall]);
      const cancelled = cancelledOutcome(next, event.index, event.at);
      if (cancelled) {
        emitCancelledStart(enqueue, event.toolCall, cancelled);
        return void enqueue.assign({ turn: { ...context.turn, batch: settledStreamed(next, cancelled) } });
      }
      enqueue.assign({ turn: { ...context.turn, batch: next } });
      enqueue.spawnChild("toolCall", { id: toolChildId(event.index), input: streamedCallInput(context, event.toolCall, event.index, event.partialMessage, event.at) });
    }),
    // R70: the response ended: its calls not yet known get their actors; every call is known now.
    closeStreamedBatch: enqueueActions(({ context, event, enqueue }) => {
      const message = context.turn.assistant!;
      const calls = toolCallsOf(message);
      const batch = context.turn.batch?.streamed ? context.turn.batch : emptyStreamedBatch();
      const known = batch.calls.length;
      let closed = withStreamedCalls(batch, calls.slice(known));
      const at = timeOf(event as { type: string }, context.startedAt);
      for (let index = known; index < calls.length; index++) {
        const cancelled = cancelledOutcome(closed, index, at);
        if (cancelled) {
          emitCancelledStart(enqueue, calls[index], cancelled);
          closed = settledStreamed(closed, cancelled);
        } else enqueue.spawnChild("toolCall", { id: toolChildId(index), input: streamedCallInput(context, calls[index], index, message, at) });
      }
      enqueue.assign({ turn: { ...context.turn, batch: { ...closed, streamed: { ...closed.streamed!, ended: true } } } });
    }),
    recordCheck: assign(({ context, event }) => {
      assertEvent(event, "call.checked");
      const batch = context.turn.batch!;
      const safe = batch.streamed!.safe.slice();
      safe[event.index] = event.safe;
      return { turn: { ...context.turn, batch: { ...batch, streamed: { ...batch.streamed!, safe } } } };
    }),
    // R70: the calls that may start now, in source order: tool_execution_start, then the call's own preflight.
    startCalls: enqueueActions(({ context, enqueue }) => {
      const batch = context.turn.batch!;
      const streamed = batch.streamed!;
      // R72: once the run is aborted, a call that had not started while the response streams never does.
      if (context.aborted && !streamed.ended) return;
      const starting = callsToStart(batch, context.settings.streamingTools!.maxConcurrent);
      if (starting.length === 0) return;
      const started = streamed.started.slice();
      for (const index of starting) {
        const call = batch.calls[index];
        started[index] = true;
        enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
        enqueue.sendTo(toolChildId(index), { type: "call.start", streaming: !streamed.ended });
      }
      enqueue.assign({ turn: { ...context.turn, batch: { ...batch, streamed: { ...streamed, started } } } });
    }),
    // R73: running calls settle as cancelled (their actors reply); calls not started are not run.
    cancelStreamedCalls: enqueueActions(({ context, event, self, enqueue }) => {
      const { output } = event as ToolDoneEvent;
      let batch = context.turn.batch!;
      const failedTool = batch.calls[output.index].name;
      const result = siblingCancelledResult(failedTool);
      batch.outcomes.forEach((outcome, index) => {
        if (outcome !== null) return;
        const call = batch.calls[index];
        if (batch.streamed!.started[index]) return void enqueue.sendTo(toolChildId(index), { type: "call.cancel", failedTool, at: output.settledAt });
        discardCall(enqueue, self, index);
        const cancelled = { index, result, isError: true, settledAt: output.settledAt };
        emitCancelledStart(enqueue, call, cancelled);
        batch = settledStreamed(batch, cancelled);
      });
      enqueue.assign({ turn: { ...context.turn, batch: { ...batch, streamed: { ...batch.streamed!, cancelledBy: failedTool } } } });
    }),
    // R72 (and whenever the response is not answered with its calls): every call still running is
    // aborted; a started call's tool_execution_end carries `Operation aborted`; no result message.
    abortStreamedCalls: enqueueActions(({ context, event, self, enqueue }) => {
      const batch = context.turn.batch;
      if (!batch?.streamed) return;
      const at = timeOf(event as { type: string }, context.startedAt);
      let next = batch;
      const discarded = new Set<number>();
      batch.outcomes.forEach((outcome, index) => {
        if (outcome !== null) return;
        discardCall(enqueue, self, index);
        discarded.add(index);
        if (!batch.streamed!.started[index]) return;
        const call = batch.calls[index];
        enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: abortedResult(), isError: true });
        next = settledStreamed(next, { index, result: abortedResult(), isError: true, settledAt: at });
      });
      // R82: a discarded call that waited for approval is resolved as rejected.
      const closed = context.approval.pending.filter((pending) => discarded.has(pending.index));
      for (const pending of closed) {
        enqueue.emit({ type: "tool_approval_resolved", approvalId: pending.approvalId, toolCallId: pending.toolCallId, decision: "rejected", reason: ABORTED_TEXT });
      }
      if (closed.length) enqueue.assign({ approval: { ...context.approval, pending: context.approval.pending.filter((pending) => !closed.includes(pending)) } });
      enqueue.assign({ turn: { ...context.turn, batch: { ...next, streamed: { ...next.streamed!, ended: true } } } });
    }),
    // ── end of R70–R73 ─────────────────────────────────────────────────────────────────────────
    // R73: every call of the parallel batch still running settles as cancelled (its actor replies).
    cancelRunningCalls: enqueueActions(({ context, event, enqueue }) => {
      const { output } = event as ToolDoneEvent;
      const batch = context.turn.batch!;
      const cancel = { type: "call.cancel", failedTool: batch.calls[output.index].name, at: output.settledAt } as const;
      batch.outcomes.forEach((outcome, index) => {
        if (outcome === null) enqueue.sendTo(toolChildId(index), cancel);
      });
    }),
    // R73: the sequential batch's later calls are not run: each gets its start, the cancelled result and its message.
    cancelLaterCalls: enqueueActions(({ context, event, enqueue }) => {
      const { output } = event as ToolDoneEvent;
      const batch = context.turn.batch!;
      const result = siblingCancelledResult(batch.calls[output.index].name);
      const outcomes = batch.outcomes.slice();
      const messages: ToolResultMessage[] = [];
      for (let index = batch.cursor + 1; index < batch.calls.length; index++) {
        const call = batch.calls[index];
        outcomes[index] = { index, result, isError: true, settledAt: output.settledAt };
        const message = toolResultMessage(call, result, true, undefined, output.settledAt);
        enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
        enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        messages.push(message);
      }
      enqueue.assign({
        turn: { ...context.turn, batch: { ...batch, outcomes, cursor: batch.calls.length - 1 }, toolResults: context.turn.toolResults.concat(messages) },
        ...appended(context, messages),
      });
    }),
    // R24: the next call of a sequential batch.
    advanceCursor: assign(({ context }) => {
      const batch = context.turn.batch!;
      return { turn: { ...context.turn, batch: { ...batch, cursor: batch.cursor + 1 } } };
    }),
    // R22, R26: the call's actor is stopped as soon as it settled (bounded children).
    stopCall: stopChild((_, index: number) => toolChildId(index)),
    // R22, R25: tool_execution_end as soon as the call settled (immediate results at once).
    emitToolEnd: emit(({ context }, outcome: ToolCallOutcome) => {
      const call = context.turn.batch!.calls[outcome.index];
      return {
        type: "tool_execution_end",
        toolCallId: call.id,
        toolName: call.name,
        result: outcome.result,
        isError: outcome.isError,
        ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      };
    }),
    // R26: one finalized outcome per call.
    recordOutcome: assign(({ context }, outcome: ToolCallOutcome) => {
      const batch = context.turn.batch!;
      const outcomes = batch.outcomes.slice();
      outcomes[outcome.index] = outcome;
      return { turn: { ...context.turn, batch: { ...batch, outcomes } } };
    }),
    // R24: a sequential call's result message, before the next call starts.
    appendResult: enqueueActions(({ context, enqueue }, outcome: ToolCallOutcome) => {
      const message = resultMessage(context, outcome);
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({ turn: { ...context.turn, toolResults: context.turn.toolResults.concat(message) }, ...appended(context, [message]) });
    }),
    // R25: parallel result messages in source order, after every call finished.
    appendResults: enqueueActions(({ context, enqueue }) => {
      const batch = context.turn.batch!;
      const messages: ToolResultMessage[] = [];
      for (let i = 0; i < batch.calls.length; i++) {
        const message = resultMessage(context, batch.outcomes[i]!);
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        messages.push(message);
      }
      enqueue.assign({ turn: { ...context.turn, toolResults: context.turn.toolResults.concat(messages) }, ...appended(context, messages) });
    }),
    recordDecision: assign({ turn: ({ context, event }) => ({ ...context.turn, decision: reply(event, "finishTurn") }) }),
    emitTurnEnd: emit(({ context }) => ({ type: "turn_end", message: context.turn.assistant!, toolResults: context.turn.toolResults })),
    markTurnClosed: assign({ turn: ({ context }) => ({ ...context.turn, open: false }) }),
    // R63: what the completed turn used.
    countTurn: assign({
      spent: ({ context }) => {
        const { tokens, cost } = turnSpend(context.turn);
        return { turns: context.spent.turns + 1, tokens: context.spent.tokens + tokens, cost: context.spent.cost + cost };
      },
    }),
    // R63: why the run ends.
    endAs: assign((_, { reason }: { reason: AgentEndReason }) => ({ endReason: reason })),
    // R62: a second overflow surfaces as prompt_too_long.
    endAsFailedResponse: assign({
      endReason: ({ context }) => (context.turn.assistant?.stopReason === "aborted" ? "aborted" : context.recovery.overflowed ? "prompt_too_long" : "error"),
    }),
    endForBudget: assign({ endReason: ({ context }) => budgetExceeded(context) ?? "completed" }),
    recordFailure: assign(({ context, event }) => {
      assertEvent(event, "step.failed");
      const error = event.error;
      // A stream that threw after `start` closed its partial itself; it belongs to the run.
      const partial = error && typeof error === "object" && "partial" in error ? (error.partial as AssistantMessage) : undefined;
      return { failure: errorText(error), ...(partial ? appended(context, [partial]) : {}) };
    }),
    // R56: an assistant failure message, then turn_end (opening a turn first if none is open).
    // R67: an abandoned step ends the run aborted, after a result for each call it had started (R55).
    emitFailure: enqueueActions(({ context, event, enqueue }) => {
      const at = timeOf(event as { type: string }, context.startedAt);
      const abandoned = abandonedStepOf(event);
      const answered = abandoned ? answerStartedCalls(context.turn, abandoned, at) : { events: [], messages: [] };
      for (const answer of answered.events) enqueue.emit(answer);
      if (!context.turn.open) enqueue.emit({ type: "turn_start" });
      const message = failureMessage(context, context.failure ?? "Unknown failure", at, abandoned ? "aborted" : "error");
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.emit({ type: "turn_end", message, toolResults: [] });
      enqueue.assign({
        turn: { ...context.turn, assistant: message, open: false },
        endReason: abandoned ? "aborted" : "error",
        ...appended(context, [...answered.messages, message]),
      });
    }),
    emitAgentEnd: emit(({ context }) => ({ type: "agent_end", messages: context.newMessages, reason: context.endReason })),
  },
  guards: {
    pollsInitialSteering: ({ context }) => context.settings.hooks.getSteeringMessages && !context.settings.skipInitialSteeringPoll,
    hasPrepareNextTurn: ({ context }) => context.settings.hooks.prepareNextTurn,
    // R4a: steering is polled again when nothing is pending.
    repollsSteering: ({ context }) => context.settings.hooks.getSteeringMessages && context.pending.length === 0,
    hasPrepareRequest: ({ context }) => context.settings.hooks.prepareRequest,
    hasTransformContext: ({ context }) => context.settings.hooks.transformContext,
    hasGetApiKey: ({ context }) => context.settings.hooks.getApiKey,
    hasRequestLimiter: ({ context }) => context.settings.hooks.requestLimiter,
    hasFinishTurn: ({ context }) => context.settings.hooks.finishTurn,
    hasGetSteeringMessages: ({ context }) => context.settings.hooks.getSteeringMessages,
    hasGetFollowUpMessages: ({ context }) => context.settings.hooks.getFollowUpMessages,
    isErrorOrAborted: ({ context }) => isFailedResponse(context.turn.assistant),
    // Decided on the response itself, before its transition appends it.
    responseFailed: ({ event }) => isFailedResponse(response(event)),
    responseTruncatesCalls: ({ event }) => {
      const message = response(event);
      return message.stopReason === "length" && toolCallsOf(message).length > 0;
    },
    responseCallsTools: ({ event }) => toolCallsOf(response(event)).length > 0,
    responseRunsSequentially: ({ context, event }) => runsSequentially(context, toolCallsOf(response(event))),
    // R60: a transient failure before content, with attempts left.
    retriesFailure: ({ context, event }) => {
      const { withheld, failure } = streamed(event);
      const retry = context.settings.recovery.retry;
      return retry !== null && withheld && failure !== null && failure.retryable && !context.aborted && context.recovery.failedAttempts + 1 < retry.maxAttempts;
    },
    // R62: the prompt overflowed the window and this request has not compacted yet.
    compactsOverflow: ({ context, event }) => {
      const { withheld, failure } = streamed(event);
      return context.settings.recovery.compact !== null && withheld && failure?.contextOverflow === true && !context.recovery.compacted && !context.aborted;
    },
    // R61: truncated, no tool calls, and a higher limit to ask for once.
    escalatesOutputLimit: ({ context, event }) => {
      const message = response(event);
      return message.stopReason === "length" && toolCallsOf(message).length === 0 && !context.aborted && escalatedLimit(context, message) !== undefined;
    },
    // R62: proactive compaction at a turn boundary.
    exceedsCompactThreshold: ({ context }) => {
      const threshold = context.settings.recovery.compact?.thresholdTokens ?? null;
      return threshold !== null && !context.aborted && !context.recovery.proactiveOff && estimatedTokens(context) > threshold;
    },
    // R62: the compactor returned the transcript as it was.
    foundNothingToCompact: ({ event }) => reply(event, "compact") === null,
    // R61: the turn's answer was cut off without calls; recover, or give up after maxRecoveries.
    recoversOutputLimit: ({ context }) => {
      const limit = context.settings.recovery.outputLimit;
      return limit !== null && endedTruncated(context) && context.recovery.recoveries < limit.maxRecoveries;
    },
    outputLimitExhausted: ({ context }) => context.settings.recovery.outputLimit !== null && endedTruncated(context),
    isAborted: ({ context }) => context.aborted,
    // R73: the call's own execute failed and its tool cancels the rest of the batch.
    cancelsSiblings: ({ context, event }) => {
      const outcome = (event as ToolDoneEvent).output;
      return outcome.executionFailed === true && context.toolSet.siblingCancellingTools.includes(context.turn.batch!.calls[outcome.index].name);
    },
    cancelsLaterCalls: and(["cancelsSiblings", "hasLaterCall"]),
    // R73 in streaming mode, but R72 first: a call aborted while its response streams cancels nothing.
    cancelsStreamedSiblings: and(["cancelsSiblings", not(({ context }) => context.aborted && context.turn.batch?.streamed?.ended === false)]),
    // R70: streaming mode is on.
    streamsTools: ({ context }) => context.settings.streamingTools !== null,
    // R71: every call of the streamed batch settled (results follow in source order).
    settledEveryCall: ({ context }) => context.turn.batch!.outcomes.every((outcome) => outcome !== null),
    // R24: does a sequential batch have a call after the one in progress?
    hasLaterCall: ({ context }) => context.turn.batch!.cursor + 1 < context.turn.batch!.calls.length,
    // R21: every call the preflight saw ended with an immediate result (nothing to execute).
    preflightPassesNoCall: ({ event }) => reply(event, "preflightCalls").every((preflight) => !preflight.ready),
    // Decided before the transition's actions settle the call: is this the batch's last outstanding call?
    settlesLastCall: ({ context }) => context.turn.batch!.outcomes.filter((outcome) => outcome === null).length === 1,
    decidedEnd: ({ context }) => context.turn.decision === "end",
    // R63: completed turns, tokens or cost at a limit.
    budgetReached: ({ context }) => budgetExceeded(context) !== undefined,
    // R9, R27: tool results to answer (unless every result terminates) or pending steering.
    continuesInnerLoop: or([and(["hasToolResults", not("everyResultTerminates")]), "hasPendingMessages"]),
    hasToolResults: ({ context }) => context.turn.toolResults.length > 0,
    // R27: every finalized result of the batch says `terminate`.
    everyResultTerminates: ({ context }) => batchTerminates(context.turn.batch),
    hasPendingMessages: ({ context }) => context.pending.length > 0,
    receivedFollowUps: ({ context }) => context.pending.length > 0,
    // R10, R11: an explicit continue asks for exactly one more request.
    decidedContinue: ({ context }) => context.turn.decision === "continue",
    // R82: the decision is for a call that waits for it.
    isWaitingApproval: ({ context, event }) => {
      assertEvent(event, ["approval.approve", "approval.reject"]);
      return context.approval.pending.some((pending) => pending.approvalId === event.approvalId);
    },
  },
}).createMachine({
  id: "run",
  context: ({ input }) => initialRunContext(input),
  invoke: { id: "steps", src: "steps" },
  on: {
    // R56: any step that fails (a hook, conversion or the stream function threw) ends the run.
    "step.failed": { target: ".failing", actions: "recordFailure" },
    "run.abort": { actions: ["markAborted", "abortSteps", "abortApprovals"] },
    "step.reissue": { actions: "reissueStep" },
    // R82: a decision reaches its waiting call wherever the call waits (a batch's, or a streamed
    // call's, during the stream or after); an id that is not waiting is ignored.
    "approval.approve": { guard: "isWaitingApproval", actions: ["reportDecision", "approveCall"] },
    "approval.reject": { guard: "isWaitingApproval", actions: ["reportDecision", "rejectCall"] },
  },
  initial: "starting",
  states: {
    // R1, R2: agent_start, turn_start, then the prompts (after R30).
    starting: {
      entry: ["startRun", ...openTurn, { type: "injectPending", params: { promptsOnly: true } }],
      always: [{ guard: "pollsInitialSteering", target: "pollingInitialSteering" }, { target: "turn.injectingMessages" }],
    },
    // R3: steering is polled once at run start.
    pollingInitialSteering: {
      ...step("getSteeringMessages"),
      on: { "step.getSteeringMessages.done": { target: "turn.injectingMessages", actions: queueFrom("getSteeringMessages") } },
    },
    turn: {
      initial: "injectingMessages",
      states: {
        // R4a: the completed turn may replace context, model, thinking level, or add messages.
        preparingNextTurn: {
          ...step("prepareNextTurn"),
          on: {
            // R4a: steering is polled again when nothing is pending.
            "step.prepareNextTurn.done": [
              { guard: "repollsSteering", target: "repollingSteering", actions: applyUpdateFrom("prepareNextTurn") },
              { target: "injectingMessages", actions: [applyUpdateFrom("prepareNextTurn"), ...openTurn] },
            ],
          },
        },
        // R4a: nothing pending, so steering is polled again.
        repollingSteering: {
          ...step("getSteeringMessages"),
          on: { "step.getSteeringMessages.done": { target: "injectingMessages", actions: [queueFrom("getSteeringMessages"), ...openTurn] } },
        },
        // R4b, R30: declare tool changes, inject prepared and pending messages.
        injectingMessages: {
          entry: "injectPending",
          always: [
            // R62: proactive compaction above the token threshold.
            { guard: "exceedsCompactThreshold", target: "compactingProactively", actions: { type: "startCompaction", params: { reason: "threshold" } } },
            { guard: "hasPrepareRequest", target: "preparingRequest" },
            ...toRequest([]),
          ],
        },
        // R62: the transcript grew past the threshold; compact it before this turn's request.
        compactingProactively: {
          ...step("compact"),
          on: {
            "step.compact.done": [
              { guard: "hasPrepareRequest", target: "preparingRequest", actions: "replaceTranscript" },
              ...toRequest(["replaceTranscript"]),
            ],
          },
        },
        // R62: the request overflowed the window; compact, then the same request once more.
        compactingOnOverflow: {
          ...step("compact"),
          on: {
            "step.compact.done": [
              // Nothing to compact: the overflow surfaces at once (prompt_too_long).
              ...toTurnEnd("foundNothingToCompact", ["surfaceOverflow"]),
              ...toRequest(["replaceTranscript"]),
            ],
          },
        },
        // R4c: the request may replace context, model and thinking level for this and later requests.
        preparingRequest: {
          ...step("prepareRequest"),
          on: {
            "step.prepareRequest.done": [...toRequest([applyUpdateFrom("prepareRequest")])],
          },
        },
        // R40: transformContext → convertToLlm → normalize → getApiKey → stream.
        requesting: {
          initial: "convertingToLlm",
          // R6, R7, R20, R28, R60–R62: the response of either stream state.
          on: { "step.streamResponse.done": routeResponse },
          states: {
            transformingContext: {
              ...step("transformContext"),
              on: { "step.transformContext.done": { target: "convertingToLlm", actions: "recordTransformed" } },
            },
            convertingToLlm: {
              ...step("convertToLlm"),
              on: {
                // R40: normalized on the way (only provider messages, in order, reach the stream function).
                "step.convertToLlm.done": [
                  { guard: "hasGetApiKey", target: "resolvingApiKey", actions: "recordConverted" },
                  ...toStreaming(undefined, ["recordConverted"]),
                ],
              },
            },
            resolvingApiKey: {
              ...step("resolveApiKey"),
              on: { "step.resolveApiKey.done": [...toStreaming(undefined, [])] },
            },
            // A shared request limiter: the request waits for its slot (held until its response ended).
            awaitingRequestSlot: {
              ...step("acquireRequestSlot"),
              on: { "step.acquireRequestSlot.done": [{ guard: "streamsTools", target: "streamingWithTools" }, { target: "streaming" }] },
            },
            // R60: the backoff is drawn (full jitter, the injected random source) …
            schedulingRetry: {
              ...step("drawBackoff"),
              on: { "step.drawBackoff.done": { target: "backingOff", actions: "scheduleRetry" } },
            },
            // … and waited for: an abortable state; a restored wait resumes with what was left (R13).
            backingOff: {
              ...step("waitForRetry"),
              on: {
                "step.waitForRetry.done": [
                  // An abort during the wait ends the request as aborted; the withheld failure stays unseen.
                  ...toTurnEnd("isAborted", ["surfaceAbortedRetry"]),
                  { guard: "hasGetApiKey", target: "resolvingApiKey" },
                  ...toStreaming(undefined, []),
                ],
              },
            },
            // R41, R42: the worker streams the response and emits its message events.
            // (Its reply is routed by `requesting`, see routeResponse.)
            streaming: step("streamResponse"),
            // R70 (streaming mode): the response streams on one side; on the other, the calls
            // whose toolcall_end arrived check themselves, start in source order and run.
            streamingWithTools: {
              type: "parallel",
              states: {
                // R41, R42: the response (routed by `requesting`, as `streaming`'s) …
                response: {
                  initial: "receiving",
                  states: {
                    receiving: step("streamResponse"),
                    // R70, R71: … ended with calls: the calls not yet started start as they may;
                    // once every call settled, the result messages in source order.
                    ended: { always: [...toTurnEnd("settledEveryCall", ["appendResults"])] },
                  },
                },
                // R70: the calls whose toolcall_end arrived: each checks itself, starts in source order, runs.
                runningCalls: { on: { "stream.toolCallReady": { actions: "spawnStreamedCall" }, ...streamedCallEvents } },
              },
            },
          },
        },
        // R28: a truncated response's calls get error results, not execution.
        rejectingTruncatedCalls: {
          entry: "rejectTruncatedCalls",
          always: [...toTurnEnd(undefined, [])],
        },
        // R20–R29: the tool batch. Every call is preflighted in source order (start, preparation,
        // beforeToolCall, an immediate result at once); each call that passed executes in its own
        // spawned actor.
        executingTools: {
          initial: "preflightingCalls",
          states: {
            // R24: one call at a time, from its start to its result message.
            preflightingCall: {
              ...step("preflightCalls"),
              on: {
                "step.preflightCalls.done": [
                  { guard: and(["preflightPassesNoCall", "hasLaterCall"]), target: "preflightingCall", reenter: true, actions: ["recordImmediateResults", immediateOutcome, "advanceCursor"] },
                  ...toTurnEnd("preflightPassesNoCall", ["recordImmediateResults", immediateOutcome]),
                  { target: "runningSequentially", actions: "spawnPassedCalls" },
                ],
              },
            },
            runningSequentially: {
              on: {
                "xstate.done.actor.*": [
                  // R73: its tool cancels on error, so the later calls are not run.
                  ...toTurnEnd("cancelsLaterCalls", [...settle("done", true), "cancelLaterCalls"]),
                  { guard: "hasLaterCall", target: "preflightingCall", actions: [...settle("done", true), "advanceCursor"] },
                  ...toTurnEnd(undefined, settle("done", true)),
                ],
                "xstate.error.actor.*": [
                  { guard: "hasLaterCall", target: "preflightingCall", actions: [...settle("crashed", true), "advanceCursor"] },
                  ...toTurnEnd(undefined, settle("crashed", true)),
                ],
              },
            },
            // R21, R25: every call, in source order, in one step.
            preflightingCalls: {
              ...step("preflightCalls"),
              on: {
                "step.preflightCalls.done": [
                  ...toTurnEnd("preflightPassesNoCall", ["recordImmediateResults", "appendResults"]),
                  { target: "runningInParallel", actions: ["recordImmediateResults", "spawnPassedCalls"] },
                ],
              },
            },
            // R25: concurrent execution, settled in completion order; once every call settled,
            // the result messages in source order.
            runningInParallel: {
              on: {
                "xstate.done.actor.*": [
                  ...toTurnEnd("settlesLastCall", [...settle("done", false), "appendResults"]),
                  // R73: its tool cancels on error: the calls still running are cancelled.
                  { guard: "cancelsSiblings", actions: [...settle("done", false), "cancelRunningCalls"] },
                  { actions: settle("done", false) },
                ],
                "xstate.error.actor.*": [
                  ...toTurnEnd("settlesLastCall", [...settle("crashed", false), "appendResults"]),
                  { actions: settle("crashed", false) },
                ],
              },
            },
          },
        },
        // R6, R8: finishTurn (its decision ignored after an error response), then turn_end.
        finishingTurn: {
          ...step("finishTurn"),
          on: { "step.finishTurn.done": { target: "endingTurn", actions: "recordDecision" } },
        },
        endingTurn: {
          entry: ["emitTurnEnd", "markTurnClosed", "countTurn", "countTruncations"],
          always: [
            { guard: "isErrorOrAborted", target: "#run.done", actions: "endAsFailedResponse" },
            { guard: "decidedEnd", target: "#run.done", actions: { type: "endAs", params: { reason: "finish_turn_end" } } },
            // R63: a limit reached ends the run before anything else is polled or prepared.
            { guard: "budgetReached", target: "#run.done", actions: "endForBudget" },
            // R61: an answer cut off again and again.
            { guard: "recoversOutputLimit", target: "#run.recoveringOutputLimit" },
            { guard: "outputLimitExhausted", target: "#run.done", actions: { type: "endAs", params: { reason: "max_output_tokens" } } },
            { guard: "hasGetSteeringMessages", target: "#run.pollingSteering" },
            ...nextStep(false),
          ],
        },
      },
    },
    // R61: a recovery message asks the model to resume where it stopped (injected with the next turn).
    recoveringOutputLimit: {
      entry: "queueRecoveryMessage",
      // (The recovery message is pending, so the next turn follows the steering poll.)
      always: [{ guard: "hasGetSteeringMessages", target: "pollingSteering" }, ...toNextTurn(undefined, false)],
    },
    // R9: steering after every turn.
    pollingSteering: {
      ...step("getSteeringMessages"),
      on: { "step.getSteeringMessages.done": { target: "choosingNextStep", actions: queueFrom("getSteeringMessages") } },
    },
    // R9, R10: what the steering poll leaves to do.
    choosingNextStep: {
      always: [...nextStep(true)],
    },
    // R10: follow-ups when the run would otherwise end.
    pollingFollowUps: {
      ...step("getFollowUpMessages"),
      on: { "step.getFollowUpMessages.done": { target: "choosingAfterFollowUps", actions: queueFrom("getFollowUpMessages") } },
    },
    choosingAfterFollowUps: {
      always: [
        // (Follow-ups are pending, so steering is not polled again.)
        ...toNextTurn("receivedFollowUps", false),
        { guard: "decidedContinue", target: "continuingAsDecided" },
        { target: "done" },
      ],
    },
    // R10, R11: nothing else asks for a request, but finishTurn said continue: exactly one more.
    continuingAsDecided: {
      always: [...toNextTurn(undefined, true)],
    },
    // R56: a hook or the stream function threw; close the turn with a failure message.
    // R67: or it was abandoned after the abort grace; the run then ends aborted.
    failing: {
      entry: ["abortStreamedCalls", "emitFailure"],
      always: "done",
    },
    // R12: agent_end with every message this run added.
    done: {
      type: "final",
      entry: "emitAgentEnd",
    },
  },
  output: ({ context }) => context.newMessages,
});

export type RunActorRef = ActorRefFrom<typeof runMachine>;

/** R63: the first limit the run has reached, if any. */
function budgetExceeded({ settings: { budget }, spent }: RunContext): AgentEndReason | undefined {
  if (budget.maxTurns !== undefined && spent.turns >= budget.maxTurns) return "max_turns";
  if (budget.maxTotalTokens !== undefined && spent.tokens >= budget.maxTotalTokens) return "max_tokens";
  if (budget.maxCostUsd !== undefined && spent.cost >= budget.maxCostUsd) return "max_cost";
  return undefined;
}

function resultMessage(context: RunContext, outcome: ToolCallOutcome): ToolResultMessage {
  return toolResultMessage(context.turn.batch!.calls[outcome.index], outcome.result, outcome.isError, outcome.durationMs, outcome.settledAt);
}

/** A tool-call actor that crashed (a runtime bug) still yields exactly one error result (R26). */
function crashedCall(event: ToolErrorEvent, context: RunContext): ToolCallOutcome {
  return {
    index: indexOfChild(event.actorId ?? ""),
    result: { content: [{ type: "text", text: errorText(event.error) }], details: {}, isError: true },
    isError: true,
    settledAt: context.startedAt,
  };
}

/** R67: the abandonment a `step.failed` reports, if it is one (the worker's grace ran out). */
function abandonedStepOf(event: { type: string }): StepAbandonedError | undefined {
  const error = event.type === "step.failed" ? (event as { error?: unknown }).error : undefined;
  return isStepAbandoned(error) ? error : undefined;
}


/** The slice of `enqueueActions`' `enqueue` the streamed-call helpers use. */
interface CallEnqueue {
  emit(event: AnyAgentEvent): void;
  sendTo(target: "steps", event: { type: "step.cancel"; replyTo: AnyActorRef }): void;
  stopChild(id: string): void;
}

/**
 * R72, R73: a streamed call that will not run (or not finish): its job is cancelled (its signal
 * aborts, it never replies) and its actor stopped.
 */
function discardCall(enqueue: CallEnqueue, self: AnyActorRef, index: number): void {
  const child = (self.getSnapshot() as { children: Record<string, AnyActorRef | undefined> }).children[toolChildId(index)];
  if (!child) return;
  enqueue.sendTo("steps", { type: "step.cancel", replyTo: child });
  enqueue.stopChild(toolChildId(index));
}

/** R73: after a sibling's failure cancelled the batch, a call that becomes known is not run. */
function cancelledOutcome(batch: ToolBatch, index: number, at: number): ToolCallOutcome | undefined {
  const failedTool = batch.streamed!.cancelledBy;
  return failedTool === null ? undefined : { index, result: siblingCancelledResult(failedTool), isError: true, settledAt: at };
}

/** R73: a call that is not run still gets its start and its end (the cancelled result). */
function emitCancelledStart(enqueue: Pick<CallEnqueue, "emit">, call: ToolCall, outcome: ToolCallOutcome): void {
  enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
  enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: outcome.result, isError: true });
}

/** R70: a streamed call's actor input: it checks and preflights itself. */
function streamedCallInput(context: RunContext, toolCall: ToolCall, index: number, partial: AssistantMessage, at: number): ToolCallInput {
  const { hooks, toolExecution } = context.settings;
  return {
    index,
    toolCall,
    args: toolCall.arguments,
    afterToolCall: hooks.afterToolCall,
    startedAt: at,
    streamed: { partial, gate: hooks.beforeToolCall, sequential: toolExecution === "sequential", approval: { rules: context.approval.rules } },
  };
}
