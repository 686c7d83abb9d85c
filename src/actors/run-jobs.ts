/**
 * The run steps' work: each job calls one app hook (or the stream function) and turns what it
 * returns into plain data for the machine (R13: converted where it enters). Executable tools stay
 * in the runtime's registry.
 */
import type { AgentContext, AgentLoopTurnUpdate, AgentMessage, AssistantMessage, CompactRequest } from "../types.js";
import { streamCompletion } from "../recovery/stream-completion.js";
import { compactedTranscript } from "../recovery/compaction-result.js";
import type { Clock } from "../loop/clock.js";
import type { StateUpdate, TurnSnapshot, TurnUpdate } from "../../machines/run.types.js";
import type { SteeringPoll, StepJobs } from "../../machines/steps.js";
import { spendOf } from "../../machines/run/helpers.js";
import { checkConverted } from "../loop/normalize.js";
import { toPlainData } from "../loop/plain-data.js";
import { checkApiKey, checkPolledMessages, checkRequestUpdate, checkTransformedMessages, checkTurnUpdate } from "../boundary/index.js";
import { streamResponse } from "./stream-response.js";
import type { RunRuntime } from "./run-runtime.js";
import type { JobScope } from "./job-scope.js";
import { ownQueuesOf } from "./own-queues.js";
import { keepHeaders, withHeaders } from "../protocol/model-headers.js";

type Input<K extends keyof StepJobs> = StepJobs[K]["input"];

export const runJobs = {
  async getSteeringMessages(runtime: RunRuntime): Promise<SteeringPoll> {
    const { getSteeringMessages, getFollowUpMessages } = runtime.config;
    const messages = plainMessages(checkPolledMessages("getSteeringMessages", await getSteeringMessages!()));
    const queues = ownQueuesOf(getSteeringMessages, getFollowUpMessages);
    if (queues === undefined) return messages;
    // R10: the Agent's own queues say whether a follow-up poll now would take anything. Read here,
    // as the poll's promise settles: where the reference's follow-up poll drains its queue.
    const followUps = queues.followUpsEmpty();
    // R4a: after a poll that took nothing, whether a steering re-poll would: read one microtask
    // later, where the reference's re-poll drains (after its `await prepareNextTurn?.()`).
    const steering = messages.length === 0 && (await undefined, queues.steeringEmpty());
    if (!followUps && !steering) return messages;
    return steering ? (followUps ? { messages, followUps: "none", steering: "none" } : { messages, steering: "none" }) : { messages, followUps: "none" };
  },
  getFollowUpMessages: async (runtime: RunRuntime) => plainMessages(checkPolledMessages("getFollowUpMessages", await runtime.config.getFollowUpMessages!())),
  async prepareNextTurn(runtime: RunRuntime, turn: Input<"prepareNextTurn">, { signal }: JobScope): Promise<TurnUpdate> {
    const update = checkTurnUpdate(await runtime.config.prepareNextTurn!(turnContext(runtime, turn), signal));
    const plain: TurnUpdate = stateUpdate(runtime, update);
    if (update?.messages?.length) plain.prepared = plainMessages(update.messages);
    return plain;
  },
  async prepareRequest(runtime: RunRuntime, request: Input<"prepareRequest">, { signal }: JobScope): Promise<StateUpdate> {
    const update = checkRequestUpdate(
      await runtime.config.prepareRequest!(
        { context: contextOf(runtime, request.messages), model: withHeaders(runtime, request.model), thinkingLevel: request.thinkingLevel },
        signal,
      ),
    );
    return stateUpdate(runtime, update);
  },
  transformContext: async (runtime: RunRuntime, { messages }: Input<"transformContext">, { signal }: JobScope) =>
    plainMessages(checkTransformedMessages(await runtime.config.transformContext!(messages, signal))),
  convertToLlm: async (runtime: RunRuntime, { messages }: Input<"convertToLlm">) => checkConverted(await runtime.config.convertToLlm!(messages)),
  async resolveApiKey(runtime: RunRuntime, { provider }: Input<"resolveApiKey">): Promise<null> {
    // R40: falls back to config.apiKey; the key stays in the runtime, out of the machine.
    runtime.apiKey.next = checkApiKey(await runtime.config.getApiKey!(provider));
    return null;
  },
  streamResponse: (runtime: RunRuntime, request: Input<"streamResponse">, scope: JobScope) => streamResponse(runtime, request, scope),
  async acquireRequestSlot(runtime: RunRuntime, _input: null, scope: JobScope): Promise<null> {
    const release = await runtime.config.requestLimiter!.acquire(scope.signal);
    // A cancelled wait (the state was left) gives its slot back at once.
    if (scope.cancelled) release();
    else runtime.requestSlot.held = release;
    return null;
  },
  // R60: full jitter, from the injected random source (R13).
  drawBackoff: (runtime: RunRuntime, { ceilingMs }: Input<"drawBackoff">) => Math.floor(runtime.random() * ceilingMs),
  waitForRetry: (runtime: RunRuntime, { until }: Input<"waitForRetry">, { signal }: JobScope) => waitUntil(runtime.clock, until, signal),
  async compact(runtime: RunRuntime, request: Input<"compact">, { signal }: JobScope): Promise<StepJobs["compact"]["output"]> {
    // R63: what the compaction's model requests spent counts towards the run's budget.
    const responses: AssistantMessage[] = [];
    // R62: one plain request with the run's stream function, key and options (no reasoning: a summary
    // needs none); the key is resolved per request, as for the run's own (R40).
    const complete: CompactRequest["complete"] = async (messages, options) => {
      const apiKey = (runtime.config.getApiKey ? checkApiKey(await runtime.config.getApiKey(request.model.provider)) : undefined) ?? runtime.config.apiKey;
      const response = await streamCompletion(runtime.streamFn, withHeaders(runtime, request.model), { ...runtime.streamOptions, ...(apiKey !== undefined ? { apiKey } : {}), signal })(messages, options);
      responses.push(response);
      return response;
    };
    const messages = await runtime.config.compact!.compactor({ ...request, complete }, signal);
    // R62: nothing to compact (the transcript as it was), a replacement, or a typed failure.
    const replacement = messages === request.messages ? null : compactedTranscript(request.messages, checkTransformedMessages(messages, "compact.compactor"));
    return { messages: replacement === null ? null : plainMessages(replacement), spent: spendOf(responses) };
  },
  async finishTurn(runtime: RunRuntime, turn: Input<"finishTurn">, { signal }: JobScope): Promise<"continue" | "end" | null> {
    const decision = await runtime.config.finishTurn!(turnContext(runtime, turn), signal);
    return decision?.action === "end" || decision?.action === "continue" ? decision.action : null;
  },
};

/** Resolves at `until` on the run's clock, or at once when the signal aborts (the machine then sees the abort). */
function waitUntil(clock: Clock, until: number, signal: AbortSignal): Promise<null> {
  const ms = until - clock.now();
  if (ms <= 0 || signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const done = () => {
      cancel();
      signal.removeEventListener("abort", done);
      resolve(null);
    };
    const cancel = clock.setTimer(ms, done);
    signal.addEventListener("abort", done, { once: true });
  });
}

const contextOf = (runtime: RunRuntime, messages: AgentMessage[]): AgentContext => ({ messages, tools: runtime.tools.list });

const turnContext = (runtime: RunRuntime, turn: TurnSnapshot) => ({
  message: turn.message,
  toolResults: turn.toolResults,
  context: contextOf(runtime, turn.messages),
  newMessages: turn.newMessages,
});

/** Messages from a hook or a queue, as plain data (R13); `undefined` is none. */
function plainMessages(messages: readonly AgentMessage[] | undefined | null): AgentMessage[] {
  return messages ? toPlainData(messages.slice()) : [];
}

/** A hook's `{context, model, thinkingLevel}` as plain data; a new tool set goes to the registry. */
function stateUpdate(runtime: RunRuntime, update: AgentLoopTurnUpdate | undefined | void): StateUpdate {
  if (!update) return {};
  const plain: StateUpdate = {};
  if (update.context) {
    plain.messages = plainMessages(update.context.messages);
    plain.toolSet = runtime.tools.replace(update.context.tools ?? []);
  }
  // R14: its headers stay with the runtime.
  if (update.model) plain.model = keepHeaders(runtime, update.model);
  if (update.thinkingLevel) plain.thinkingLevel = update.thinkingLevel;
  return plain;
}
