import Anthropic from "@anthropic-ai/sdk";
import type { AssistantMessageEventStream, Model, StreamFn, StreamOptions, TranscriptContext } from "../../types.js";
import { PushAssistantStream } from "../assistant-stream.js";
import { describeError } from "./errors.js";
import { classifyAnthropicError, transient } from "./classify.js";
import { buildRequest } from "./request.js";
import { AnthropicTurn } from "./turn.js";
import { requestHeaders } from "./request-headers.js";

export interface AnthropicStreamFnOptions {
  /** Used when the call passes no `apiKey` and `getApiKey` returns nothing. */
  apiKey?: string;
  /** Resolves a key per request (called with `"anthropic"`), after the call's own `apiKey`. */
  getApiKey?: (provider: string) => string | undefined | Promise<string | undefined>;
  /** Defaults to the model's `baseUrl`, then the SDK's default (`ANTHROPIC_BASE_URL` or api.anthropic.com). */
  baseURL?: string;
  /**
   * HTTP-level retries by the SDK (429, 5xx, connection errors) before any byte of the body. Default 2.
   * A request's own `maxRetries` stream option wins (the loop passes 0 when it retries itself, R60).
   */
  maxRetries?: number;
  /**
   * The response is abandoned as `error` ("stream stalled: no data for N ms") when no SSE event
   * arrives for this long once the response headers are in. Default 60 000; 0 or Infinity disables.
   * (The SDK swallows `ping` events, so pings do not count as activity.)
   */
  idleTimeoutMs?: number;
  /** Cache breakpoints on the system prompt, the tools and the last message. Default true. */
  promptCaching?: boolean;
  /** The SDK's timeout for the response headers, in ms (SDK default: 10 minutes). */
  timeoutMs?: number;
}

/** A `StreamFn` that returns its stream synchronously (assignable to `StreamFn`). */
export type AnthropicStreamFn = (model: Model, context: TranscriptContext, options?: StreamOptions) => AssistantMessageEventStream;

export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const MAX_CACHED_CLIENTS = 16;

const ABORTED = "Request was aborted";
const NO_KEY =
  "No API key for Anthropic: pass apiKey (or getApiKey) to the loop or to anthropicStreamFn, or set ANTHROPIC_API_KEY";

function envApiKey(): string | undefined {
  if (typeof process === "undefined" || !process.env) return undefined;
  return process.env.ANTHROPIC_API_KEY || undefined;
}

/**
 * A `StreamFn` for the Anthropic Messages API over `@anthropic-ai/sdk`'s raw SSE stream.
 *
 * Key precedence: the call's `options.apiKey`, then `getApiKey("anthropic")`, then `apiKey`, then
 * `process.env.ANTHROPIC_API_KEY`. Uses `options.signal`, `options.reasoning` (thinking budget, only
 * for reasoning models), `options.maxTokens` (default: the model's limit), `options.identity` (its
 * `User-Agent`, over `DEFAULT_AGENT_IDENTITY`), `options.headers` (over the identity's; `null`
 * removes a header) and `options.maxRetries` (the SDK's retries for this request, over the
 * factory's); other options, including `sessionId`, are ignored.
 *
 * Never throws or rejects: every failure (HTTP error after the SDK's retries, mid-stream `error`
 * event, truncated or reset stream, stall, abort, missing key, bad input) ends the stream with an
 * `error` event whose message has `stopReason` `"error"` or `"aborted"`, an `errorMessage`, and the
 * content received so far. An `"error"` message also says what kind of failure it was (R60, R62):
 * `retry` (`retryable`, `kind`, `afterMs` from `retry-after-ms`/`retry-after`) from the HTTP status
 * (429, 5xx, 529), the SSE `error` type (`overloaded_error`, `rate_limit_error`, `api_error`), a
 * connection failure (refused, reset, timed out, truncated body) or a stall; `contextOverflow: true`
 * for a 413 or a 400 "prompt is too long". Once content has arrived, nothing is retryable.
 */
export function anthropicStreamFn(factoryOptions: AnthropicStreamFnOptions = {}): AnthropicStreamFn {
  const clients = new Map<string, Anthropic>();

  const clientFor = (baseURL: string | undefined, apiKey: string): Anthropic => {
    const cacheKey = `${baseURL ?? ""}\n${apiKey}`;
    let client = clients.get(cacheKey);
    if (!client) {
      client = new Anthropic({
        apiKey,
        baseURL: baseURL ?? null,
        maxRetries: factoryOptions.maxRetries ?? 2,
        ...(factoryOptions.timeoutMs !== undefined ? { timeout: factoryOptions.timeoutMs } : {}),
      });
      if (clients.size >= MAX_CACHED_CLIENTS) clients.delete(clients.keys().next().value as string);
      clients.set(cacheKey, client);
    }
    return client;
  };

  const resolveApiKey = async (options: StreamOptions): Promise<string | undefined> => {
    if (typeof options.apiKey === "string" && options.apiKey) return options.apiKey;
    const fromHook = await factoryOptions.getApiKey?.("anthropic");
    if (fromHook) return fromHook;
    return factoryOptions.apiKey || envApiKey();
  };

  async function run(turn: AnthropicTurn, model: Model, context: TranscriptContext, options: StreamOptions): Promise<void> {
    const signal = options.signal;
    if (signal?.aborted) return turn.fail("aborted", ABORTED);

    let apiKey: string | undefined;
    try {
      apiKey = await resolveApiKey(options);
    } catch (error) {
      return turn.fail("error", `Could not resolve the Anthropic API key: ${error instanceof Error ? error.message : String(error)}`);
    }
    turn.secret = apiKey;
    if (signal?.aborted) return turn.fail("aborted", ABORTED);
    if (!apiKey) return turn.fail("error", NO_KEY);

    const params = buildRequest(model, context.messages, {
      maxTokens: typeof options.maxTokens === "number" ? options.maxTokens : undefined,
      reasoning: options.reasoning,
      promptCaching: factoryOptions.promptCaching ?? true,
    });
    const client = clientFor(factoryOptions.baseURL ?? model.baseUrl, apiKey);
    // The loop passes `maxRetries: 0` when it retries itself (R60), so every attempt is its own.
    const maxRetries = options.maxRetries;
    if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
      return turn.fail("error", `Invalid maxRetries: expected a non-negative integer, got ${String(maxRetries)}`);
    }

    // One controller ends the HTTP request for the caller's abort and for the stall watchdog; the
    // turn settles at once in both cases instead of waiting for the SDK to unwind.
    const controller = new AbortController();
    const onAbort = (): void => {
      turn.fail("aborted", ABORTED);
      controller.abort();
    };
    signal?.addEventListener("abort", onAbort, { once: true });

    const idleMs = factoryOptions.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const armWatchdog = (): void => {
      if (watchdog !== undefined) clearTimeout(watchdog);
      if (!(idleMs > 0 && Number.isFinite(idleMs))) return;
      watchdog = setTimeout(() => {
        turn.fail("error", `stream stalled: no data for ${idleMs} ms`, transient("stall"));
        controller.abort();
      }, idleMs);
    };

    let phase: "request" | "stream" = "request";
    try {
      const events = await client.messages.create(params, {
        signal: controller.signal,
        headers: requestHeaders(options),
        ...(maxRetries !== undefined ? { maxRetries } : {}),
      });
      phase = "stream";
      armWatchdog();
      // After `message_stop` settles the turn, the loop keeps draining so the connection is reused.
      for await (const event of events) {
        armWatchdog();
        turn.handle(event);
      }
      // Abort and truncation both end the raw stream without throwing.
      if (signal?.aborted) turn.fail("aborted", ABORTED);
      else turn.fail("error", "Anthropic stream ended before message_stop (response truncated)", transient("connection"));
    } catch (error) {
      if (signal?.aborted) turn.fail("aborted", ABORTED);
      else turn.fail("error", describeError(error, phase), classifyAnthropicError(error, phase));
    } finally {
      if (watchdog !== undefined) clearTimeout(watchdog);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  const streamFn: AnthropicStreamFn = (model, context, options) => {
    const stream = new PushAssistantStream();
    const turn = new AnthropicTurn(stream, model);
    const opts: StreamOptions = options ?? {};
    // `run` is async, so nothing it does can throw here; a rejection still settles the turn.
    run(turn, model, context, opts).catch((error: unknown) => turn.fail("error", describeError(error)));
    return stream;
  };
  return streamFn satisfies StreamFn;
}
