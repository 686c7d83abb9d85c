/**
 * `streamProxy`: a stream function for apps (browsers above all) that reach the model through a
 * server which holds the API key (pi-agent-core 1.6's `streamProxy`, same wire protocol; see
 * wire.ts). Node-free: fetch, streams and `eventsource-parser` only.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { AssistantMessageEventStream, Model, StreamFn, TranscriptContext } from "../types.js";
import { PushAssistantStream } from "../providers/assistant-stream.js";
import { ProxyMessageBuilder, ProxyProtocolError } from "./rebuild.js";
import { pickProxyOptions, PROXY_STREAM_PATH, type ProxyAssistantMessageEvent, type ProxyStreamOptionFields } from "./wire.js";

export interface ProxyStreamOptions extends ProxyStreamOptionFields {
  /** Aborts the proxy request; the stream then ends with `aborted`. */
  signal?: AbortSignal;
  /** Sent as `Authorization: Bearer <authToken>`. */
  authToken: string;
  /** The proxy server's base URL (e.g. `https://genai.example.com`, or `""` for the page's own origin); the client posts to `<proxyUrl>/api/stream`. */
  proxyUrl: string;
  /** Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
}

const ABORTED = "Request aborted by user";
const CUT = "Connection closed by proxy server before the response completed";

/**
 * Streams one response through the proxy. Like every stream function it never throws or rejects:
 * an HTTP error (`Proxy error: <the server's "error", or the status>`), a network failure, a cut
 * stream, a protocol violation and an abort all end the stream with an `error` event. Event types
 * it does not know are skipped (a newer server may send more).
 */
export function streamProxy(model: Model, context: TranscriptContext, options: ProxyStreamOptions): AssistantMessageEventStream {
  const stream = new PushAssistantStream();
  const builder = new ProxyMessageBuilder(model, Date.now());
  void pump(stream, builder, model, context, options).catch((error: unknown) => fail(stream, builder, "error", messageOf(error)));
  return stream;
}

/** `streamProxy` as a `StreamFn` for the loop or an `Agent`: the call's options plus `proxy`. */
export function proxyStreamFn(proxy: Omit<ProxyStreamOptions, "signal">): StreamFn {
  return (model, context, options) => streamProxy(model, context, { ...pickProxyOptions(options), ...proxy, ...(options.signal ? { signal: options.signal } : {}) });
}

async function pump(
  stream: PushAssistantStream,
  builder: ProxyMessageBuilder,
  model: Model,
  context: TranscriptContext,
  options: ProxyStreamOptions,
): Promise<void> {
  const { signal } = options;
  const doFetch = options.fetch ?? globalThis.fetch;
  try {
    const response = await doFetch(`${options.proxyUrl.replace(/\/+$/, "")}${PROXY_STREAM_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${options.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ model, context, options: pickProxyOptions(options) }),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok || !response.body) return fail(stream, builder, "error", `Proxy error: ${await httpError(response)}`);
    const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    for await (const { data } of iterate(events)) {
      const event = builder.apply(parseEvent(data));
      if (!event) continue;
      stream.push(event);
      if (event.type === "done" || event.type === "error") return;
    }
    if (signal?.aborted) fail(stream, builder, "aborted", ABORTED);
    else fail(stream, builder, "error", CUT);
  } catch (error) {
    if (signal?.aborted) fail(stream, builder, "aborted", ABORTED);
    else fail(stream, builder, "error", error instanceof ProxyProtocolError ? `Proxy protocol error: ${error.message}` : messageOf(error));
  }
}

function parseEvent(data: string): ProxyAssistantMessageEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProxyProtocolError(`an event is not JSON: ${data.slice(0, 80)}`);
  }
  if (!value || typeof value !== "object" || typeof (value as { type?: unknown }).type !== "string") {
    throw new ProxyProtocolError("an event has no type");
  }
  return value as ProxyAssistantMessageEvent;
}

/** The server's `{ "error": "…" }`, else the status line. */
async function httpError(response: Response): Promise<string> {
  const fallback = `${response.status} ${response.statusText}`.trim();
  try {
    const body = (await response.json()) as { error?: unknown };
    return typeof body?.error === "string" && body.error ? body.error : fallback;
  } catch {
    return fallback;
  }
}

function fail(stream: PushAssistantStream, builder: ProxyMessageBuilder, reason: "error" | "aborted", errorMessage: string): void {
  const message = builder.message;
  message.stopReason = reason;
  message.errorMessage = errorMessage;
  stream.push({ type: "error", reason, error: message });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A ReadableStream as an async iterable (browsers without `ReadableStream[Symbol.asyncIterator]`). */
async function* iterate<T>(readable: ReadableStream<T>): AsyncGenerator<T> {
  const reader = readable.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Cancelling also aborts the HTTP body once we stop early (terminal event).
    await reader.cancel().catch(() => {});
  }
}
