import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart, SharedV4ProviderOptions } from "@ai-sdk/provider";
import type { AssistantMessageEventStream, Model, StreamFn, StreamOptions, TranscriptContext } from "../../types.js";
import { PushAssistantStream } from "../assistant-stream.js";
import { classifyAiSdkError, describeAiSdkError, transient } from "./classify.js";
import { aiSdkLoopModel, type ModelFacts } from "./models.js";
import { buildAiSdkRequest } from "./prompt.js";
import { AiSdkTurn } from "./turn.js";

/** What the adapter uses of a language model: any object of the AI SDK's v4 model spec (ai@7 providers). */
export type AiSdkLanguageModel = Pick<LanguageModelV4, "specificationVersion" | "provider" | "modelId" | "doStream">;

export interface AiSdkModelOptions {
  /**
   * The model's context window, maximum output, prices and whether it reasons, over the table's
   * (`AI_SDK_MODELS`). Required (at least `contextWindow` and `maxTokens`) for a model the table
   * does not know; prices default to 0 then.
   */
  facts?: Partial<ModelFacts>;
  /** The spec's `providerOptions`, sent with every request (e.g. `{ openai: { store: false } }`). */
  providerOptions?: SharedV4ProviderOptions;
  /**
   * Strings removed from every error message. The key lives in the provider object, where the
   * adapter cannot see it; name it here if an error body could echo it (a proxy, a local server).
   */
  secrets?: readonly string[];
  /**
   * The response is abandoned as `error` ("stream stalled: no data for N ms") when no stream part
   * arrives for this long once the request was sent. Default 60 000; 0 or Infinity disables.
   */
  idleTimeoutMs?: number;
}

/**
 * A `StreamFn` over an AI SDK model, carrying the loop's `Model` for it (`streamFn.model`: pass
 * it as the config's `model`, so R61, R62 and R63 know its limits and prices).
 */
export interface AiSdkStreamFn {
  (model: Model, context: TranscriptContext, options?: StreamOptions): AssistantMessageEventStream;
  readonly model: Model;
}

export const DEFAULT_AI_SDK_IDLE_TIMEOUT_MS = 60_000;
const ABORTED = "Request was aborted";

/**
 * A `StreamFn` for any AI SDK language model (`@ai-sdk/openai`, `@ai-sdk/google`, a community
 * provider, an OpenAI-compatible server through `@ai-sdk/openai-compatible`, …): calls its
 * `doStream` and maps the stream parts to the loop's events. Text, reasoning and tool calls stream
 * as they arrive, and each tool call ends (`toolcall_end`) when the provider closes it, so R70 runs
 * it while the response still streams. Usage is priced with the loop model's `cost`.
 *
 * Request: the replayed system prompt and tools (R30), `options.maxTokens` (default: the model's
 * `maxTokens`) as `maxOutputTokens`, `options.reasoning` (a level other than `off`),
 * `options.temperature`, `options.toolChoice`, `options.headers` (`null` drops a header) and the
 * abort signal. `doStream` itself never retries (retries belong to `ai`'s `generateText`, which is
 * not used), so every attempt is the loop's own (R60) and `options.maxRetries` has nothing to turn off.
 *
 * Never throws or rejects: an HTTP error, an `error` part, a dropped connection, a stall, an abort
 * or bad input ends the stream with an `error` event whose message says what kind of failure it was:
 * `retry` from the status (429, 408/409, 5xx, 529 or an "overloaded" body), `retry-after-ms` /
 * `retry-after` and the AI SDK's `isRetryable`, and `contextOverflow: true` for a 413 or a
 * context-length error body (OpenAI's `context_length_exceeded`, Gemini's "input token count").
 *
 * Throws `UnknownAiSdkModelError` at once for a model the table does not know and no `facts`, and a
 * `TypeError` for an object that is not a v4 language model.
 */
export function fromAiSdkModel(languageModel: AiSdkLanguageModel, options: AiSdkModelOptions = {}): AiSdkStreamFn {
  if (
    typeof languageModel !== "object" ||
    languageModel === null ||
    languageModel.specificationVersion !== "v4" ||
    typeof languageModel.doStream !== "function"
  ) {
    const version = (languageModel as { specificationVersion?: unknown } | null)?.specificationVersion;
    throw new TypeError(
      `fromAiSdkModel needs a language model of the AI SDK's v4 specification (ai@7 providers); got ${
        version === undefined ? "an object without specificationVersion" : `specification ${String(version)}`
      }`,
    );
  }
  const loopModel = aiSdkLoopModel(languageModel.provider, languageModel.modelId, options.facts);
  const api = loopModel.api;
  const provider = loopModel.provider;

  async function run(turn: AiSdkTurn, model: Model, context: TranscriptContext, streamOptions: StreamOptions): Promise<void> {
    const signal = streamOptions.signal;
    if (signal?.aborted) return turn.fail("aborted", ABORTED);

    const controller = new AbortController();
    const onAbort = (): void => {
      turn.fail("aborted", ABORTED);
      controller.abort();
    };
    signal?.addEventListener("abort", onAbort, { once: true });

    const idleMs = options.idleTimeoutMs ?? DEFAULT_AI_SDK_IDLE_TIMEOUT_MS;
    // One timer for the whole response: each part only stamps the time, and the timer, when it
    // fires, sleeps again for what is left (re-arming a timer per part costs more than the part).
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    let lastActivity = 0;
    const check = (): void => {
      const idle = performance.now() - lastActivity;
      if (idle < idleMs) {
        watchdog = setTimeout(check, idleMs - idle);
        return;
      }
      turn.fail("error", `stream stalled: no data for ${idleMs} ms`, transient("stall"));
      controller.abort();
    };
    const armWatchdog = (): void => {
      lastActivity = performance.now();
      if (watchdog === undefined && idleMs > 0 && Number.isFinite(idleMs)) watchdog = setTimeout(check, idleMs);
    };

    let phase: "request" | "stream" = "request";
    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
    try {
      const request = callOptions(model, context, streamOptions, options.providerOptions, api, controller.signal);
      armWatchdog();
      const result = await languageModel.doStream(request);
      phase = "stream";
      reader = result.stream.getReader();
      for (;;) {
        const next = await reader.read();
        if (next.done || turn.isSettled) break;
        armWatchdog();
        const failed = turn.handle(next.value);
        if (failed) {
          turn.fail("error", describeAiSdkError(failed.error, provider, "stream"), classifyAiSdkError(failed.error, "stream"));
          break;
        }
      }
      if (signal?.aborted) turn.fail("aborted", ABORTED);
      else turn.end();
    } catch (error) {
      if (signal?.aborted) turn.fail("aborted", ABORTED);
      else turn.fail("error", describeAiSdkError(error, provider, phase), classifyAiSdkError(error, phase));
    } finally {
      if (watchdog !== undefined) clearTimeout(watchdog);
      signal?.removeEventListener("abort", onAbort);
      // Releases the HTTP body when the turn settled before the provider finished (abort, error part).
      reader?.cancel().catch(() => undefined);
    }
  }

  const call = (model: Model, context: TranscriptContext, streamOptions?: StreamOptions): AssistantMessageEventStream => {
    const stream = new PushAssistantStream();
    const turn = new AiSdkTurn(stream, model ?? loopModel, api, provider);
    turn.secrets = (options.secrets ?? []).filter((secret) => typeof secret === "string" && secret.length > 0);
    run(turn, model ?? loopModel, context, streamOptions ?? {}).catch((error: unknown) =>
      turn.fail("error", describeAiSdkError(error, provider, "request")),
    );
    return stream;
  };
  const streamFn: AiSdkStreamFn = Object.assign(call, { model: loopModel });
  return streamFn satisfies StreamFn;
}

function callOptions(
  model: Model,
  context: TranscriptContext,
  options: StreamOptions,
  providerOptions: SharedV4ProviderOptions | undefined,
  api: string,
  abortSignal: AbortSignal,
): LanguageModelV4CallOptions {
  if (!context || !Array.isArray(context.messages)) throw new TypeError("context.messages must be an array of messages");
  const { prompt, tools } = buildAiSdkRequest(context.messages, api);
  const maxOutputTokens = typeof options.maxTokens === "number" ? options.maxTokens : model?.maxTokens;
  const call: LanguageModelV4CallOptions = { prompt, abortSignal };
  if (typeof maxOutputTokens === "number" && maxOutputTokens > 0) call.maxOutputTokens = maxOutputTokens;
  if (tools.length > 0) {
    call.tools = tools;
    if (options.toolChoice === "auto" || options.toolChoice === "none") call.toolChoice = { type: options.toolChoice };
  }
  if (typeof options.temperature === "number") call.temperature = options.temperature;
  // The loop never sends "off" (absent means off), but a direct, untyped caller may.
  if (options.reasoning && (options.reasoning as string) !== "off" && model?.reasoning) call.reasoning = options.reasoning;
  if (options.headers) {
    call.headers = Object.fromEntries(Object.entries(options.headers).map(([name, value]) => [name, value ?? undefined]));
  }
  if (providerOptions) call.providerOptions = providerOptions;
  return call;
}
