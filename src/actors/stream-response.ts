/**
 * The request boundary's last step (R40–R42): call the stream function and turn its events into
 * message events, emitted here rather than by the machine so deltas never enter it. The machine
 * receives the final message only after the sink settled every event of this response.
 *
 * With retries or compaction on (R60, R62) the provider's `start` is withheld until the first
 * content or terminal event: a failure before content then emits nothing, and the machine decides
 * whether to retry, compact or surface it.
 */
import type { AssistantMessage, StreamOptions, ToolCall } from "../types.js";
import type { ResponseFailure, StreamedResponse } from "../../machines/run.types.js";
import type { StepJobs, StreamToolCallReady } from "../../machines/steps.js";
import { errorText } from "../loop/tool-results.js";
import { classifyFailure } from "../loop/classify-failure.js";
import { toPlainData } from "../loop/plain-data.js";
import type { RunRuntime } from "./run-runtime.js";
import type { JobScope } from "./job-scope.js";
import { withHeaders } from "../protocol/model-headers.js";
import { ContentLog, copyNow as messageAsOf } from "./message-as-of.js";

/** Thrown when the stream function broke its contract after `start`; carries the closed partial (R56). */
export class StreamFailure extends Error {
  constructor(
    message: string,
    readonly partial: AssistantMessage,
  ) {
    super(message);
    this.name = "StreamFailure";
  }
}

export type StreamRequest = StepJobs["streamResponse"]["input"];

export async function streamResponse(runtime: RunRuntime, request: StreamRequest, scope: JobScope): Promise<StreamedResponse> {
  // The limiter's slot, held from `awaitingRequestSlot` (or taken now: a request re-issued after a restore).
  const limiter = runtime.config.requestLimiter;
  if (!limiter) return streamOnce(runtime, request, scope);
  let release = runtime.requestSlot.held;
  runtime.requestSlot.held = undefined;
  release ??= await limiter.acquire(scope.signal);
  let tokens = 0;
  try {
    const response = await streamOnce(runtime, request, scope);
    tokens = (response.message.usage?.input ?? 0) + (response.message.usage?.output ?? 0);
    return response;
  } finally {
    release?.(tokens);
  }
}

/**
 * The stream function's options for one attempt: the run's, then this request's. Set key by key on
 * a copy (later keys win, as in a spread): a literal that begins with a spread and adds keys gets a
 * hidden class of its own per request on Node 20 (see `appended` in machines/run.helpers.ts).
 */
function requestOptions(base: StreamOptions, request: StreamRequest, signal: AbortSignal, apiKey: string | undefined): StreamOptions {
  const options: StreamOptions = Object.assign({}, base);
  if (apiKey !== undefined) options.apiKey = apiKey;
  options.signal = signal;
  if (request.thinkingLevel !== "off") options.reasoning = request.thinkingLevel;
  // R61: the escalated attempt's output limit.
  if (request.maxTokens !== null) options.maxTokens = request.maxTokens;
  // R60: every attempt is the loop's, so each one is visible.
  if (request.loopRetries) options.maxRetries = 0;
  return options;
}

async function streamOnce(runtime: RunRuntime, request: StreamRequest, scope: JobScope): Promise<StreamedResponse> {
  // Every event goes through the job (`scope.emit`): a stopped run's stream delivers nothing more.
  const { signal } = scope;

  const apiKey = runtime.apiKey.next ?? runtime.config.apiKey;
  runtime.apiKey.next = undefined;
  const options = requestOptions(runtime.streamOptions, request, signal, apiKey);

  let partial: AssistantMessage | undefined;
  /** `message_start` was emitted (with withholding, at the first content event). */
  let started = false;
  /** R60: the withheld `start`'s message as it was then (providers grow the live partial in place). */
  let held: AssistantMessage | undefined;
  let final: AssistantMessage | undefined;
  /** R70: the calls already reported ready (the next one's index among the response's calls). */
  let readyCalls = 0;
  /** R41, R83: each update's content as of that update, copied when read (message-as-of.ts). */
  const updates = new ContentLog();
  try {
    const stream = await runtime.streamFn(withHeaders(runtime, request.model), { messages: request.messages }, options);
    for await (const event of stream) {
      if (event.type === "done") {
        final = event.message;
        break;
      }
      if (event.type === "error") {
        final = event.error;
        break;
      }
      if (event.type === "start") {
        partial = event.partial;
        if (request.withhold) {
          held = messageAsOf(partial);
          continue;
        }
        started = true;
        const delivery = scope.emit({ type: "message_start", message: messageAsOf(partial) });
        if (delivery) await delivery;
        continue;
      }
      // R41: content events before `start` are ignored.
      if (!partial) continue;
      partial = event.partial;
      // Each update carries the message as of that update, in the event and as the provider
      // event's `partial`: providers keep growing the live partial in place, so a listener that
      // keeps an update, or an async sink that gets it later, would otherwise see a later message
      // than the one journaled (R83: replay is byte-identical only if events never change). Taken
      // before any await: the provider may go on meanwhile. O(1) a delta past a few blocks.
      const message = updates.messageAsOf(partial, (event as { contentIndex?: number }).contentIndex);
      if (!started) {
        started = true;
        await scope.emit({ type: "message_start", message: held ?? messageAsOf(partial) });
      }
      // Awaited only when the sink is busy: a sync sink costs no extra microtask per delta.
      const delivery = scope.emit({ type: "message_update", message, assistantMessageEvent: { ...event, partial: message } as typeof event });
      if (delivery) await delivery;
      // R70: the call is complete while the response goes on; its run starts it (after this update).
      if (request.streamTools && event.type === "toolcall_end") scope.send(toolCallReady(readyCalls++, event.toolCall, partial, runtime.clock.now()));
    }
    // R41: a stream that ends without a terminal event falls back to result().
    final ??= await stream.result();
    checkFinalMessage(final);
  } catch (error) {
    if (!started) throw error;
    // R56: an open assistant message is closed before the run fails.
    const closed: AssistantMessage = Object.assign({}, partial!, { stopReason: "error" as const, errorMessage: errorText(error) });
    await scope.emit({ type: "message_end", message: closed });
    throw new StreamFailure(errorText(error), closed);
  }

  // R42: the final message records the requested thinking level. (Object.assign, not a spread
  // literal: V8 gave each spread copy its own hidden class, and scans of a long transcript of
  // such messages went megamorphic: issue 19's (f) measured 1.3× slower.)
  const message: AssistantMessage = Object.assign({}, final, { thinkingLevel: request.thinkingLevel });
  const failure = failureOf(message);
  // R60, R62: a failure before any content stays withheld; the machine retries, compacts or surfaces it.
  if (!started && failure && request.withhold) return { message, withheld: true, failure };
  if (!started) await scope.emit({ type: "message_start", message });
  await scope.emit({ type: "message_end", message });
  return { message, withheld: false, failure };
}

/** R70: plain copies: the provider keeps growing its live partial (and may reuse the block). */
function toolCallReady(index: number, toolCall: ToolCall, partial: AssistantMessage, at: number): StreamToolCallReady {
  return {
    type: "stream.toolCallReady",
    at,
    index,
    toolCall: toPlainData(toolCall),
    partialMessage: { ...partial, content: partial.content.map((block) => ({ ...block })) },
  };
}

/** R81: the reply of a response that ended with `message` (a journal answers a response whose reply it lost with it). */
export function endedResponse(message: AssistantMessage): StreamedResponse {
  return { message, withheld: false, failure: failureOf(message) };
}

function failureOf(message: AssistantMessage): ResponseFailure | null {
  if (message.stopReason !== "error") return null;
  const { retry, contextOverflow } = classifyFailure(message);
  return { retryable: retry.retryable, afterMs: retry.afterMs ?? null, kind: retry.kind ?? "unknown", contextOverflow };
}

/** A stream whose terminal message is not an assistant message broke its contract (R56). */
function checkFinalMessage(message: unknown): asserts message is AssistantMessage {
  const candidate = message as Partial<AssistantMessage> | null | undefined;
  if (!candidate || typeof candidate !== "object" || candidate.role !== "assistant" || !Array.isArray(candidate.content)) {
    throw new TypeError("stream function ended with a malformed message (expected an assistant message with a content array)");
  }
}
