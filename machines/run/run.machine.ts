/**
 * One run of the agent loop (SPEC R1–R12, R20–R30, R40–R42, R56, R60–R63, R70–R73, R82, R100), from
 * `agent_start` to `agent_end`. Every lifecycle step is a state; every decision between steps is a
 * small state of guarded `always` transitions (`closingTurn`, `openingNextTurn`, `routingResponse`,
 * `handlingResponse`, `choosingNextStep` …), so each rule is a state, a guard or a transition,
 * written out here with its rule id. The actions live in `actions/`, one module per rule group.
 *
 * A step that awaits app code asks the run's step worker (`steps`, invoked at the root; protocol
 * and plumbing in `../steps.ts`) for its job on entry and leaves on the reply; a hook's state is
 * entered only when the hook is configured. Tool calls are spawned `toolCall` children with
 * bounded ids (`tool:<index in batch>`), stopped once settled; their step requests reach the worker
 * through the run (`step.run`/`step.cancel`, forwarded while the call is still a child).
 *
 * On the root, what any step can raise: a failed step ends the run through `failing` (R56),
 * `run.abort` marks the run aborted (R29), `step.reissue` (sent by a restored worker, R13) asks again
 * for the job of the step the run was waiting in, and an approval decision reaches its call (R82).
 *
 * The machine emits the `AgentEvent`s of its own transitions; the worker emits the ones produced
 * inside a job (stream deltas, tool updates) straight to the run's event sink, in one order. The
 * definition is pure: no clock, no I/O; times come from the steps' replies (R13). State ids are
 * part of persisted snapshots (R13): the resting states keep their ids across versions.
 */
import { and, assertEvent, assign, not, sendTo, setup, type ActorRefFrom } from "xstate";
import type { AnyAgentEvent } from "../../src/protocol/index.js";
import { placeholderActor } from "../placeholders.js";
import { forwardStep, isRequesterActive, stepActions, stepState, type StepWorkerLogic } from "../steps.js";
import { toolCallMachine } from "../tool-call.machine.js";
import { droppedCalls, endedTruncated, escalatedLimit, estimatedTokens, hasMessagesToInject, hasToolCalls, initialRunContext, batchTerminates, isFailedResponse, runsSequentially, toolCallsOf, unsettledCalls } from "./helpers.js";
import { runStepInputs, type RunStepName } from "./step-inputs.js";
import type { RunContext, RunInput, RunOutput } from "./types.js";
import type { RunEvent, ToolDoneEvent } from "./setup.js";
import { compactReply, replyOutput, saysFollowUpsEmpty, saysSteeringEmpty } from "../steps.js";
import { requestActions, response, streamed } from "./actions/request.js";
import { settleCall, toolBatchActions } from "./actions/tool-batch.js";
import { abortedWhileStreaming, streamingToolActions } from "./actions/streaming-tools.js";
import { approvalActions } from "./actions/approval.js";
import { budgetExceeded, turnActions } from "./actions/turn.js";
import { acceptedAnswer, outputActions, outputAttemptsExhausted } from "./actions/output.js";

export type { RunContext, RunInput, RunOutput, StateUpdate, TurnSnapshot, TurnUpdate } from "./types.js";
export type { RunEvent, ToolDoneEvent, ToolErrorEvent } from "./setup.js";

export const runMachine = setup({
  types: {
    input: {} as RunInput,
    context: {} as RunContext,
    events: {} as RunEvent,
    output: {} as RunOutput,
    emitted: {} as AnyAgentEvent,
  },
  actors: {
    /** The run's step worker (`../steps.ts`): runs each step's job and replies. Provided by the runtime. */
    steps: placeholderActor<StepWorkerLogic>("steps"),
    toolCall: toolCallMachine,
  },
  actions: {
    // R3: the run's first job (asked for in its first macrostep) checks steering when the initial poll is deferred to it.
    ...stepActions<RunContext, RunEvent, RunStepName>(runStepInputs, "child", (context, event) => (event as { type: string }).type === "xstate.init" && context.settings.defersInitialSteeringPoll),
    // A tool call's step request or cancel, on its way to the worker.
    forwardStep: forwardStep<RunContext, RunEvent>(),
    // R29: the signal of every job, running or to come, aborts; the run winds down on its own.
    markAborted: assign({ aborted: true }),
    abortSteps: sendTo("steps", { type: "run.abort" }),
    ...turnActions,
    ...requestActions,
    ...toolBatchActions,
    ...streamingToolActions,
    ...approvalActions,
    ...outputActions,
  },
  guards: {
    // Which hooks are configured: a hook's state is entered only then.
    // R3: unless it is deferred to the run's first job (the Agent's own steering queue was empty as the run started).
    pollsInitialSteering: ({ context }) =>
      context.settings.hooks.getSteeringMessages && !context.settings.skipInitialSteeringPoll && !context.settings.defersInitialSteeringPoll,
    hasPrepareNextTurn: ({ context }) => context.settings.hooks.prepareNextTurn,
    hasPrepareRequest: ({ context }) => context.settings.hooks.prepareRequest,
    hasTransformContext: ({ context }) => context.settings.hooks.transformContext,
    hasGetApiKey: ({ context }) => context.settings.hooks.getApiKey,
    hasRequestLimiter: ({ context }) => context.settings.hooks.requestLimiter,
    hasFinishTurn: ({ context }) => context.settings.hooks.finishTurn,
    hasGetSteeringMessages: ({ context }) => context.settings.hooks.getSteeringMessages,
    hasGetFollowUpMessages: ({ context }) => context.settings.hooks.getFollowUpMessages,
    // R4a: steering is polled again when nothing is pending.
    repollsSteering: ({ context }) => context.settings.hooks.getSteeringMessages && context.pending.length === 0,
    // R4a: the steering poll just taken (this macrostep's event: nothing was emitted and no app code
    // ran since) took nothing and said the Agent's steering queue was still empty where the re-poll
    // would drain, so a re-poll now would take nothing. Only the Agent's own queues say so (SteeringPoll).
    steeringKnownEmpty: ({ event }) => event.type === "step.getSteeringMessages.done" && saysSteeringEmpty(event.output),
    // R60: a transient failure before content, with attempts left (asked of the stream's reply, before it is appended).
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
      return message.stopReason === "length" && !hasToolCalls(message) && !context.aborted && escalatedLimit(context, message) !== undefined;
    },
    // R6: the turn's response (appended) ended in error or aborted.
    isErrorOrAborted: ({ context }) => isFailedResponse(context.turn.assistant),
    // R28: the response was cut off by the output limit with tool calls in it.
    truncatesCalls: ({ context }) => context.turn.assistant!.stopReason === "length" && hasToolCalls(context.turn.assistant!),
    // R7: the response asks for tool calls.
    callsTools: ({ context }) => hasToolCalls(context.turn.assistant!),
    // R20: configured sequential, or a call targets a sequential tool.
    runsSequentially: ({ context }) => runsSequentially(context, toolCallsOf(context.turn.assistant!)),
    // R62: proactive compaction at a turn boundary.
    exceedsCompactThreshold: ({ context }) => {
      const threshold = context.settings.recovery.compact?.thresholdTokens ?? null;
      return threshold !== null && !context.aborted && !context.recovery.proactiveOff && estimatedTokens(context) > threshold;
    },
    // R62: the compactor returned the transcript as it was.
    foundNothingToCompact: ({ event }) => compactReply(replyOutput(event, "compact")).messages === null,
    // R61: the turn's answer was cut off without calls; recover, or give up after maxRecoveries.
    recoversOutputLimit: ({ context }) => {
      const limit = context.settings.recovery.outputLimit;
      return limit !== null && endedTruncated(context) && context.recovery.recoveries < limit.maxRecoveries;
    },
    outputLimitExhausted: ({ context }) => context.settings.recovery.outputLimit !== null && endedTruncated(context),
    // R29: the run's signal was aborted.
    isAborted: ({ context }) => context.aborted,
    // R72: aborted while the response still streams (calls not started never start; a call that settles ends aborted).
    isAbortedWhileStreaming: ({ context }) => abortedWhileStreaming(context),
    // R73: the call's own execute failed and its tool cancels the rest of the batch.
    cancelsSiblings: ({ context, event }) => {
      const outcome = (event as ToolDoneEvent).output;
      return outcome.executionFailed === true && context.toolSet.siblingCancellingTools.includes(context.turn.batch!.calls[outcome.index].name);
    },
    cancelsLaterCalls: and(["cancelsSiblings", "hasLaterCall"]),
    // R70: streaming mode is on.
    streamsTools: ({ context }) => context.settings.streamingTools !== null,
    // R72: calls were reported while the response streamed (a toolcall_end arrived).
    hasStreamedCalls: ({ context }) => context.turn.batch?.streamed !== undefined,
    // R72: a streamed call not settled yet that the final message does not list (matched by id, never by place).
    dropsStreamedCalls: ({ context }) => {
      const batch = context.turn.batch;
      return batch?.streamed !== undefined && droppedCalls(batch, toolCallsOf(context.turn.assistant!)).some((index) => batch.outcomes[index] === null);
    },
    // R71: every call of the streamed batch settled (results follow in source order).
    settledEveryCall: ({ context }) => context.turn.batch!.outcomes.every((outcome) => outcome !== null),
    // R24: does a sequential batch have a call after the one in progress?
    hasLaterCall: ({ context }) => context.turn.batch!.cursor + 1 < context.turn.batch!.calls.length,
    // R21: every call the preflight saw ended with an immediate result (nothing to execute).
    preflightPassesNoCall: ({ event }) => replyOutput(event, "preflightCalls").every((preflight) => !preflight.ready),
    // R25: decided before the transition's actions settle the call: is this the batch's last outstanding call?
    settlesLastCall: ({ context }) => unsettledCalls(context.turn.batch!) === 1,
    // R8: finishTurn said end.
    decidedEnd: ({ context }) => context.turn.decision === "end",
    // R63: completed turns, tokens or cost at a limit.
    budgetReached: ({ context }) => budgetExceeded(context) !== undefined,
    // R4b, R30: prepared or pending messages, or tool changes to declare.
    hasMessagesToInject: ({ context }) => hasMessagesToInject(context),
    // R9, R27: tool results to answer (unless every finalized result says `terminate`) or pending
    // messages. (One guard, not a composite of five: it is evaluated after every turn.)
    continuesInnerLoop: ({ context }) =>
      (context.turn.toolResults.length > 0 && !batchTerminates(context.turn)) || context.pending.length > 0,
    // R10: the steering poll just taken (this macrostep's event: nothing was emitted and no app code
    // ran since) said the Agent's follow-up queue was empty, so a follow-up poll now would take nothing.
    // Only the Agent's own queues say so; a run with an app's hooks always polls (SteeringPoll).
    followUpsKnownEmpty: ({ event }) => event.type === "step.getSteeringMessages.done" && saysFollowUpsEmpty(event.output),
    // R9, R10: steering or follow-ups wait for the next turn.
    hasPendingMessages: ({ context }) => context.pending.length > 0,
    // R10, R11: an explicit continue asks for exactly one more request.
    decidedContinue: ({ context }) => context.turn.decision === "continue",
    // R100: the turn's final answer validated, or every invalid attempt allowed was used; the run would end without one.
    settlesOutput: ({ context }) => acceptedAnswer(context) !== undefined || outputAttemptsExhausted(context),
    exhaustsOutputAttempts: ({ context }) => outputAttemptsExhausted(context),
    awaitsOutput: ({ context }) => context.settings.output !== null && !context.aborted,
    // R82: the decision is for a call that waits for it.
    isWaitingApproval: ({ context, event }) => {
      assertEvent(event, ["approval.approve", "approval.reject"]);
      return context.approval.pending.some((pending) => pending.approvalId === event.approvalId);
    },
    // A tool call's step request or cancel comes from a call still running.
    isRequesterActive,
    // R82, R13: a restored streamed call reports again that it waits; its id was issued already.
    hasIssuedApproval: ({ context, event }) => {
      assertEvent(event, "call.approvalNeeded");
      return context.approval.pending.some((pending) => pending.index === event.index);
    },
  },
}).createMachine({
  id: "run",
  context: ({ input }) => initialRunContext(input),
  invoke: { id: "steps", src: "steps", input: ({ context }) => ({ host: context.host }) },
  on: {
    // R56: any step that fails (a hook, conversion or the stream function threw) ends the run.
    "step.failed": { target: ".failing", actions: "recordFailure" },
    // R29: every job's signal aborts; calls waiting for approval settle aborted (R82).
    "run.abort": { actions: ["markAborted", "abortSteps", "abortApprovals"] },
    // R13: a restored worker asks the run (and its started streamed calls, R70) for their jobs again.
    "step.reissue": { actions: ["reissueStep", "retellStartedCalls"] },
    // R82: a decision reaches its waiting call wherever the call waits; an id that is not waiting is ignored.
    "approval.approve": { guard: "isWaitingApproval", actions: ["reportDecision", "approveCall"] },
    "approval.reject": { guard: "isWaitingApproval", actions: ["reportDecision", "rejectCall"] },
    // A tool call's steps run on the run's worker (a request from a call that settled meanwhile starts nothing).
    "step.run": { guard: "isRequesterActive", actions: "forwardStep" },
    "step.cancel": { actions: "forwardStep" },
  },
  initial: "starting",
  states: {
    // R1, R2: agent_start, turn_start, then the prompts (after R30).
    starting: {
      entry: ["emitAgentStart", "replayDeclaredTools", "emitTurnStart", "markTurnOpen", { type: "injectPending", params: { promptsOnly: true } }],
      always: [
        { guard: "pollsInitialSteering", target: "pollingInitialSteering" },
        // (R3 deferred: the first job's worker looks at the Agent's steering queue where the poll would drain, see `turn`.)
        { target: "turn.injectingMessages" },
      ],
    },
    // R3: steering is polled once at run start.
    pollingInitialSteering: {
      ...stepState("getSteeringMessages"),
      on: { "step.getSteeringMessages.done": { target: "turn.injectingMessages", actions: "queuePending" } },
    },
    turn: {
      initial: "injectingMessages",
      on: {
        // R3 deferred: steering was queued while the run's first events reached the listeners, so
        // the run's first job did not begin; the initial poll takes it (as the reference's would have).
        "step.steeringQueued": { target: "#run.pollingInitialSteering", actions: "cancelStep" },
      },
      states: {
        // R4a: a next turn: prepareNextTurn when configured; steering again when nothing is pending; turn_start.
        openingNextTurn: {
          always: [
            { guard: "hasPrepareNextTurn", target: "preparingNextTurn" },
            // (Unless the steering poll that led here already answered it: then as after an empty re-poll.)
            { guard: and(["repollsSteering", not("steeringKnownEmpty")]), target: "repollingSteering" },
            { target: "injectingMessages", actions: ["emitTurnStart", "markTurnOpen"] },
          ],
        },
        // R4a: the completed turn may replace context, model, thinking level, or add messages.
        preparingNextTurn: {
          ...stepState("prepareNextTurn"),
          on: {
            "step.prepareNextTurn.done": [
              { guard: "repollsSteering", target: "repollingSteering", actions: "applyUpdate" },
              { target: "injectingMessages", actions: ["applyUpdate", "emitTurnStart", "markTurnOpen"] },
            ],
          },
        },
        // R4a: nothing pending, so steering is polled again; then turn_start.
        repollingSteering: {
          ...stepState("getSteeringMessages"),
          on: { "step.getSteeringMessages.done": { target: "injectingMessages", actions: ["queuePending", "emitTurnStart", "markTurnOpen"] } },
        },
        // R4b, R30: declare tool changes, inject prepared and pending messages.
        injectingMessages: {
          always: [
            // (Nothing is pending and the tools are declared on most turns: then nothing runs.)
            { guard: "hasMessagesToInject", actions: "injectPending" },
            // R62: proactive compaction above the token threshold.
            { guard: "exceedsCompactThreshold", target: "compactingProactively", actions: { type: "startCompaction", params: { reason: "threshold" } } },
            { guard: "hasPrepareRequest", target: "preparingRequest" },
            { target: "requesting" },
          ],
        },
        // R62: the transcript grew past the threshold; compact it before this turn's request.
        compactingProactively: {
          ...stepState("compact"),
          on: {
            "step.compact.done": [
              { guard: "hasPrepareRequest", target: "preparingRequest", actions: ["countCompaction", "replaceTranscript"] },
              { target: "requesting", actions: ["countCompaction", "replaceTranscript"] },
            ],
          },
        },
        // R4c: the request may replace context, model and thinking level for this and later requests.
        preparingRequest: {
          ...stepState("prepareRequest"),
          on: { "step.prepareRequest.done": { target: "requesting", actions: "applyUpdate" } },
        },
        // R40: transformContext → convertToLlm → normalize → getApiKey → (request slot) → stream.
        requesting: {
          initial: "startingRequest",
          states: {
            // R40: transformContext when configured, else convertToLlm.
            startingRequest: {
              always: [{ guard: "hasTransformContext", target: "transformingContext" }, { target: "convertingToLlm" }],
            },
            transformingContext: {
              ...stepState("transformContext"),
              on: { "step.transformContext.done": { target: "convertingToLlm", actions: "recordTransformed" } },
            },
            // R40: normalized on the way (only provider messages, in order, reach the stream function).
            convertingToLlm: {
              ...stepState("convertToLlm"),
              on: { "step.convertToLlm.done": { target: "sendingRequest", actions: "recordConverted" } },
            },
            // R40: the key is resolved for every request (into the runtime, never into the machine).
            sendingRequest: {
              always: [{ guard: "hasGetApiKey", target: "resolvingApiKey" }, { target: "openingStream" }],
            },
            resolvingApiKey: {
              ...stepState("resolveApiKey"),
              on: { "step.resolveApiKey.done": { target: "openingStream" } },
            },
            // A shared request limiter first, when configured; R70: streaming mode runs calls meanwhile.
            openingStream: {
              always: [
                { guard: "hasRequestLimiter", target: "awaitingRequestSlot" },
                { guard: "streamsTools", target: "streamingWithTools" },
                { target: "streaming" },
              ],
            },
            // The request waits for its slot (held until its response ended).
            awaitingRequestSlot: {
              ...stepState("acquireRequestSlot"),
              on: { "step.acquireRequestSlot.done": [{ guard: "streamsTools", target: "streamingWithTools" }, { target: "streaming" }] },
            },
            // R41, R42: the worker streams the response and emits its message events.
            streaming: {
              ...stepState("streamResponse"),
              // R63: every response counts, whatever its route.
              on: { "step.streamResponse.done": { target: "routingResponse", actions: "countResponse" } },
            },
            // R70: the response streams on one side; on the other, the calls whose toolcall_end
            // arrived check themselves, start in source order and run.
            streamingWithTools: {
              type: "parallel",
              states: {
                response: {
                  initial: "receiving",
                  states: {
                    // R41, R42: the response (routed as `streaming`'s).
                    receiving: {
                      ...stepState("streamResponse"),
                      on: { "step.streamResponse.done": { target: "#run.turn.requesting.routingResponse", actions: "countResponse" } },
                    },
                    // R70, R71: ended with calls: the calls not yet started start as they may;
                    // once every call settled, the result messages in source order.
                    ended: {
                      always: { guard: "settledEveryCall", target: "#run.turn.closingTurn", actions: "appendResults" },
                    },
                  },
                },
                runningCalls: {
                  on: {
                    // R70: a call whose toolcall_end arrived gets its actor, which checks it.
                    "stream.toolCallReady": { actions: "spawnStreamedCall" },
                    "call.checked": [
                      // R72: once the run is aborted, a call not started while the response streams never starts.
                      { guard: "isAbortedWhileStreaming", actions: "recordCheck" },
                      // R70: calls start in source order, an unsafe one alone, at most maxConcurrentTools.
                      { actions: ["recordCheck", "startCalls"] },
                    ],
                    "call.approvalNeeded": [
                      // R13: a restored call reports again; its id was issued already.
                      { guard: "hasIssuedApproval" },
                      // R82: the call waits; its id issued here (decisions reach it from the root; R29: an aborted run asks nobody).
                      { actions: "requestStreamedApproval" },
                    ],
                    "xstate.done.actor.*": [
                      // R72: a call that settles while an aborted run's response streams ends aborted (and cancels nothing).
                      { guard: "isAbortedWhileStreaming", actions: { type: "settleStreamedCall", params: { aborted: true } } },
                      // R73: its tool cancels on error: running calls are cancelled, calls not started are not run.
                      { guard: "cancelsSiblings", actions: [{ type: "settleStreamedCall", params: { aborted: false } }, "cancelStreamedCalls"] },
                      // R71: tool_execution_end in completion order; the next calls may start.
                      { actions: [{ type: "settleStreamedCall", params: { aborted: false } }, "startCalls"] },
                    ],
                    // R26: a crashed call actor (a runtime defect) still yields exactly one result (R72 as above).
                    "xstate.error.actor.*": { actions: ["settleStreamedCall", "startCalls"] },
                  },
                },
              },
            },
            // R60–R62: a response something recovers from is discarded (calls a discarded response
            // started are aborted, R72); any other is appended (R5) and handled.
            routingResponse: {
              always: [
                // R60: a transient failure before content: back off, then another attempt.
                { guard: "retriesFailure", target: "schedulingRetry", actions: ["abortStreamedCalls", "recordRetryableFailure"] },
                // R62: the prompt overflowed: compact once, then the same request again.
                {
                  guard: "compactsOverflow",
                  target: "#run.turn.compactingOnOverflow",
                  actions: ["abortStreamedCalls", { type: "startCompaction", params: { reason: "overflow" } }],
                },
                // R61: cut off by the output limit: discard it and ask again with the higher limit.
                { guard: "escalatesOutputLimit", target: "sendingRequest", actions: ["abortStreamedCalls", "escalateOutputLimit"] },
                { target: "#run.turn.handlingResponse", actions: "appendAssistant" },
              ],
            },
            // R60: the backoff is drawn (full jitter, the injected random source) …
            schedulingRetry: {
              ...stepState("drawBackoff"),
              on: { "step.drawBackoff.done": { target: "backingOff", actions: "scheduleRetry" } },
            },
            // … and waited for: an abortable state; a restored wait resumes with what was left (R13).
            backingOff: {
              ...stepState("waitForRetry"),
              on: {
                "step.waitForRetry.done": [
                  // R29: an abort during the wait ends the request as aborted; the withheld failure stays unseen.
                  { guard: "isAborted", target: "#run.turn.closingTurn", actions: "surfaceAbortedRetry" },
                  { target: "sendingRequest" },
                ],
              },
            },
          },
        },
        // R62: the request overflowed the window; compact, then the same request once more.
        compactingOnOverflow: {
          ...stepState("compact"),
          on: {
            "step.compact.done": [
              // Nothing to compact: the overflow surfaces at once (prompt_too_long).
              { guard: "foundNothingToCompact", target: "closingTurn", actions: ["countCompaction", "surfaceOverflow"] },
              { target: "requesting", actions: ["countCompaction", "replaceTranscript"] },
            ],
          },
        },
        // R6, R7, R28, R70: what the appended response asks for.
        handlingResponse: {
          always: [
            // R6: an error or aborted response: no tools run (R60, R62: a withheld failure is emitted after all).
            { guard: and(["isErrorOrAborted", "hasStreamedCalls"]), target: "abortingStreamedCalls", actions: "surfaceWithheld" },
            { guard: "isErrorOrAborted", target: "closingTurn", actions: "surfaceWithheld" },
            // R72: a streamed call the final message (which asks for calls) does not list by id is
            // aborted as after an error response, no result message; the calls it lists keep their
            // execution, matched by id (then as below).
            { guard: and(["callsTools", "dropsStreamedCalls"]), actions: "abortDroppedCalls" },
            // R28: a truncated response's calls get error results, not execution: each its start,
            // R28's result, its end and its message. R72: in streaming mode, a call started while the
            // response streamed is aborted with R28's text (no second start).
            { guard: and(["truncatesCalls", "hasStreamedCalls"]), target: "closingTurn", actions: "rejectTruncatedStreamedCalls" },
            { guard: "truncatesCalls", target: "closingTurn", actions: "rejectTruncatedCalls" },
            // R70, R71: the calls not yet known join the ones running; results once every call settled.
            { guard: and(["callsTools", "streamsTools"]), target: "requesting.streamingWithTools.response.ended", actions: ["closeStreamedBatch", "startCalls"] },
            // R20, R24: one call at a time.
            { guard: and(["callsTools", "runsSequentially"]), target: "executingTools.preflightingCall", actions: { type: "startBatch", params: { mode: "sequential" } } },
            // R20, R25: every call preflighted in order, executed concurrently.
            { guard: "callsTools", target: "executingTools.preflightingCalls", actions: { type: "startBatch", params: { mode: "parallel" } } },
            // R72: no calls to answer, but some were reported while it streamed.
            { guard: "hasStreamedCalls", target: "abortingStreamedCalls" },
            { target: "closingTurn" },
          ],
        },
        // R72: a response not answered with its calls: calls started while it streamed are aborted
        // (tool_execution_end `Operation aborted`, no result message). Entered only when calls streamed.
        abortingStreamedCalls: {
          entry: "abortStreamedCalls",
          always: { target: "closingTurn" },
        },
        // R20–R29: the tool batch. Every call is preflighted in source order (start, preparation,
        // beforeToolCall, an immediate result at once); each call that passed executes in its own actor.
        executingTools: {
          initial: "preflightingCalls",
          states: {
            // R24: one call at a time, from its start to its result message.
            preflightingCall: {
              ...stepState("preflightCalls"),
              on: {
                "step.preflightCalls.done": [
                  {
                    guard: and(["preflightPassesNoCall", "hasLaterCall"]),
                    target: "preflightingCall",
                    reenter: true,
                    actions: ["recordImmediateResults", "appendImmediateResult", "advanceCursor"],
                  },
                  { guard: "preflightPassesNoCall", target: "#run.turn.closingTurn", actions: ["recordImmediateResults", "appendImmediateResult"] },
                  { target: "runningSequentially", actions: "spawnPassedCalls" },
                ],
              },
            },
            // R22–R24: the call executes; its result message before the next call starts.
            runningSequentially: {
              on: {
                "xstate.done.actor.*": [
                  // R73: its tool cancels on error, so the later calls are not run.
                  { guard: "cancelsLaterCalls", target: "#run.turn.closingTurn", actions: [...settleCall, "appendSettledResult", "cancelLaterCalls"] },
                  { guard: "hasLaterCall", target: "preflightingCall", actions: [...settleCall, "appendSettledResult", "advanceCursor"] },
                  { target: "#run.turn.closingTurn", actions: [...settleCall, "appendSettledResult"] },
                ],
                // R26: a crashed call actor (a runtime defect) still yields exactly one result.
                "xstate.error.actor.*": [
                  { guard: "hasLaterCall", target: "preflightingCall", actions: [...settleCall, "appendSettledResult", "advanceCursor"] },
                  { target: "#run.turn.closingTurn", actions: [...settleCall, "appendSettledResult"] },
                ],
              },
            },
            // R21, R25: every call, in source order, in one step.
            preflightingCalls: {
              ...stepState("preflightCalls"),
              on: {
                "step.preflightCalls.done": [
                  { guard: "preflightPassesNoCall", target: "#run.turn.closingTurn", actions: ["recordImmediateResults", "appendResults"] },
                  { target: "runningInParallel", actions: ["recordImmediateResults", "spawnPassedCalls"] },
                ],
              },
            },
            // R25: concurrent execution, settled in completion order; once every call settled,
            // the result messages in source order.
            runningInParallel: {
              on: {
                "xstate.done.actor.*": [
                  { guard: "settlesLastCall", target: "#run.turn.closingTurn", actions: [...settleCall, "appendResults"] },
                  // R73: its tool cancels on error: the calls still running are cancelled.
                  { guard: "cancelsSiblings", actions: [...settleCall, "cancelRunningCalls"] },
                  { actions: settleCall },
                ],
                // R26: a crashed call actor (a runtime defect) still yields exactly one result.
                "xstate.error.actor.*": [
                  { guard: "settlesLastCall", target: "#run.turn.closingTurn", actions: [...settleCall, "appendResults"] },
                  { actions: settleCall },
                ],
              },
            },
          },
        },
        // R6, R8: the turn closes with finishTurn when configured (its decision ignored after an error response), then turn_end.
        closingTurn: {
          always: [{ guard: "hasFinishTurn", target: "finishingTurn" }, { target: "endingTurn" }],
        },
        finishingTurn: {
          ...stepState("finishTurn"),
          on: { "step.finishTurn.done": { target: "endingTurn", actions: "recordDecision" } },
        },
        // R6, R8: turn_end; R63: what the turn spent (R61: its truncations, R100: its answer, counted).
        endingTurn: {
          entry: ["emitTurnEnd", "closeTurn"],
          always: [
            // R6: an error or aborted response ends the run (no queue is polled).
            { guard: "isErrorOrAborted", target: "#run.done", actions: "endAsFailedResponse" },
            // R100: a final answer that validated ends the run with its value; the last invalid one ends it as output_invalid.
            { guard: "settlesOutput", target: "#run.done", actions: "settleOutput" },
            // R8: finishTurn said end.
            { guard: "decidedEnd", target: "#run.done", actions: { type: "endAs", params: { reason: "finish_turn_end" } } },
            // R63: a limit reached ends the run before anything else is polled or prepared.
            { guard: "budgetReached", target: "#run.done", actions: "endForBudget" },
            // R61: an answer cut off without calls: a recovery message, or the run ends after maxRecoveries.
            { guard: "recoversOutputLimit", target: "#run.recoveringOutputLimit" },
            { guard: "outputLimitExhausted", target: "#run.done", actions: { type: "endAs", params: { reason: "max_output_tokens" } } },
            // R9: steering after every turn.
            { guard: "hasGetSteeringMessages", target: "#run.pollingSteering" },
            { target: "#run.choosingNextStep" },
          ],
        },
      },
    },
    // R61: a recovery message asks the model to resume where it stopped (injected with the next turn).
    recoveringOutputLimit: {
      entry: "queueRecoveryMessage",
      // (The recovery message is pending, so the next turn follows the steering poll.)
      always: [{ guard: "hasGetSteeringMessages", target: "pollingSteering" }, { target: "turn.openingNextTurn" }],
    },
    // R9: steering after every turn.
    pollingSteering: {
      ...stepState("getSteeringMessages"),
      on: { "step.getSteeringMessages.done": { target: "choosingNextStep", actions: "queuePending" } },
    },
    // R9, R10: the inner loop continues, follow-ups are polled, a continue decision asks once more, or the run ends.
    choosingNextStep: {
      always: [
        { guard: "continuesInnerLoop", target: "turn.openingNextTurn" },
        // R10: follow-ups, unless the Agent's follow-up queue is known to be empty (see the guard):
        // then what follows is what follows an empty poll.
        { guard: and(["hasGetFollowUpMessages", not("followUpsKnownEmpty")]), target: "pollingFollowUps" },
        { guard: "decidedContinue", target: "continuingAsDecided" },
        { guard: "awaitsOutput", target: "askingForAnswer" },
        { target: "done" },
      ],
    },
    // R10: follow-ups when the run would otherwise end.
    pollingFollowUps: {
      ...stepState("getFollowUpMessages"),
      on: { "step.getFollowUpMessages.done": { target: "choosingAfterFollowUps", actions: "queuePending" } },
    },
    // R10: follow-ups continue the loop (steering is not polled again: they are pending).
    choosingAfterFollowUps: {
      always: [
        { guard: "hasPendingMessages", target: "turn.openingNextTurn" },
        { guard: "decidedContinue", target: "continuingAsDecided" },
        { guard: "awaitsOutput", target: "askingForAnswer" },
        { target: "done" },
      ],
    },
    // R100: the run would end without a final answer: that counts as an invalid one; a reminder asks
    // for it (injected with the next turn), or the run ends as output_invalid.
    askingForAnswer: {
      entry: "countMissingAnswer",
      always: [
        { guard: "exhaustsOutputAttempts", target: "done", actions: { type: "endAs", params: { reason: "output_invalid" } } },
        { target: "continuingAsDecided", actions: "queueOutputReminder" },
      ],
    },
    // R10, R11: nothing else asks for a request, but finishTurn said continue: exactly one more (R100: or the run asks for its answer).
    continuingAsDecided: {
      always: { target: "turn.openingNextTurn" },
    },
    // R56: a hook or the stream function threw; close the turn with a failure message (R72: streamed calls aborted).
    failing: {
      entry: "abortStreamedCalls",
      always: [
        // R29, R67: a step that failed once the run was aborted (abandoned after the grace, or a hook,
        // compactor or stream that rejected on its signal) ends the run aborted, as the reference's Agent does.
        { guard: "isAborted", target: "done", actions: { type: "emitFailure", params: { ending: "aborted" } } },
        { target: "done", actions: { type: "emitFailure", params: { ending: "error" } } },
      ],
    },
    // R12: agent_end with every message this run added.
    done: {
      type: "final",
      entry: "emitAgentEnd",
    },
  },
  // R12; R100: with the validated answer as the array's `output`.
  output: ({ context }) => (context.output.answer === null ? context.newMessages : Object.assign(context.newMessages.slice(), { output: context.output.answer.value })),
});

export type RunActorRef = ActorRefFrom<typeof runMachine>;
