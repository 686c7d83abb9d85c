/**
 * A local Anthropic-compatible server for driving the real SDK in tests: answers `POST /v1/messages`
 * from a script of responses written in the SSE wire format (`event:` + `data:` lines), split across
 * many TCP writes at arbitrary byte offsets (mid-line, mid-character) to exercise the SDK's parser.
 * Records every request (parsed JSON body and headers).
 *
 * ```ts
 * const server = await startSseServer();
 * server.script(json(429, rateLimited, { "retry-after": "0" }), sse(textResponse("Hi")));
 * // ... new Anthropic({ baseURL: server.url, apiKey }) ...
 * await server.close();
 * ```
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { listenOnLoopback } from "./loopback-server.js";

// ---------------------------------------------------------------------------------------------
// Scripted responses
// ---------------------------------------------------------------------------------------------

export interface SseEvent {
  event: string;
  data: unknown;
}

export type ScriptedResponse =
  | { kind: "sse"; events: SseEvent[]; chunkDelayMs: number }
  | { kind: "json"; status: number; body: unknown; headers: Record<string, string> }
  | { kind: "midStreamError"; before: SseEvent[]; type: string; message: string }
  | { kind: "truncated"; events: SseEvent[] }
  | { kind: "stall"; events: SseEvent[] }
  | { kind: "reset"; events: SseEvent[] }
  | { kind: "hangUp" };

/** A complete event stream; `chunkDelayMs` spaces the TCP writes (a slow stream). */
export const sse = (events: SseEvent[], options: { chunkDelayMs?: number } = {}): ScriptedResponse => ({
  kind: "sse",
  events,
  chunkDelayMs: options.chunkDelayMs ?? 0,
});

/** A JSON response with a status, e.g. `json(429, errorBody("rate_limit_error", "..."), {"retry-after": "0"})`. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): ScriptedResponse => ({
  kind: "json",
  status,
  body,
  headers,
});

/** A 200 stream that sends `before` (default: the start of a text reply), then an SSE `error` event. */
export const midStreamError = (type: string, message: string, before: SseEvent[] = partialText()): ScriptedResponse => ({
  kind: "midStreamError",
  before,
  type,
  message,
});

/** A stream cut before `message_stop`: the body ends cleanly after `events`. */
export const truncated = (events: SseEvent[] = partialText()): ScriptedResponse => ({ kind: "truncated", events });

/** Sends `events` (default: `message_start`), then nothing, keeping the connection open. */
export const stall = (events: SseEvent[] = [messageStart()]): ScriptedResponse => ({ kind: "stall", events });

/** Sends `events`, then destroys the socket mid-body. */
export const reset = (events: SseEvent[] = partialText()): ScriptedResponse => ({ kind: "reset", events });

/** Destroys the socket before any response byte: a connection reset before the headers. */
export const hangUp = (): ScriptedResponse => ({ kind: "hangUp" });

/** The API's error body. */
export const errorBody = (type: string, message: string): unknown => ({ type: "error", error: { type, message } });

// ---------------------------------------------------------------------------------------------
// Fixture builders (the real wire shapes)
// ---------------------------------------------------------------------------------------------

export interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export const FIXTURE_MODEL = "claude-haiku-4-5";

export function messageStart(usage: WireUsage = {}, id = "msg_01test"): SseEvent {
  return {
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: FIXTURE_MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          ...usage,
        },
      },
    },
  };
}

export const ping = (): SseEvent => ({ event: "ping", data: { type: "ping" } });

const blockStart = (index: number, contentBlock: unknown): SseEvent => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block: contentBlock },
});
const blockDelta = (index: number, delta: unknown): SseEvent => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta },
});
const blockStop = (index: number): SseEvent => ({ event: "content_block_stop", data: { type: "content_block_stop", index } });

export function textBlock(index: number, chunks: string[]): SseEvent[] {
  return [
    blockStart(index, { type: "text", text: "", citations: null }),
    ...chunks.map((text) => blockDelta(index, { type: "text_delta", text })),
    blockStop(index),
  ];
}

/** A thinking block; the signature arrives as two `signature_delta`s just before the stop. */
export function thinkingBlock(index: number, chunks: string[], signature: string): SseEvent[] {
  const half = Math.ceil(signature.length / 2);
  return [
    blockStart(index, { type: "thinking", thinking: "", signature: "" }),
    ...chunks.map((thinking) => blockDelta(index, { type: "thinking_delta", thinking })),
    blockDelta(index, { type: "signature_delta", signature: signature.slice(0, half) }),
    blockDelta(index, { type: "signature_delta", signature: signature.slice(half) }),
    blockStop(index),
  ];
}

/** Complete at start; no deltas. */
export function redactedThinkingBlock(index: number, data: string): SseEvent[] {
  return [blockStart(index, { type: "redacted_thinking", data }), blockStop(index)];
}

/** A tool_use block; the first `input_json_delta` is `""`, as the API sends it. */
export function toolUseBlock(index: number, id: string, name: string, jsonChunks: string[]): SseEvent[] {
  return [
    blockStart(index, { type: "tool_use", id, name, input: {} }),
    blockDelta(index, { type: "input_json_delta", partial_json: "" }),
    ...jsonChunks.map((partial_json) => blockDelta(index, { type: "input_json_delta", partial_json })),
    blockStop(index),
  ];
}

/** Splits `text` into pieces of `size` characters: JSON split mid-token. */
export function splitEvery(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

export function messageDelta(
  stopReason: string | null,
  usage: WireUsage = { output_tokens: 5 },
  stopDetails: unknown = null,
): SseEvent {
  return {
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null, stop_details: stopDetails, container: null },
      usage,
    },
  };
}

export const messageStop = (): SseEvent => ({ event: "message_stop", data: { type: "message_stop" } });

export interface ResponseOptions {
  stopReason?: string | null;
  /** `message_start` usage. */
  usage?: WireUsage;
  /** `message_delta` usage (running totals). */
  finalUsage?: WireUsage;
  stopDetails?: unknown;
}

/** message_start, ping, the blocks, message_delta, message_stop. */
export function response(blocks: SseEvent[][], options: ResponseOptions = {}): SseEvent[] {
  return [
    messageStart(options.usage),
    ping(),
    ...blocks.flat(),
    messageDelta(options.stopReason === undefined ? "end_turn" : options.stopReason, options.finalUsage, options.stopDetails),
    messageStop(),
  ];
}

export function textResponse(chunks: string | string[], options: ResponseOptions = {}): SseEvent[] {
  return response([textBlock(0, typeof chunks === "string" ? [chunks] : chunks)], options);
}

/** The start of a text reply with no end: message_start and a text block with one delta. */
export function partialText(text = "Partial"): SseEvent[] {
  return [messageStart(), blockStart(0, { type: "text", text: "", citations: null }), blockDelta(0, { type: "text_delta", text })];
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined if it was not JSON). */
  body: unknown;
  rawBody: string;
}

export interface SseServer {
  /** Base URL for the SDK, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Queues responses, one per incoming request, in order. */
  script(...responses: ScriptedResponse[]): void;
  /** Clears the queue and the recorded requests; request ids restart at `req_test_1`. */
  clear(): void;
  close(): Promise<void>;
}

export function encodeEvents(events: SseEvent[]): string {
  return events.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

/** Irregular chunk sizes (bytes), so splits land mid-line, mid-field and mid-character. */
const CHUNK_SIZES = [7, 23, 3, 41, 13, 1, 29, 5];

function byteChunks(text: string): Buffer[] {
  const bytes = Buffer.from(text, "utf8");
  const chunks: Buffer[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = CHUNK_SIZES[i % CHUNK_SIZES.length];
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

const pause = (ms: number): Promise<void> =>
  new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

export async function startSseServer(): Promise<SseServer> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  let requestCount = 0;

  const writeChunked = async (res: ServerResponse, text: string, delayMs: number): Promise<boolean> => {
    for (const chunk of byteChunks(text)) {
      if (res.destroyed || res.socket?.destroyed) return false;
      res.write(chunk);
      await pause(delayMs);
    }
    return !res.destroyed;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, rawBody });
      const requestId = `req_test_${++requestCount}`;

      if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
        res.writeHead(404, { "content-type": "application/json", "request-id": requestId });
        res.end(JSON.stringify(errorBody("not_found_error", `No route for ${req.method} ${req.url}`)));
        return;
      }
      const scripted = queue.shift() ?? json(500, errorBody("api_error", "The test server has no scripted response left"));
      void respond(res, scripted, requestId);
    });
  });

  const respond = async (res: ServerResponse, scripted: ScriptedResponse, requestId: string): Promise<void> => {
    if (scripted.kind === "hangUp") {
      res.socket?.destroy();
      return;
    }
    if (scripted.kind === "json") {
      res.writeHead(scripted.status, { "content-type": "application/json", "request-id": requestId, ...scripted.headers });
      res.end(JSON.stringify(scripted.body));
      return;
    }
    res.socket?.setNoDelay(true);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": requestId });
    res.flushHeaders();
    switch (scripted.kind) {
      case "sse":
        if (await writeChunked(res, encodeEvents(scripted.events), scripted.chunkDelayMs)) res.end();
        return;
      case "midStreamError": {
        const error = { event: "error", data: errorBody(scripted.type, scripted.message) };
        if (await writeChunked(res, encodeEvents([...scripted.before, error]), 0)) res.end();
        return;
      }
      case "truncated":
        if (await writeChunked(res, encodeEvents(scripted.events), 0)) res.end();
        return;
      case "stall":
        await writeChunked(res, encodeEvents(scripted.events), 0);
        return; // never ends; the client aborts or close() destroys the socket
      case "reset":
        await writeChunked(res, encodeEvents(scripted.events), 0);
        res.socket?.destroy();
        return;
    }
  };

  const listening = await listenOnLoopback(server);

  return {
    url: listening.url,
    requests,
    script: (...responses) => queue.push(...responses),
    clear: () => {
      queue.length = 0;
      requests.length = 0;
      requestCount = 0;
    },
    close: listening.close,
  };
}
