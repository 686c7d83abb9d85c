/**
 * One run of the agent loop (SPEC R1–R12, R20–R30, R40–R42, R56), from `agent_start` to
 * `agent_end`. Every lifecycle step is a state. A step that awaits app code asks the run's
 * effect worker (`effects`, invoked at the root; see `effects.ts`) for its job on entry and
 * leaves on the reply; a hook's state is entered only when the hook is configured. Tool calls are
 * spawned `toolCall` children with bounded ids (`tool:<index in batch>`), stopped once settled.
 *
 * The machine emits the `AgentEvent`s of its own transitions; the worker emits the ones produced
 * inside a job (stream deltas, tool updates) straight to the run's event sink, and waits for the
 * sink to settle before it starts any job. The definition is pure: the runtime provides the
 * worker (see `src/actors/`).
 */
import { assign, enqueueActions, fromCallback, sendTo, setup, stopChild, type DoneActorEvent, type ErrorActorEvent } from "xstate";
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
  type RunContext,
  type RunInput,
} from "../src/loop/run-context.js";
import { toolCallMachine, type ToolCallOutput, type ToolCallParentEvent } from "./tool-call.machine.js";
import { effectRequest, type EffectReply, type EffectRequest, type TurnSnapshot, type TurnUpdate } from "./effects.js";

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
    openTurn: enqueueActions(({ enqueue }) => {
      enqueue.emit({ type: "turn_start" });
      enqueue.assign({ turn: { ...closedTurn, open: true } });
    }),
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
      return { turn: { ...context.turn, batch: { calls, cursor: 0, outcomes: calls.map(() => null), ready: [] } } };
    }),
    // R21: tool_execution_start with the model's raw arguments, then the call's actor.
    startCall: enqueueActions(({ context, enqueue, system }, params: { mode: "sequential" | "parallel" }) => {
      const batch = context.turn.batch!;
      const call = batch.calls[batch.cursor];
      enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
      enqueue.spawnChild("toolCall", {
        id: toolChildId(batch.cursor),
        input: {
          index: batch.cursor,
          toolCall: call,
          mode: params.mode,
          hooks: { beforeToolCall: context.settings.hooks.beforeToolCall, afterToolCall: context.settings.hooks.afterToolCall },
          effects: system.get("effects"),
        },
      });
    }),
    // R25: a passed preflight; the next call starts.
    markReady: assign(({ context }, index: number) => {
      const batch = context.turn.batch!;
      return { turn: { ...context.turn, batch: { ...batch, ready: batch.ready.concat(index), cursor: batch.cursor + 1 } } };
    }),
    // R25: every call that passed its preflight executes now, together.
    executeReadyCalls: enqueueActions(({ context, enqueue }) => {
      for (const index of context.turn.batch!.ready) enqueue.sendTo(toolChildId(index), { type: "EXECUTE" });
    }),
    // R22, R24, R26: one finalized outcome per call, tool_execution_end, and its actor stopped at
    // once (bounded children). Sequential calls also get their result message now.
    settleCall: enqueueActions(({ context, enqueue }, params: { outcome: ToolCallOutput; appendMessage: boolean }) => {
      const { outcome } = params;
      const batch = context.turn.batch!;
      const call = batch.calls[outcome.index];
      const outcomes = batch.outcomes.slice();
      outcomes[outcome.index] = outcome;
      enqueue(stopChild(toolChildId(outcome.index)));
      enqueue.emit({
        type: "tool_execution_end",
        toolCallId: call.id,
        toolName: call.name,
        result: outcome.result,
        isError: outcome.isError,
        ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      });
      const nextBatch = { ...batch, outcomes, cursor: outcome.index === batch.cursor ? batch.cursor + 1 : batch.cursor };
      if (!params.appendMessage) {
        enqueue.assign({ turn: { ...context.turn, batch: nextBatch } });
        return;
      }
      const message = toolResultMessage(call, outcome.result, outcome.isError, outcome.durationMs);
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({
        ...appended(context, [message]),
        turn: { ...context.turn, toolResults: context.turn.toolResults.concat(message), batch: nextBatch },
      });
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
    emitTurnEnd: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: "turn_end", message: context.turn.assistant!, toolResults: context.turn.toolResults });
      enqueue.assign({ turn: { ...context.turn, open: false } });
    }),
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
    emitAgentEnd: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: "agent_end", messages: context.newMessages });
    }),
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
    isTruncatedWithToolCalls: ({ context }) =>
      context.turn.assistant!.stopReason === "length" && toolCallsOf(context.turn.assistant!).length > 0,
    hasToolCalls: ({ context }) => toolCallsOf(context.turn.assistant!).length > 0,
    runsSequentially: ({ context }) => runsSequentially(context, toolCallsOf(context.turn.assistant!)),
    hasNextCall: ({ context }) => context.turn.batch!.cursor < context.turn.batch!.calls.length,
    allCallsSettled: ({ context }) => context.turn.batch!.outcomes.every((outcome) => outcome !== null),
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
      entry: ["startRun", "openTurn", { type: "injectPending", params: { promptsOnly: true } }],
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
      initial: "startingTurn",
      states: {
        // R4a: the completed turn may replace context, model, thinking level, or add messages.
        preparingNextTurn: {
          entry: "prepareNextTurn",
          on: {
            "done.prepareNextTurn": {
              target: "choosingSteeringRepoll",
              actions: { type: "applyUpdate", params: ({ event }) => event.output },
            },
            ...failOnError,
          },
        },
        choosingSteeringRepoll: {
          always: [{ guard: "repollsSteering", target: "repollingSteering" }, { target: "startingTurn" }],
        },
        // R4a: nothing pending, so steering is polled again.
        repollingSteering: {
          entry: "pollSteering",
          on: {
            "done.getSteeringMessages": {
              target: "startingTurn",
              actions: { type: "queuePending", params: ({ event }) => event.output },
            },
            ...failOnError,
          },
        },
        startingTurn: {
          entry: "openTurn",
          always: "injectingMessages",
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
                "done.convertToLlm": {
                  target: "normalizing",
                  actions: assign({ request: ({ event }) => ({ messages: null, llmMessages: event.output }) }),
                },
                ...failOnError,
              },
            },
            // R40: only provider messages, in order, reach the stream function.
            normalizing: {
              entry: assign({ request: ({ context }) => ({ messages: null, llmMessages: normalizeTranscript(context.request.llmMessages!) }) }),
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
                "done.streamResponse": {
                  target: "#run.turn.routingResponse",
                  actions: { type: "appendAssistant", params: ({ event }) => event.output },
                },
                ...failOnError,
              },
            },
          },
        },
        // R6, R7, R20, R28: what the response asks for.
        routingResponse: {
          always: [
            { guard: "isErrorOrAborted", target: "completingTurn" },
            { guard: "isTruncatedWithToolCalls", target: "rejectingTruncatedCalls" },
            { guard: "hasToolCalls", target: "executingTools" },
            { target: "completingTurn" },
          ],
        },
        rejectingTruncatedCalls: {
          entry: "rejectTruncatedCalls",
          always: "completingTurn",
        },
        // R20–R29: the tool batch, one spawned actor per call.
        executingTools: {
          entry: "startBatch",
          initial: "choosingMode",
          states: {
            choosingMode: {
              always: [{ guard: "runsSequentially", target: "sequentially" }, { target: "inParallel" }],
            },
            // R24: each call runs to its result message before the next starts.
            sequentially: {
              initial: "runningCall",
              states: {
                runningCall: {
                  entry: { type: "startCall", params: { mode: "sequential" } },
                  on: {
                    "xstate.done.actor.*": {
                      target: "nextCall",
                      actions: { type: "settleCall", params: ({ event }) => ({ outcome: (event as ToolDoneEvent).output, appendMessage: true }) },
                    },
                    "xstate.error.actor.*": {
                      target: "nextCall",
                      actions: { type: "settleCall", params: ({ event }) => ({ outcome: crashedCall(event as ToolErrorEvent), appendMessage: true }) },
                    },
                  },
                },
                nextCall: {
                  always: [{ guard: "hasNextCall", target: "runningCall" }, { target: "#run.turn.completingTurn" }],
                },
              },
            },
            // R25: preflights one by one in source order, then concurrent execution.
            inParallel: {
              initial: "preflighting",
              states: {
                preflighting: {
                  entry: { type: "startCall", params: { mode: "parallel" } },
                  on: {
                    "TOOL.READY": { target: "nextPreflight", actions: { type: "markReady", params: ({ event }) => event.index } },
                    // An immediate result (error, block, abort) ends its call at once.
                    "xstate.done.actor.*": {
                      target: "nextPreflight",
                      actions: { type: "settleCall", params: ({ event }) => ({ outcome: (event as ToolDoneEvent).output, appendMessage: false }) },
                    },
                    "xstate.error.actor.*": {
                      target: "nextPreflight",
                      actions: { type: "settleCall", params: ({ event }) => ({ outcome: crashedCall(event as ToolErrorEvent), appendMessage: false }) },
                    },
                  },
                },
                nextPreflight: {
                  always: [{ guard: "hasNextCall", target: "preflighting" }, { target: "running" }],
                },
                // tool_execution_end in completion order.
                running: {
                  entry: "executeReadyCalls",
                  always: { guard: "allCallsSettled", target: "appendingResults" },
                  on: {
                    "xstate.done.actor.*": {
                      actions: { type: "settleCall", params: ({ event }) => ({ outcome: (event as ToolDoneEvent).output, appendMessage: false }) },
                    },
                    "xstate.error.actor.*": {
                      actions: { type: "settleCall", params: ({ event }) => ({ outcome: crashedCall(event as ToolErrorEvent), appendMessage: false }) },
                    },
                  },
                },
                // Result messages in source order, after every call finished.
                appendingResults: {
                  entry: "appendResults",
                  always: "#run.turn.completingTurn",
                },
              },
            },
          },
        },
        // R6, R8: finishTurn (its decision ignored after an error response), then turn_end.
        completingTurn: {
          always: [{ guard: "hasFinishTurn", target: "finishingTurn" }, { target: "endingTurn" }],
        },
        finishingTurn: {
          entry: "finishTurn",
          on: {
            "done.finishTurn": { target: "endingTurn", actions: assign({ turn: ({ context, event }) => ({ ...context.turn, decision: event.output }) }) },
            ...failOnError,
          },
        },
        endingTurn: {
          entry: "emitTurnEnd",
          always: [
            { guard: "isErrorOrAborted", target: "#run.done" },
            { guard: "decidedEnd", target: "#run.done" },
            { guard: "hasGetSteeringMessages", target: "#run.pollingSteering" },
            { target: "#run.choosingNextStep" },
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
    // R9, R10: the inner loop continues, or follow-ups are polled, or the run ends.
    choosingNextStep: {
      always: [
        { guard: "continuesInnerLoop", target: "choosingNextTurn" },
        { guard: "hasGetFollowUpMessages", target: "pollingFollowUps" },
        { guard: "decidedContinue", target: "continuingAsDecided" },
        { target: "done" },
      ],
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
        { guard: "receivedFollowUps", target: "choosingNextTurn" },
        { guard: "decidedContinue", target: "continuingAsDecided" },
        { target: "done" },
      ],
    },
    // R10, R11: nothing else asks for a request, but finishTurn said continue: exactly one more.
    continuingAsDecided: {
      always: "choosingNextTurn",
    },
    // R4a: the next turn starts with prepareNextTurn when configured.
    choosingNextTurn: {
      always: [{ guard: "hasPrepareNextTurn", target: "turn.preparingNextTurn" }, { target: "turn.choosingSteeringRepoll" }],
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
