/**
 * One run of the agent loop (SPEC R1–R12, R20–R30, R40–R42, R56), from `agent_start` to
 * `agent_end`. Every lifecycle step is a state; every step that awaits app code is an invoked
 * actor, entered only when the hook is configured. Tool calls are spawned `toolCall` children
 * with bounded ids (`tool:<index in batch>`), stopped as soon as they settle.
 *
 * The machine emits the `AgentEvent`s of its own transitions; the invoked actors emit the ones
 * they produce (stream deltas, tool updates) straight to the run's event sink, and each actor
 * waits for the sink to settle before it does anything observable. The definition is pure: the
 * runtime supplies the actors with `provide` (see `src/actors/`).
 */
import { assign, enqueueActions, fromPromise, setup, stopChild, type DoneActorEvent, type ErrorActorEvent } from "xstate";
import type { AgentEvent, AgentMessage, AssistantMessage, Message, Model, ThinkingLevel, ToolResultMessage } from "../src/types.js";
import { declareToolChanges, applySystemMessages } from "../src/transcript/index.js";
import { toolResultMessage, truncatedCallResult } from "../src/loop/tool-results.js";
import {
  batchTerminates,
  failureMessage,
  initialRunContext,
  isFailedResponse,
  runsSequentially,
  toolCallsOf,
  type RunContext,
  type RunInput,
  type ToolSetData,
} from "../src/loop/run-context.js";
import { toolCallMachine, type ToolCallOutput, type ToolCallParentEvent } from "./tool-call.machine.js";

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
  /** Replacement tool set (`context.tools`). */
  toolSet?: ToolSetData;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}

export interface TurnUpdate extends StateUpdate {
  /** Messages to inject before the next request (R4b). */
  prepared?: AgentMessage[];
}

export interface RequestInput {
  messages: AgentMessage[];
  model: Model;
  thinkingLevel: ThinkingLevel;
}

export type ToolDoneEvent = DoneActorEvent<ToolCallOutput, `tool:${number}`>;
export type ToolErrorEvent = ErrorActorEvent<unknown, `tool:${number}`>;
export type RunEvent = ToolCallParentEvent | ToolDoneEvent | ToolErrorEvent;

const notProvided = (name: string) => () => {
  throw new Error(`run machine: "${name}" is not provided`);
};

const toolChildId = (index: number) => `tool:${index}` as const;
const indexOfChild = (actorId: string) => Number(actorId.slice("tool:".length));

/** Appends `messages` to the transcript and to what this run added. */
const appended = (context: RunContext, messages: AgentMessage[]) => ({
  messages: context.messages.concat(messages),
  newMessages: context.newMessages.concat(messages),
});

export const runMachine = setup({
  types: {
    input: {} as RunInput,
    context: {} as RunContext,
    events: {} as RunEvent,
    output: {} as AgentMessage[],
    emitted: {} as AgentEvent,
  },
  actors: {
    getSteeringMessages: fromPromise<AgentMessage[]>(notProvided("getSteeringMessages")),
    getFollowUpMessages: fromPromise<AgentMessage[]>(notProvided("getFollowUpMessages")),
    prepareNextTurn: fromPromise<TurnUpdate, TurnSnapshot>(notProvided("prepareNextTurn")),
    prepareRequest: fromPromise<StateUpdate, RequestInput>(notProvided("prepareRequest")),
    transformContext: fromPromise<AgentMessage[], { messages: AgentMessage[] }>(notProvided("transformContext")),
    /** `convertToLlm` then normalization into the provider transcript (R40). */
    convertToLlm: fromPromise<Message[], { messages: AgentMessage[] }>(notProvided("convertToLlm")),
    /** Resolves the key for the next request into the runtime; it never enters the machine. */
    resolveApiKey: fromPromise<void, { provider: string }>(notProvided("resolveApiKey")),
    /** Calls the stream function and emits message events itself (R41); outputs the final message. */
    streamResponse: fromPromise<AssistantMessage, { messages: Message[]; model: Model; thinkingLevel: ThinkingLevel }>(
      notProvided("streamResponse"),
    ),
    finishTurn: fromPromise<"continue" | "end" | null, TurnSnapshot>(notProvided("finishTurn")),
    toolCall: toolCallMachine,
  },
  actions: {
    emitAgentStart: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: "agent_start" });
      // The transcript's declared tools, replayed once per run (R30).
      const declared = new Map<string, string>();
      applySystemMessages(declared, context.messages);
      enqueue.assign({ declared: [...declared] });
    }),
    openTurn: enqueueActions(({ enqueue }) => {
      enqueue.emit({ type: "turn_start" });
      enqueue.assign({ turnOpen: true, assistant: null, toolResults: [], batch: null, decision: null });
    }),
    // R30 + R4b: declare tool changes, then inject, each message with start/end events.
    injectMessages: enqueueActions(({ context, enqueue }, params: { messages: AgentMessage[] }) => {
      const declared = new Map(context.declared);
      const injected = declareToolChanges({
        transcriptDeclared: declared,
        pending: params.messages,
        tools: context.tools,
        now: Date.now(),
      });
      enqueue.assign({ pending: [], prepared: [] });
      if (injected.length === 0) return;
      applySystemMessages(declared, injected);
      for (const message of injected) {
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
      }
      enqueue.assign({ ...appended(context, injected), declared: [...declared] });
    }),
    queuePending: assign(({ context }, messages: AgentMessage[]) => ({
      pending: messages.length === 0 ? context.pending : context.pending.concat(messages),
    })),
    applyUpdate: assign(({ context }, update: TurnUpdate) => {
      const next: Partial<RunContext> = {};
      if (update.messages) {
        next.messages = update.messages;
        const declared = new Map<string, string>();
        applySystemMessages(declared, update.messages);
        next.declared = [...declared];
      }
      if (update.toolSet) {
        next.tools = update.toolSet.tools;
        next.sequentialTools = update.toolSet.sequentialTools;
      }
      if (update.model) next.model = update.model;
      if (update.thinkingLevel) next.thinkingLevel = update.thinkingLevel;
      if (update.prepared && update.prepared.length > 0) next.prepared = context.prepared.concat(update.prepared);
      return next;
    }),
    // R5, R41: the final message replaces the streamed partial at the end of the transcript.
    appendAssistant: assign(({ context }, message: AssistantMessage) => ({
      ...appended(context, [message]),
      assistant: message,
      requestMessages: null,
      llmMessages: null,
    })),
    // R28: a truncated response's calls are rejected, never executed.
    rejectTruncatedCalls: enqueueActions(({ context, enqueue }) => {
      const results: ToolResultMessage[] = [];
      for (const call of toolCallsOf(context.assistant!)) {
        const result = truncatedCallResult(call);
        enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
        enqueue.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: true });
        const message = toolResultMessage(call, result, true, undefined);
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        results.push(message);
      }
      enqueue.assign({ ...appended(context, results), toolResults: results });
    }),
    startBatch: assign(({ context }) => {
      const calls = toolCallsOf(context.assistant!);
      return { batch: { calls, cursor: 0, outcomes: calls.map(() => null), ready: [] } };
    }),
    // R21: tool_execution_start with the model's raw arguments, then the call's actor.
    startCall: enqueueActions(({ context, enqueue }, params: { mode: "sequential" | "parallel" }) => {
      const batch = context.batch!;
      const call = batch.calls[batch.cursor];
      enqueue.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
      enqueue.spawnChild("toolCall", {
        id: toolChildId(batch.cursor),
        input: {
          index: batch.cursor,
          toolCall: call,
          mode: params.mode,
          hooks: { beforeToolCall: context.hooks.beforeToolCall, afterToolCall: context.hooks.afterToolCall },
        },
      });
    }),
    advanceCursor: assign(({ context }) => ({ batch: { ...context.batch!, cursor: context.batch!.cursor + 1 } })),
    markReady: assign(({ context }, index: number) => ({
      batch: { ...context.batch!, ready: context.batch!.ready.concat(index) },
    })),
    // R25: every call that passed its preflight executes now, together.
    executeReadyCalls: enqueueActions(({ context, enqueue }) => {
      for (const index of context.batch!.ready) enqueue.sendTo(toolChildId(index), { type: "EXECUTE" });
    }),
    // R22, R26: one finalized outcome per call; its actor is stopped at once (bounded children).
    settleCall: enqueueActions(({ context, enqueue }, outcome: ToolCallOutput) => {
      const batch = context.batch!;
      const call = batch.calls[outcome.index];
      const outcomes = batch.outcomes.slice();
      outcomes[outcome.index] = outcome;
      enqueue.assign({ batch: { ...batch, outcomes } });
      enqueue(stopChild(toolChildId(outcome.index)));
      enqueue.emit({
        type: "tool_execution_end",
        toolCallId: call.id,
        toolName: call.name,
        result: outcome.result,
        isError: outcome.isError,
        ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      });
    }),
    // R24: sequential results are appended one by one; R25: parallel ones in source order at the end.
    appendResults: enqueueActions(({ context, enqueue }, params: { from: number; to: number }) => {
      const batch = context.batch!;
      const messages: ToolResultMessage[] = [];
      for (let i = params.from; i < params.to; i++) {
        const outcome = batch.outcomes[i]!;
        const message = toolResultMessage(batch.calls[i], outcome.result, outcome.isError, outcome.durationMs);
        enqueue.emit({ type: "message_start", message });
        enqueue.emit({ type: "message_end", message });
        messages.push(message);
      }
      enqueue.assign({ ...appended(context, messages), toolResults: context.toolResults.concat(messages) });
    }),
    recordDecision: assign((_, decision: "continue" | "end" | null) => ({ decision })),
    emitTurnEnd: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: "turn_end", message: context.assistant!, toolResults: context.toolResults });
      enqueue.assign({ turnOpen: false });
    }),
    recordFailure: assign(({ context }, params: { error: unknown }) => {
      const error = params.error as { message?: unknown; partial?: AssistantMessage } | undefined;
      const text = error instanceof Error ? error.message : String(error);
      // A stream that threw after `start` closed its partial itself; it belongs to the run.
      const partial = error && typeof error === "object" && "partial" in error ? error.partial : undefined;
      return { failure: text, ...(partial ? appended(context, [partial]) : {}) };
    }),
    // R56: an assistant failure message, then turn_end (opening the turn first if none is open).
    emitFailure: enqueueActions(({ context, enqueue }) => {
      if (!context.turnOpen) enqueue.emit({ type: "turn_start" });
      const message = failureMessage(context, context.failure ?? "Unknown failure");
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.emit({ type: "turn_end", message, toolResults: [] });
      enqueue.assign({ ...appended(context, [message]), assistant: message, turnOpen: false });
    }),
    emitAgentEnd: enqueueActions(({ context, enqueue }) => {
      enqueue.emit({ type: "agent_end", messages: context.newMessages });
    }),
  },
  guards: {
    pollsInitialSteering: ({ context }) => context.hooks.getSteeringMessages && !context.skipInitialSteeringPoll,
    hasPrepareNextTurn: ({ context }) => context.hooks.prepareNextTurn,
    // R4a: steering is polled again when nothing is pending.
    repollsSteering: ({ context }) => context.hooks.getSteeringMessages && context.pending.length === 0,
    hasPrepareRequest: ({ context }) => context.hooks.prepareRequest,
    hasTransformContext: ({ context }) => context.hooks.transformContext,
    hasGetApiKey: ({ context }) => context.hooks.getApiKey,
    hasFinishTurn: ({ context }) => context.hooks.finishTurn,
    hasGetSteeringMessages: ({ context }) => context.hooks.getSteeringMessages,
    hasGetFollowUpMessages: ({ context }) => context.hooks.getFollowUpMessages,
    isErrorOrAborted: ({ context }) => isFailedResponse(context.assistant),
    isTruncatedWithToolCalls: ({ context }) =>
      context.assistant!.stopReason === "length" && toolCallsOf(context.assistant!).length > 0,
    hasToolCalls: ({ context }) => toolCallsOf(context.assistant!).length > 0,
    runsSequentially: ({ context }) => runsSequentially(context, toolCallsOf(context.assistant!)),
    hasNextCall: ({ context }) => context.batch!.cursor + 1 < context.batch!.calls.length,
    allCallsSettled: ({ context }) => context.batch!.outcomes.every((outcome) => outcome !== null),
    decidedEnd: ({ context }) => context.decision === "end",
    // R9, R27: tool results to answer (unless every result terminates) or pending steering.
    continuesInnerLoop: ({ context }) =>
      (context.toolResults.length > 0 && !batchTerminates(context.batch)) || context.pending.length > 0,
    // R10, R11: an explicit continue asks for exactly one more request.
    decidedContinue: ({ context }) => context.decision === "continue",
  },
}).createMachine({
  id: "run",
  context: ({ input }) => initialRunContext(input),
  initial: "starting",
  states: {
    // R1, R2: agent_start, turn_start, then the prompts (after R30).
    starting: {
      entry: ["emitAgentStart", "openTurn", { type: "injectMessages", params: ({ context }) => ({ messages: context.pending }) }],
      always: [
        { guard: "pollsInitialSteering", target: "pollingInitialSteering" },
        { target: "turn.injectingMessages" },
      ],
    },
    // R3: steering is polled once at run start.
    pollingInitialSteering: {
      invoke: {
        src: "getSteeringMessages",
        onDone: { target: "turn.injectingMessages", actions: { type: "queuePending", params: ({ event }) => event.output } },
        onError: { target: "failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
      },
    },
    turn: {
      initial: "startingTurn",
      states: {
        // R4a: the completed turn may replace context, model, thinking level, or add messages.
        preparingNextTurn: {
          invoke: {
            src: "prepareNextTurn",
            input: ({ context }) => turnSnapshot(context),
            onDone: { target: "choosingSteeringRepoll", actions: { type: "applyUpdate", params: ({ event }) => event.output } },
            onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
          },
        },
        choosingSteeringRepoll: {
          always: [{ guard: "repollsSteering", target: "repollingSteering" }, { target: "startingTurn" }],
        },
        // R4a: nothing pending, so steering is polled again.
        repollingSteering: {
          invoke: {
            src: "getSteeringMessages",
            onDone: { target: "startingTurn", actions: { type: "queuePending", params: ({ event }) => event.output } },
            onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
          },
        },
        startingTurn: {
          entry: "openTurn",
          always: "injectingMessages",
        },
        // R4b, R30: declare tool changes, inject prepared and pending messages.
        injectingMessages: {
          entry: { type: "injectMessages", params: ({ context }) => ({ messages: [...context.prepared, ...context.pending] }) },
          always: [
            { guard: "hasPrepareRequest", target: "preparingRequest" },
            { guard: "hasTransformContext", target: "requesting.transformingContext" },
            { target: "requesting.convertingToLlm" },
          ],
        },
        // R4c: the request may replace context, model and thinking level for this and later requests.
        preparingRequest: {
          invoke: {
            src: "prepareRequest",
            input: ({ context }) => ({ messages: context.messages, model: context.model, thinkingLevel: context.thinkingLevel }),
            onDone: [
              {
                guard: "hasTransformContext",
                target: "requesting.transformingContext",
                actions: { type: "applyUpdate", params: ({ event }) => event.output },
              },
              { target: "requesting.convertingToLlm", actions: { type: "applyUpdate", params: ({ event }) => event.output } },
            ],
            onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
          },
        },
        // R40: transformContext → convertToLlm → normalize → getApiKey → stream.
        requesting: {
          initial: "convertingToLlm",
          states: {
            transformingContext: {
              invoke: {
                src: "transformContext",
                input: ({ context }) => ({ messages: context.messages }),
                onDone: { target: "convertingToLlm", actions: assign({ requestMessages: ({ event }) => event.output }) },
                onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
              },
            },
            convertingToLlm: {
              invoke: {
                src: "convertToLlm",
                input: ({ context }) => ({ messages: context.requestMessages ?? context.messages }),
                onDone: [
                  { guard: "hasGetApiKey", target: "resolvingApiKey", actions: assign({ llmMessages: ({ event }) => event.output }) },
                  { target: "streaming", actions: assign({ llmMessages: ({ event }) => event.output }) },
                ],
                onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
              },
            },
            resolvingApiKey: {
              invoke: {
                src: "resolveApiKey",
                input: ({ context }) => ({ provider: context.model.provider }),
                onDone: "streaming",
                onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
              },
            },
            // R41, R42: one assistant message per request.
            streaming: {
              invoke: {
                src: "streamResponse",
                input: ({ context }) => ({ messages: context.llmMessages!, model: context.model, thinkingLevel: context.thinkingLevel }),
                onDone: { target: "#run.turn.routingResponse", actions: { type: "appendAssistant", params: ({ event }) => event.output } },
                onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
              },
            },
          },
        },
        // R6, R7, R28: what the response asks for.
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
              entry: { type: "startCall", params: { mode: "sequential" } },
              on: {
                "xstate.done.actor.*": [
                  {
                    guard: "hasNextCall",
                    target: "sequentially",
                    reenter: true,
                    actions: [
                      { type: "settleCall", params: ({ event }) => (event as ToolDoneEvent).output },
                      { type: "appendResults", params: ({ context }) => ({ from: context.batch!.cursor, to: context.batch!.cursor + 1 }) },
                      "advanceCursor",
                    ],
                  },
                  {
                    target: "#run.turn.completingTurn",
                    actions: [
                      { type: "settleCall", params: ({ event }) => (event as ToolDoneEvent).output },
                      { type: "appendResults", params: ({ context }) => ({ from: context.batch!.cursor, to: context.batch!.cursor + 1 }) },
                    ],
                  },
                ],
                "xstate.error.actor.*": [
                  {
                    guard: "hasNextCall",
                    target: "sequentially",
                    reenter: true,
                    actions: [
                      { type: "settleCall", params: ({ event }) => crashedCall(event as ToolErrorEvent) },
                      { type: "appendResults", params: ({ context }) => ({ from: context.batch!.cursor, to: context.batch!.cursor + 1 }) },
                      "advanceCursor",
                    ],
                  },
                  {
                    target: "#run.turn.completingTurn",
                    actions: [
                      { type: "settleCall", params: ({ event }) => crashedCall(event as ToolErrorEvent) },
                      { type: "appendResults", params: ({ context }) => ({ from: context.batch!.cursor, to: context.batch!.cursor + 1 }) },
                    ],
                  },
                ],
              },
            },
            // R25: preflights one by one in source order, then concurrent execution.
            inParallel: {
              initial: "preflighting",
              states: {
                preflighting: {
                  entry: { type: "startCall", params: { mode: "parallel" } },
                  on: {
                    "TOOL.READY": [
                      {
                        guard: "hasNextCall",
                        target: "preflighting",
                        reenter: true,
                        actions: [{ type: "markReady", params: ({ event }) => event.index }, "advanceCursor"],
                      },
                      { target: "running", actions: { type: "markReady", params: ({ event }) => event.index } },
                    ],
                    // An immediate result (error, block, abort) ends its call at once.
                    "xstate.done.actor.*": [
                      {
                        guard: "hasNextCall",
                        target: "preflighting",
                        reenter: true,
                        actions: [{ type: "settleCall", params: ({ event }) => (event as ToolDoneEvent).output }, "advanceCursor"],
                      },
                      { target: "running", actions: { type: "settleCall", params: ({ event }) => (event as ToolDoneEvent).output } },
                    ],
                    "xstate.error.actor.*": [
                      {
                        guard: "hasNextCall",
                        target: "preflighting",
                        reenter: true,
                        actions: [{ type: "settleCall", params: ({ event }) => crashedCall(event as ToolErrorEvent) }, "advanceCursor"],
                      },
                      { target: "running", actions: { type: "settleCall", params: ({ event }) => crashedCall(event as ToolErrorEvent) } },
                    ],
                  },
                },
                // tool_execution_end in completion order.
                running: {
                  entry: "executeReadyCalls",
                  always: { guard: "allCallsSettled", target: "appendingResults" },
                  on: {
                    "xstate.done.actor.*": { actions: { type: "settleCall", params: ({ event }) => (event as ToolDoneEvent).output } },
                    "xstate.error.actor.*": { actions: { type: "settleCall", params: ({ event }) => crashedCall(event as ToolErrorEvent) } },
                  },
                },
                // Result messages in source order, after every call finished.
                appendingResults: {
                  entry: { type: "appendResults", params: ({ context }) => ({ from: 0, to: context.batch!.calls.length }) },
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
          invoke: {
            src: "finishTurn",
            input: ({ context }) => turnSnapshot(context),
            onDone: { target: "endingTurn", actions: { type: "recordDecision", params: ({ event }) => event.output } },
            onError: { target: "#run.failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
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
      invoke: {
        src: "getSteeringMessages",
        onDone: { target: "choosingNextStep", actions: { type: "queuePending", params: ({ event }) => event.output } },
        onError: { target: "failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
      },
    },
    // R9, R10: the inner loop continues, or follow-ups are polled, or the run ends.
    choosingNextStep: {
      always: [
        { guard: "continuesInnerLoop", target: "choosingNextTurn" },
        { guard: "hasGetFollowUpMessages", target: "pollingFollowUps" },
        { guard: "decidedContinue", target: "choosingNextTurn" },
        { target: "done" },
      ],
    },
    // R10: follow-ups when the run would otherwise end.
    pollingFollowUps: {
      invoke: {
        src: "getFollowUpMessages",
        onDone: { target: "choosingAfterFollowUps", actions: { type: "queuePending", params: ({ event }) => event.output } },
        onError: { target: "failing", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
      },
    },
    choosingAfterFollowUps: {
      always: [
        { guard: ({ context }) => context.pending.length > 0, target: "choosingNextTurn" },
        { guard: "decidedContinue", target: "choosingNextTurn" },
        { target: "done" },
      ],
    },
    // R4a: the next turn starts with prepareNextTurn when configured.
    choosingNextTurn: {
      always: [
        { guard: "hasPrepareNextTurn", target: "turn.preparingNextTurn" },
        { target: "turn.choosingSteeringRepoll" },
      ],
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
    message: context.assistant!,
    toolResults: context.toolResults,
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
      content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }],
      details: {},
      isError: true,
    },
    isError: true,
  };
}
