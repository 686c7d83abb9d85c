/**
 * A deterministic `StreamFn` that plays scripted assistant responses as a realistic event stream
 * (start, per-block start/delta/end, one terminal event), honouring the abort signal. Tests, the
 * offline demo and apps' own tests use it. Node-free.
 *
 * Failures (SPEC R60, R62) are scripted by kind, with the wording, `retry` and `contextOverflow` a
 * real provider gives them:
 *
 * ```ts
 * scriptedStreamFn([
 *   { failure: "overloaded" },                         // a lone `error` event, no `start`: failed at request time
 *   { failure: "rate_limited", retryAfterMs: 2000 },   // retry: {retryable: true, kind: "rate_limited", afterMs: 2000}
 *   { failure: "connection", afterContent: true, content: [text("Half an ans")] }, // not retryable: content was seen
 *   { failure: "prompt_too_long" },                    // contextOverflow: true, not retryable
 *   { content: [text("Done")] },
 * ]);
 * ```
 *
 * `stopReason: "error"` with an `errorMessage` (no `failure`) still scripts an unclassified failure,
 * which the loop classifies from its text.
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  Model,
  RetryClassification,
  StopReason,
  StreamFn,
  StreamOptions,
  TextContent,
  ThinkingContent,
  ToolCall,
  TranscriptContext,
  TransientFailureKind,
  Usage,
} from "../types.js";
import { emptyUsage, monotonicNow, PushAssistantStream } from "./assistant-stream.js";
import type { Clock } from "../loop/clock.js";
import { modelProblem } from "../boundary/model.js";
import { problemText } from "../boundary/problem.js";
import { parseToolArguments } from "./tool-arguments.js";

export type ScriptedBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature?: string; redacted?: boolean }
  | { type: "toolCall"; name: string; arguments?: Record<string, unknown>; id?: string; argumentsError?: string }
  /** Not content: the stream waits `ms` here (on the scripted model's clock when it has one), abortable. */
  | { type: "pause"; ms: number };

/** A failure the scripted model can play (SPEC R60's transient kinds, and R62's overflow). */
export type ScriptedFailureKind = TransientFailureKind | "prompt_too_long";

export interface ScriptedResponse {
  /** Content blocks, in order. */
  content?: ScriptedBlock[];
  /** Defaults to `toolUse` when there are tool calls, else `stop`. (`pending` is a partial message's reason, never a response's.) */
  stopReason?: Exclude<StopReason, "pending">;
  /** With `stopReason: "error"`, or to override the wording of a `failure`. */
  errorMessage?: string;
  /**
   * Fail this way (SPEC R60, R62): the final message has `stopReason: "error"`, a provider's
   * wording in `errorMessage`, `retry` (`retryable` unless after content) and, for
   * `prompt_too_long`, `contextOverflow: true`. Before any content unless `afterContent`.
   * `stall` fails at once (as a provider does once its idle timeout has passed).
   */
  failure?: ScriptedFailureKind;
  /** With `failure`: the server's `retry-after`, in ms (`retry.afterMs`, and in the text). */
  retryAfterMs?: number;
  /**
   * With `failure`: play `start` and `content` (default: a text "Partial answer") first, then fail:
   * a failure after content, never retryable.
   */
  afterContent?: boolean;
  /** A setup failure: a lone `error` event, no `start`. */
  setupError?: string;
  /** Break the StreamFn contract: throw (before `start`, or after `afterEvents` events). For R56 tests. */
  throws?: { message: string; afterEvents?: number };
  /** Characters per delta; default: one delta per word. */
  chunkSize?: number;
  /** Delay before each event after `start`, in ms (abortable). */
  delayMs?: number;
  usage?: Partial<Omit<Usage, "cost">>;
}

export interface ScriptedCall {
  model: Model;
  context: TranscriptContext;
  /** The options minus the signal and API key (a test may assert on them). */
  options: Omit<StreamOptions, "signal" | "apiKey">;
  /** Whether an API key was passed (the key itself is never recorded). */
  hadApiKey: boolean;
}

export type ScriptedStreamFn = StreamFn & {
  /** One entry per request, in order. */
  readonly calls: ScriptedCall[];
};

/**
 * The responses: a list answered in request order, or a function of the request and its index.
 * The script is shared by every run the stream function serves (every run of a
 * `createAgentRunLogic` given it, every `agentLoop` call): `index` counts the requests of all of
 * them, so a list serves one run. For several runs, answer from the request (`request.context`).
 */
export type Script = readonly ScriptedResponse[] | ((request: ScriptedCall, index: number) => ScriptedResponse);

export const text = (value: string): ScriptedBlock => ({ type: "text", text: value });
export const thinking = (value: string, signature = "sig"): ScriptedBlock => ({ type: "thinking", thinking: value, signature });
export const toolCall = (name: string, args: Record<string, unknown> = {}, id?: string): ScriptedBlock => ({
  type: "toolCall",
  name,
  arguments: args,
  ...(id ? { id } : {}),
});

/** The model descriptor the scripted model reports unless the request's model says otherwise. */
/** The stream waits `ms` between the blocks around it (SPEC R70's tests: calls that complete mid-stream). */
export const pause = (ms: number): ScriptedBlock => ({ type: "pause", ms });

export interface ScriptedStreamOptions {
  /** The clock `pause` blocks wait on (a test's injected clock); default: real timers. */
  clock?: Pick<Clock, "setTimer">;
}

export const scriptedModel: Model = {
  id: "scripted",
  name: "Scripted model (offline)",
  api: "scripted",
  provider: "scripted",
  reasoning: true,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 200_000,
  maxTokens: 32_000,
};

/**
 * A stream function that plays `script` (see `Script`: shared by every run it serves, so a list
 * script serves one run; a function answering from the request serves any number).
 */
export function scriptedStreamFn(script: Script, streamOptions: ScriptedStreamOptions = {}): ScriptedStreamFn {
  const calls: ScriptedCall[] = [];
  const fn = (model: Model, context: TranscriptContext, options: StreamOptions) => {
    const { signal, apiKey, ...rest } = options ?? {};
    const call: ScriptedCall = { model, context, options: rest, hadApiKey: apiKey !== undefined };
    const index = calls.push(call) - 1;
    const response =
      typeof script === "function"
        ? script(call, index)
        : (script[index] ?? { stopReason: "error" as const, errorMessage: `Scripted model: no response scripted for request #${index + 1}` });
    if (response.throws && !response.throws.afterEvents) throw new Error(response.throws.message);
    const stream = new PushAssistantStream();
    // A malformed descriptor (from a hook, or a model without `cost`) is a model failure like any
    // other: an `error` event, as the StreamFn contract asks, never a rejection nobody awaits.
    const problem = modelProblem(model, "model");
    if (problem) {
      stream.push({ type: "error", reason: "error", error: invalidModelMessage(model, `Scripted model: invalid ${problemText(problem)}`) });
      return stream;
    }
    play(stream, response, model, signal, streamOptions.clock).catch((error: unknown) => stream.fail(error));
    return stream;
  };
  return Object.assign(fn, { calls });
}

async function play(
  stream: PushAssistantStream,
  response: ScriptedResponse,
  model: Model,
  signal: AbortSignal | undefined,
  clock?: Pick<Clock, "setTimer">,
): Promise<void> {
  const started = monotonicNow();
  const message: AssistantMessage = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: usageOf(response, model),
    stopReason: "stop",
    timestamp: Date.now(),
  };
  const fail = (reason: "error" | "aborted", errorMessage: string, classified?: Pick<AssistantMessage, "retry" | "contextOverflow">) => {
    message.stopReason = reason;
    message.errorMessage = errorMessage;
    if (reason === "error" && classified) Object.assign(message, classified);
    message.durationMs = monotonicNow() - started;
    stream.push({ type: "error", reason, error: { ...message, content: message.content.slice() } });
  };
  if (signal?.aborted) return fail("aborted", "Request was aborted");
  if (response.setupError) return fail("error", response.setupError);
  const failure = response.failure !== undefined ? scriptedFailure(response, model) : undefined;
  if (failure && !response.afterContent) {
    // A request-time failure: no `start`, as a provider answering with an HTTP error.
    if (response.delayMs) await delay(response.delayMs, signal);
    if (signal?.aborted) return fail("aborted", "Request was aborted");
    return fail("error", failure.errorMessage, failure.fields);
  }

  let sent = 0;
  const throwAt = response.throws?.afterEvents;
  // Emits one event after the scripted delay; false when the run was aborted meanwhile. `event`
  // builds the event (and grows the live partial) only once it is certain to be sent.
  const send = async (event: () => AssistantMessageEvent): Promise<boolean> => {
    if (response.delayMs) await delay(response.delayMs, signal);
    if (signal?.aborted) {
      fail("aborted", "Request was aborted");
      return false;
    }
    if (throwAt !== undefined && sent === throwAt) {
      // Contract violation on purpose: the consumer's iterator throws.
      stream.fail(new Error(response.throws!.message));
      return false;
    }
    sent++;
    stream.push(event());
    return true;
  };

  try {
    if (!(await send(() => ({ type: "start", partial: message })))) return;
    const blocks = response.content ?? (failure ? [{ type: "text" as const, text: "Partial answer" }] : []);
    for (const block of blocks) {
      const index = message.content.length;
      if (block.type === "pause") {
        await (clock ? clockDelay(clock, block.ms, signal) : delay(block.ms, signal));
        if (signal?.aborted) return fail("aborted", "Request was aborted");
        continue;
      }
      if (block.type === "text") {
        const content: TextContent = { type: "text", text: "" };
        const started = await send(() => (message.content.push(content), { type: "text_start", contentIndex: index, partial: message }));
        if (!started) return;
        for (const delta of chunks(block.text, response.chunkSize)) {
          const sentDelta = await send(() => ((content.text += delta), { type: "text_delta", contentIndex: index, delta, partial: message }));
          if (!sentDelta) return;
        }
        if (!(await send(() => ({ type: "text_end", contentIndex: index, content: content.text, partial: message })))) return;
      } else if (block.type === "thinking") {
        const content: ThinkingContent = { type: "thinking", thinking: "" };
        if (block.redacted) content.redacted = true;
        const started = await send(() => (message.content.push(content), { type: "thinking_start", contentIndex: index, partial: message }));
        if (!started) return;
        for (const delta of chunks(block.thinking, response.chunkSize)) {
          const sentDelta = await send(() => ((content.thinking += delta), { type: "thinking_delta", contentIndex: index, delta, partial: message }));
          if (!sentDelta) return;
        }
        const ended = await send(() => {
          if (block.signature !== undefined) content.thinkingSignature = block.signature;
          return { type: "thinking_end", contentIndex: index, content: content.thinking, partial: message };
        });
        if (!ended) return;
      } else {
        const call: ToolCall = {
          type: "toolCall",
          id: block.id ?? `call_${index}_${block.name}`,
          name: block.name,
          arguments: {},
        };
        if (!(await send(() => (message.content.push(call), { type: "toolcall_start", contentIndex: index, partial: message })))) return;
        const json = JSON.stringify(block.arguments ?? {});
        if (!(await send(() => ({ type: "toolcall_delta", contentIndex: index, delta: json, partial: message })))) return;
        const ended = await send(() => {
          // What the model sent is the JSON text of the deltas, as a provider's arguments are.
          call.arguments = block.argumentsError ? {} : parseToolArguments(json).arguments;
          if (block.argumentsError) call.argumentsError = block.argumentsError;
          return { type: "toolcall_end", contentIndex: index, toolCall: call, partial: message };
        });
        if (!ended) return;
      }
    }
    if (failure) {
      if (response.delayMs) await delay(response.delayMs, signal);
      if (signal?.aborted) return fail("aborted", "Request was aborted");
      // After content a failure is never retryable (R60): the caller has seen part of the answer.
      const { kind } = failure.fields.retry ?? {};
      return fail("error", failure.errorMessage, { ...failure.fields, retry: { retryable: false, ...(kind ? { kind } : {}) } });
    }
    const hasToolCalls = message.content.some((block) => block.type === "toolCall");
    const stopReason = response.stopReason ?? (hasToolCalls ? "toolUse" : "stop");
    if (stopReason === "error" || stopReason === "aborted") return fail(stopReason, response.errorMessage ?? "Scripted failure");
    if (response.delayMs) await delay(response.delayMs, signal);
    if (signal?.aborted) return fail("aborted", "Request was aborted");
    message.stopReason = stopReason;
    message.durationMs = monotonicNow() - started;
    stream.push({ type: "done", reason: stopReason, message: { ...message, content: message.content.slice() } });
  } catch (error) {
    stream.fail(error);
  }
}

interface ScriptedFailure {
  errorMessage: string;
  fields: Pick<AssistantMessage, "retry" | "contextOverflow">;
}

/** The wording is a provider's (HTTP status, API error type), so a reader of the text alone agrees with the fields. */
const FAILURE_TEXT: Record<ScriptedFailureKind, (model: Model) => string> = {
  overloaded: () => "Scripted model: HTTP 529 overloaded_error: Overloaded",
  rate_limited: () => "Scripted model: HTTP 429 rate_limit_error: Number of requests has exceeded your rate limit",
  server_error: () => "Scripted model: HTTP 500 api_error: Internal server error",
  connection: () => "Scripted model: connection error: read ECONNRESET",
  stall: () => "Scripted model: stream stalled: no data for 60000 ms",
  prompt_too_long: (model) =>
    `Scripted model: HTTP 400 invalid_request_error: prompt is too long: ${model.contextWindow + 1} tokens > ${model.contextWindow} maximum`,
};

function scriptedFailure(response: ScriptedResponse, model: Model): ScriptedFailure {
  const kind = response.failure as string;
  if (!Object.hasOwn(FAILURE_TEXT, kind)) {
    const known = Object.keys(FAILURE_TEXT).join(", ");
    return { errorMessage: `Scripted model: unknown failure ${JSON.stringify(kind)} (expected one of ${known})`, fields: { retry: { retryable: false } } };
  }
  if (kind === "prompt_too_long") {
    return { errorMessage: response.errorMessage ?? FAILURE_TEXT.prompt_too_long(model), fields: { retry: { retryable: false }, contextOverflow: true } };
  }
  const after = response.retryAfterMs;
  const afterMs = typeof after === "number" && Number.isFinite(after) && after >= 0 ? after : undefined;
  const retry: RetryClassification = { retryable: true, kind: kind as TransientFailureKind, ...(afterMs !== undefined ? { afterMs } : {}) };
  const text = response.errorMessage ?? FAILURE_TEXT[kind as TransientFailureKind](model) + (afterMs !== undefined ? ` (retry after ${afterMs} ms)` : "");
  return { errorMessage: text, fields: { retry } };
}

/** The error message for a request whose model descriptor is unusable: only its string fields are kept. */
function invalidModelMessage(model: unknown, errorMessage: string): AssistantMessage {
  const field = (key: string): string => {
    try {
      const value = (model as Record<string, unknown> | null | undefined)?.[key];
      return typeof value === "string" ? value : "unknown";
    } catch {
      return "unknown";
    }
  };
  return {
    role: "assistant",
    content: [],
    api: field("api"),
    provider: field("provider"),
    model: field("id"),
    usage: emptyUsage(),
    stopReason: "error",
    errorMessage,
    timestamp: Date.now(),
  };
}

function usageOf(response: ScriptedResponse, model: Model): Usage {
  const usage = emptyUsage();
  Object.assign(usage, response.usage ?? {});
  usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  const perToken = (price: number, tokens: number) => (price * tokens) / 1_000_000;
  usage.cost.input = perToken(model.cost.input, usage.input);
  usage.cost.output = perToken(model.cost.output, usage.output);
  usage.cost.cacheRead = perToken(model.cost.cacheRead, usage.cacheRead);
  usage.cost.cacheWrite = perToken(model.cost.cacheWrite, usage.cacheWrite);
  usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
  return usage;
}

function chunks(value: string, size: number | undefined): string[] {
  if (value === "") return [];
  if (size && size > 0) {
    const out: string[] = [];
    for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size));
    return out;
  }
  return value.match(/\S+\s*|\s+/g) ?? [value];
}

function clockDelay(clock: Pick<Clock, "setTimer">, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const cancel = clock.setTimer(ms, done);
    function done() {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
