/**
 * One run of the agent loop (SPEC R1–R12, R20–R30, R40–R42, R56), from `agent_start` to
 * `agent_end`. Every lifecycle step is a state. A step that awaits app code asks the run's
 * effect worker (`effects`, invoked at the root; see `effects.ts`) for its job on entry and
 * leaves on the reply; a hook's state is entered only when the hook is configured. Decisions
 * between steps are guarded transitions straight to the next step (a routing state would cost a
 * microstep on every turn). Tool calls are spawned `toolCall` children with bounded ids
 * (`tool:<index in batch>`), stopped once settled.
 *
 * The machine emits the `AgentEvent`s of its own transitions; the worker emits the ones produced
 * inside a job (stream deltas, tool updates) and each tool-call actor its `tool_execution_end`,
 * straight to the run's event sink. The worker starts a job only after the step that asked for it
 * and once the sink has settled. The definition is pure: the runtime provides the worker and the
 * tool-call actor's actions (see `src/actors/`).
 */
import { and, assign, emit, enqueueActions, fromCallback, sendTo, setup, stopChild, type ActorSystem, type DoneActorEvent, type ErrorActorEvent } from "xstate";
import type { AgentEvent, AgentMessage, AssistantMessage, ToolResultMessage } from "../src/types.js";
import { declareToolChanges, applySystemMessages } from "../src/transcript/index.js";
import { errorText, toolResultMessage, truncatedCallResult } from "../src/loop/tool-results.js";
import { normalizeTranscript } from "../src/loop/normalize.js";
import {
  batchTerminates,
  closedTurn,
  failureMessage,
  initialRunContext,
  isFailedResponse,
  runsSequentially,
  toolCallsOf,
  type HookFlags,
  type RunContext,
  type RunInput,
  type TurnState,
} from "../src/loop/run-context.js";
import { toolCallMachine, type ToolCallInput, type ToolCallOutput, type ToolCallParentEvent } from "./tool-call.machine.js";
import { effectRequest, type DoneEvent, type EffectReply, type EffectRequest, type TurnSnapshot, type TurnUpdate } from "./effects.js";

export type { StateUpdate, TurnSnapshot, TurnUpdate } from "./effects.js";

export type ToolDoneEvent = DoneActorEvent<ToolCallOutput, `tool:${number}`>;
export type ToolErrorEvent = ErrorActorEvent<unknown, `tool:${number}`>;
export type RunEvent = ToolCallParentEvent | ToolDoneEvent | ToolErrorEvent | EffectReply;

const toolChildId = (index: number) => `tool:${index}` as const;
const indexOfChild = (actorId: string) => Number(actorId.slice("tool:".length));

/** Appends `messages` to the transcript and to what this run added. */
const appended = (context: RunContext, messages: AgentMessage[]) => ({
  messages: context.messages.concat(messages),
  newMessages: context.newMessages.concat(messages),
});

/** R5, R41: the response, appended to the transcript. */
const appendAssistant = {
  type: "appendAssistant",
  params: ({ event }: { event: RunEvent }) => (event as Extract<RunEvent, { type: "done.streamResponse" }>).output,
} as const;

/** R4a: `turn_start` on the edge that enters the next turn's message injection. */
const openTurn = ["emitTurnStart", "markTurnOpen"] as const;
const openingTurn = { target: "#run.turn.injectingMessages", actions: openTurn } as const;

/**
 * R22, R24, R26: settles a call from its actor's output, or from its crash (a runtime defect,
 * still exactly one result): its actor stopped, its outcome recorded, and for a sequential call
 * its result message.
 */
function settle(kind: "done" | "crashed", appendMessage: boolean) {
  const outcome = ({ event }: { event: RunEvent }) => (kind === "done" ? (event as ToolDoneEvent).output : crashedCall(event as ToolErrorEvent));
  return [
    { type: "stopCall", params: ({ event }: { event: RunEvent }) => indexOfChild((event as ToolDoneEvent | ToolErrorEvent).actorId ?? "") },
    ...(kind === "crashed" ? [{ type: "reportCrash", params: outcome } as const] : []),
    { type: "recordOutcome", params: outcome },
    ...(appendMessage ? [{ type: "appendResult", params: outcome } as const] : []),
  ] as const;
}

type Condition = "settlesLastCall" | "allCallsSettled" | "responseFailed" | "continuesInnerLoop" | "receivedFollowUps";

/**
 * R6, R8: the turn closes with finishTurn when configured (its decision ignored after an error
 * response), then turn_end.
 */
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

/**
 * R4a: a next turn starts with prepareNextTurn when configured, and polls steering again when
 * nothing is pending (`repoll`: only where that can be the case, so no edge is dead).
 */
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

/**
 * R9, R10: after the turn and its steering poll, the inner loop continues, follow-ups are polled,
 * or the run ends. (Without a steering hook nothing is ever re-polled.)
 */
const nextStep = (steering: boolean) =>
  [
    ...toNextTurn("continuesInnerLoop", steering),
    { guard: "hasGetFollowUpMessages", target: "#run.pollingFollowUps" },
    { guard: "decidedContinue", target: "#run.continuingAsDecided" },
    { target: "#run.done" },
  ] as const;

/** R56: any failed job ends the run through `failing`. */
const failOnError = {
  failed: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }: { event: { error: unknown } }) => event.error } },
} as const;

export const runMachine = setup({
  types: {
    input: {} as RunInput,
    context: {} as RunContext,
    events: {} as RunEvent,
    output: {} as AgentMessage[],
    emitted: {} as AgentEvent,
  },
  actors: {
    /** The run's effect worker: receives `effect.run` requests, replies `done.<job>` or `failed`. */
    effects: fromCallback<EffectRequest>(() => {
      throw new Error('run machine: the "effects" worker is not provided');
    }),
    toolCall: toolCallMachine,
  },
  actions: {
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
    injectPending: enqueueActions(({ context, enqueue }, params?: { promptsOnly: boolean }) => {
      // R1: prompts are injected at once; a continue run (R2) declares tools with its first request.
      if (params?.promptsOnly && context.settings.mode !== "prompt") return;
      const pending = context.prepared.length === 0 ? context.pending : context.prepared.concat(context.pending);
      const declared = new Map(context.declared);
      const injected = declareToolChanges({ transcriptDeclared: declared, pending, tools: context.toolSet.tools, now: Date.now() });
      if (injected.length === 0) {
        if (context.pending.length > 0 || context.prepared.length > 0) enqueue.assign({ pending: [], prepared: [] });
        return;
      }
      applySystemMessages(declared, injected);
      for (const message of injected) {
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
      }
      enqueue.assign({ ...appended(context, injected), declared: [...declared], pending: [], prepared: [] });
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
    // R5, R41: one assistant message per request, appended.
    appendAssistant: assign(({ context }, message: AssistantMessage) => ({
      ...appended(context, [message]),
      turn: { ...context.turn, assistant: message },
      request: { messages: null, llmMessages: null },
    })),
    // R28: a truncated response's calls are rejected, never executed.
    rejectTruncatedCalls: enqueueActions(({ context, enqueue }) => {
      const results: ToolResultMessage[] = [];
      for (const call of toolCallsOf(context.turn.assistant!)) {
        const result = truncatedCallResult(call);
        enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
        enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
        const message = toolResultMessage(call, result, true, undefined);
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        results.push(message);
      }
      enqueue.assign({ ...appended(context, results), turn: { ...context.turn, toolResults: results } });
    }),
    startBatch: assign(({ context }) => {
      const calls = toolCallsOf(context.turn.assistant!);
      return { turn: { ...context.turn, batch: { calls, cursor: 0, outcomes: calls.map(() => null) } } };
    }),
    // R21: tool_execution_start with the model's raw arguments, then the call's actor, which
    // prepares the call as it is created and reports its own tool_execution_end.
    startCall: enqueueActions(({ context, enqueue, system }, params: { mode: "sequential" | "parallel" }) => {
      const start = callStart(context.turn, context.turn.batch!.cursor, params.mode, context.settings.hooks, system);
      enqueue.emit(start.event);
      enqueue.spawnChild("toolCall", start.actor);
    }),
    // R25 without beforeToolCall: every preflight is synchronous, so all calls start in one step,
    // in source order; each reports an immediate result at once.
    startAllCalls: enqueueActions(({ context, enqueue, system }) => {
      const calls = toolCallsOf(context.turn.assistant!);
      const turn: TurnState = { ...context.turn, batch: { calls, cursor: calls.length, outcomes: calls.map(() => null) } };
      for (let index = 0; index < calls.length; index++) {
        const start = callStart(turn, index, "parallel", context.settings.hooks, system);
        enqueue.emit(start.event);
        enqueue.spawnChild("toolCall", start.actor);
      }
      enqueue.assign({ turn });
    }),
    // R25: a preflight is done; the next call starts.
    advanceCursor: assign(({ context }) => {
      const batch = context.turn.batch!;
      return { turn: { ...context.turn, batch: { ...batch, cursor: batch.cursor + 1 } } };
    }),
    // R25: every call that passed its asynchronous preflight executes now, together.
    executeCalls: enqueueActions(({ context, enqueue }) => {
      const { outcomes } = context.turn.batch!;
      for (let index = 0; index < outcomes.length; index++) if (outcomes[index] === null) enqueue.sendTo(toolChildId(index), { type: "EXECUTE" });
    }),
    // R22, R26: the call's actor is stopped as soon as it settled (bounded children).
    stopCall: stopChild((_, index: number) => toolChildId(index)),
    // R26: one finalized outcome per call.
    recordOutcome: assign(({ context }, outcome: ToolCallOutput) => {
      const batch = context.turn.batch!;
      const outcomes = batch.outcomes.slice();
      outcomes[outcome.index] = outcome;
      const cursor = outcome.index === batch.cursor ? batch.cursor + 1 : batch.cursor;
      return { turn: { ...context.turn, batch: { calls: batch.calls, cursor, outcomes } } };
    }),
    // A crashed actor (a runtime defect) never reported its tool_execution_end, so the run does.
    reportCrash: emit(({ context }, outcome: ToolCallOutput) => {
      const call = context.turn.batch!.calls[outcome.index];
      return { type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: outcome.result, isError: true };
    }),
    // R24: a sequential call's result message, before the next call starts.
    appendResult: enqueueActions(({ context, enqueue }, outcome: ToolCallOutput) => {
      const message = toolResultMessage(context.turn.batch!.calls[outcome.index], outcome.result, outcome.isError, outcome.durationMs);
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({ ...appended(context, [message]), turn: { ...context.turn, toolResults: context.turn.toolResults.concat(message) } });
    }),
    // R25: parallel result messages in source order, after every call finished.
    appendResults: enqueueActions(({ context, enqueue }) => {
      const batch = context.turn.batch!;
      const messages: ToolResultMessage[] = [];
      for (let i = 0; i < batch.calls.length; i++) {
        const outcome = batch.outcomes[i]!;
        const message = toolResultMessage(batch.calls[i], outcome.result, outcome.isError, outcome.durationMs);
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        messages.push(message);
      }
      enqueue.assign({ ...appended(context, messages), turn: { ...context.turn, toolResults: context.turn.toolResults.concat(messages) } });
    }),
    emitTurnEnd: emit(({ context }) => ({ type: "turn_end", message: context.turn.assistant!, toolResults: context.turn.toolResults })),
    markTurnClosed: assign({ turn: ({ context }) => ({ ...context.turn, open: false }) }),
    recordFailure: assign(({ context }, error: unknown) => {
      const text = errorText(error);
      // A stream that threw after `start` closed its partial itself; it belongs to the run.
      const partial = error && typeof error === "object" && "partial" in error ? (error.partial as AssistantMessage) : undefined;
      return { failure: text, ...(partial ? appended(context, [partial]) : {}) };
    }),
    // R56: an assistant failure message, then turn_end (opening a turn first if none is open).
    emitFailure: enqueueActions(({ context, enqueue }) => {
      if (!context.turn.open) enqueue.emit({ type: "turn_start" });
      const message = failureMessage(context, context.failure ?? "Unknown failure");
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.emit({ type: "turn_end", message, toolResults: [] });
      enqueue.assign({ ...appended(context, [message]), turn: { ...context.turn, assistant: message, open: false } });
    }),
    emitAgentEnd: emit(({ context }) => ({ type: "agent_end", messages: context.newMessages })),
    // The effect requests, one per step that awaits app code.
    pollSteering: sendTo("effects", ({ self }) => effectRequest("getSteeringMessages", null, self)),
    pollFollowUps: sendTo("effects", ({ self }) => effectRequest("getFollowUpMessages", null, self)),
    prepareNextTurn: sendTo("effects", ({ context, self }) => effectRequest("prepareNextTurn", turnSnapshot(context), self)),
    prepareRequest: sendTo("effects", ({ context, self }) =>
      effectRequest("prepareRequest", { messages: context.messages, model: context.model, thinkingLevel: context.thinkingLevel }, self),
    ),
    transformContext: sendTo("effects", ({ context, self }) => effectRequest("transformContext", { messages: context.messages }, self)),
    convertToLlm: sendTo("effects", ({ context, self }) =>
      effectRequest("convertToLlm", { messages: context.request.messages ?? context.messages }, self),
    ),
    resolveApiKey: sendTo("effects", ({ context, self }) => effectRequest("resolveApiKey", { provider: context.model.provider }, self)),
    streamResponse: sendTo("effects", ({ context, self }) =>
      effectRequest("streamResponse", { messages: context.request.llmMessages!, model: context.model, thinkingLevel: context.thinkingLevel }, self),
    ),
    finishTurn: sendTo("effects", ({ context, self }) => effectRequest("finishTurn", turnSnapshot(context), self)),
  },
  guards: {
    pollsInitialSteering: ({ context }) => context.settings.hooks.getSteeringMessages && !context.settings.skipInitialSteeringPoll,
    hasPrepareNextTurn: ({ context }) => context.settings.hooks.prepareNextTurn,
    // R4a: steering is polled again when nothing is pending.
    repollsSteering: ({ context }) => context.settings.hooks.getSteeringMessages && context.pending.length === 0,
    hasPrepareRequest: ({ context }) => context.settings.hooks.prepareRequest,
    hasTransformContext: ({ context }) => context.settings.hooks.transformContext,
    hasGetApiKey: ({ context }) => context.settings.hooks.getApiKey,
    hasFinishTurn: ({ context }) => context.settings.hooks.finishTurn,
    hasGetSteeringMessages: ({ context }) => context.settings.hooks.getSteeringMessages,
    hasGetFollowUpMessages: ({ context }) => context.settings.hooks.getFollowUpMessages,
    isErrorOrAborted: ({ context }) => isFailedResponse(context.turn.assistant),
    // Decided on the response itself, before its transition appends it.
    responseFailed: ({ event }) => isFailedResponse(responseOf(event)),
    responseTruncatesCalls: ({ event }) => responseOf(event).stopReason === "length" && toolCallsOf(responseOf(event)).length > 0,
    responseCallsTools: ({ event }) => toolCallsOf(responseOf(event)).length > 0,
    responseRunsSequentially: ({ context, event }) => runsSequentially(context, toolCallsOf(responseOf(event))),
    hasBeforeToolCall: ({ context }) => context.settings.hooks.beforeToolCall,
    // Decided before the transition's actions settle the call: is another call still to start?
    hasLaterCall: ({ context }) => context.turn.batch!.cursor + 1 < context.turn.batch!.calls.length,
    // ... and is this the batch's last outstanding call?
    allCallsSettled: ({ context }) => context.turn.batch!.outcomes.every((outcome) => outcome !== null),
    settlesLastCall: ({ context }) => context.turn.batch!.outcomes.filter((outcome) => outcome === null).length === 1,
    decidedEnd: ({ context }) => context.turn.decision === "end",
    // R9, R27: tool results to answer (unless every result terminates) or pending steering.
    continuesInnerLoop: ({ context }) =>
      (context.turn.toolResults.length > 0 && !batchTerminates(context.turn.batch)) || context.pending.length > 0,
    receivedFollowUps: ({ context }) => context.pending.length > 0,
    // R10, R11: an explicit continue asks for exactly one more request.
    decidedContinue: ({ context }) => context.turn.decision === "continue",
  },
}).createMachine({
  id: "run",
  context: ({ input }) => initialRunContext(input),
  invoke: { id: "effects", systemId: "effects", src: "effects" },
  initial: "starting",
  states: {
    // R1, R2: agent_start, turn_start, then the prompts (after R30).
    starting: {
      entry: ["startRun", ...openTurn, { type: "injectPending", params: { promptsOnly: true } }],
      always: [
        { guard: "pollsInitialSteering", target: "pollingInitialSteering" },
        { target: "turn.injectingMessages" },
      ],
    },
    // R3: steering is polled once at run start.
    pollingInitialSteering: {
      entry: "pollSteering",
      on: {
        "done.getSteeringMessages": {
          target: "turn.injectingMessages",
          actions: { type: "queuePending", params: ({ event }) => event.output },
        },
        ...failOnError,
      },
    },
    turn: {
      initial: "injectingMessages",
      states: {
        // R4a: the completed turn may replace context, model, thinking level, or add messages.
        preparingNextTurn: {
          entry: "prepareNextTurn",
          on: {
            // R4a: steering is polled again when nothing is pending.
            "done.prepareNextTurn": [
              { guard: "repollsSteering", target: "repollingSteering", actions: { type: "applyUpdate", params: ({ event }) => event.output } },
              { target: "injectingMessages", actions: [{ type: "applyUpdate", params: ({ event }) => event.output }, ...openTurn] },
            ],
            ...failOnError,
          },
        },
        // R4a: nothing pending, so steering is polled again.
        repollingSteering: {
          entry: "pollSteering",
          on: {
            "done.getSteeringMessages": {
              target: "injectingMessages",
              actions: [{ type: "queuePending", params: ({ event }) => event.output }, ...openTurn],
            },
            ...failOnError,
          },
        },
        // R4b, R30: declare tool changes, inject prepared and pending messages.
        injectingMessages: {
          entry: "injectPending",
          always: [
            { guard: "hasPrepareRequest", target: "preparingRequest" },
            { guard: "hasTransformContext", target: "requesting.transformingContext" },
            { target: "requesting.convertingToLlm" },
          ],
        },
        // R4c: the request may replace context, model and thinking level for this and later requests.
        preparingRequest: {
          entry: "prepareRequest",
          on: {
            "done.prepareRequest": [
              {
                guard: "hasTransformContext",
                target: "requesting.transformingContext",
                actions: { type: "applyUpdate", params: ({ event }) => event.output },
              },
              { target: "requesting.convertingToLlm", actions: { type: "applyUpdate", params: ({ event }) => event.output } },
            ],
            ...failOnError,
          },
        },
        // R40: transformContext → convertToLlm → normalize → getApiKey → stream.
        requesting: {
          initial: "convertingToLlm",
          states: {
            transformingContext: {
              entry: "transformContext",
              on: {
                "done.transformContext": {
                  target: "convertingToLlm",
                  actions: assign({ request: ({ event }) => ({ messages: event.output, llmMessages: null }) }),
                },
                ...failOnError,
              },
            },
            convertingToLlm: {
              entry: "convertToLlm",
              on: {
                "done.convertToLlm": "normalizing",
                ...failOnError,
              },
            },
            // R40: only provider messages, in order, reach the stream function.
            normalizing: {
              entry: assign({
                request: ({ event }) => ({ messages: null, llmMessages: normalizeTranscript((event as DoneEvent<"convertToLlm">).output) }),
              }),
              always: [{ guard: "hasGetApiKey", target: "resolvingApiKey" }, { target: "streaming" }],
            },
            resolvingApiKey: {
              entry: "resolveApiKey",
              on: { "done.resolveApiKey": "streaming", ...failOnError },
            },
            // R41, R42: the worker streams the response and emits its message events.
            streaming: {
              entry: "streamResponse",
              on: {
                // R6, R7, R20, R28: what the response asks for, and how its tool batch runs.
                "done.streamResponse": [
                  ...toTurnEnd("responseFailed", [appendAssistant]),
                  { guard: "responseTruncatesCalls", target: "#run.turn.rejectingTruncatedCalls", actions: [appendAssistant] },
                  {
                    guard: and(["responseCallsTools", "responseRunsSequentially"]),
                    target: "#run.turn.executingTools.runningSequentially",
                    actions: [appendAssistant, "startBatch"],
                  },
                  {
                    guard: and(["responseCallsTools", "hasBeforeToolCall"]),
                    target: "#run.turn.executingTools.preflightingEach",
                    actions: [appendAssistant, "startBatch"],
                  },
                  // R25 without beforeToolCall: every preflight is synchronous, so all calls start in this step.
                  {
                    guard: "responseCallsTools",
                    target: "#run.turn.executingTools.runningInParallel",
                    actions: [appendAssistant, "startAllCalls"],
                  },
                  ...toTurnEnd(undefined, [appendAssistant]),
                ],
                ...failOnError,
              },
            },
          },
        },
        rejectingTruncatedCalls: {
          entry: "rejectTruncatedCalls",
          always: [...toTurnEnd(undefined, [])],
        },
        // R20–R29: the tool batch, one spawned actor per call. The response's transition starts
        // the batch and enters the state of its mode.
        executingTools: {
          initial: "runningInParallel",
          states: {
            // R24: each call runs to its result message before the next starts.
            runningSequentially: {
              entry: { type: "startCall", params: { mode: "sequential" } },
              on: {
                "xstate.done.actor.*": [
                  { guard: "hasLaterCall", target: "runningSequentially", reenter: true, actions: settle("done", true) },
                  ...toTurnEnd(undefined, settle("done", true)),
                ],
                "xstate.error.actor.*": [
                  { guard: "hasLaterCall", target: "runningSequentially", reenter: true, actions: settle("crashed", true) },
                  ...toTurnEnd(undefined, settle("crashed", true)),
                ],
              },
            },
            // R25 with beforeToolCall: a preflight is asynchronous, so calls start one by one in
            // source order; the next starts when this one passed (TOOL.READY) or settled. After
            // the last, the passed calls execute together.
            preflightingEach: {
              entry: { type: "startCall", params: { mode: "parallel" } },
              on: {
                "TOOL.READY": [
                  { guard: "hasLaterCall", target: "preflightingEach", reenter: true, actions: "advanceCursor" },
                  { target: "runningInParallel", actions: ["advanceCursor", "executeCalls"] },
                ],
                "xstate.done.actor.*": [
                  { guard: "hasLaterCall", target: "preflightingEach", reenter: true, actions: settle("done", false) },
                  { target: "runningInParallel", actions: [...settle("done", false), "executeCalls"] },
                ],
                "xstate.error.actor.*": [
                  { guard: "hasLaterCall", target: "preflightingEach", reenter: true, actions: settle("crashed", false) },
                  { target: "runningInParallel", actions: [...settle("crashed", false), "executeCalls"] },
                ],
              },
            },
            // R25: concurrent execution, settled in completion order; once every call settled,
            // the result messages in source order.
            runningInParallel: {
              // (Every call may have settled in its preflight already.)
              always: [...toTurnEnd("allCallsSettled", ["appendResults"])],
              on: {
                "xstate.done.actor.*": [
                  ...toTurnEnd("settlesLastCall", [...settle("done", false), "appendResults"]),
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
          entry: "finishTurn",
          on: {
            "done.finishTurn": { target: "endingTurn", actions: assign({ turn: ({ context, event }) => ({ ...context.turn, decision: event.output }) }) },
            ...failOnError,
          },
        },
        endingTurn: {
          entry: ["emitTurnEnd", "markTurnClosed"],
          always: [
            { guard: "isErrorOrAborted", target: "#run.done" },
            { guard: "decidedEnd", target: "#run.done" },
            { guard: "hasGetSteeringMessages", target: "#run.pollingSteering" },
            ...nextStep(false),
          ],
        },
      },
    },
    // R9: steering after every turn.
    pollingSteering: {
      entry: "pollSteering",
      on: {
        "done.getSteeringMessages": { target: "choosingNextStep", actions: { type: "queuePending", params: ({ event }) => event.output } },
        ...failOnError,
      },
    },
    // R9, R10: what the steering poll leaves to do.
    choosingNextStep: {
      always: [...nextStep(true)],
    },
    // R10: follow-ups when the run would otherwise end.
    pollingFollowUps: {
      entry: "pollFollowUps",
      on: {
        "done.getFollowUpMessages": {
          target: "choosingAfterFollowUps",
          actions: { type: "queuePending", params: ({ event }) => event.output },
        },
        ...failOnError,
      },
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
    failing: {
      entry: "emitFailure",
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

function responseOf(event: RunEvent): AssistantMessage {
  if (event.type !== "done.streamResponse") throw new Error(`run machine: no response in ${event.type}`);
  return event.output;
}

/** A call's `tool_execution_start` and its actor's spawn options. */
function callStart(turn: TurnState, index: number, mode: ToolCallInput["mode"], hooks: HookFlags, system: ActorSystem<any>) {
  const call = turn.batch!.calls[index];
  const { beforeToolCall, afterToolCall } = hooks;
  const event: AgentEvent = { type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments };
  const input: ToolCallInput = { index, toolCall: call, mode, hooks: { beforeToolCall, afterToolCall }, effects: system.get("effects") };
  return { event, actor: { id: toolChildId(index), input } };
}

/** The turn hooks' input. */
function turnSnapshot(context: RunContext): TurnSnapshot {
  return {
    message: context.turn.assistant!,
    toolResults: context.turn.toolResults,
    messages: context.messages,
    newMessages: context.newMessages,
  };
}

/** A tool-call actor that crashed (a runtime bug) still yields exactly one error result (R26). */
function crashedCall(event: ToolErrorEvent): ToolCallOutput {
  const error = event.error;
  return {
    index: indexOfChild(event.actorId ?? ""),
    result: {
      content: [{ type: "text", text: errorText(error) }],
      details: {},
      isError: true,
    },
    isError: true,
  };
}
