/**
 * A local HTTP server that speaks a provider's streaming wire (OpenAI Responses and Chat
 * Completions, Gemini's `streamGenerateContent?alt=sse`, …) from a script, one response per
 * request, in order: SSE frames split across many TCP writes at irregular byte offsets (mid-line,
 * mid-character), JSON error responses with a status and headers, a socket reset mid-body, a
 * stall. Counts and records every request, so a test sees who retried.
 *
 * ```ts
 * const server = await startWireServer();
 * server.script(jsonError(429, body, { "retry-after": "0" }), sseFrames(frames));
 * // ... createOpenAI({ baseURL: `${server.url}/v1`, apiKey }) ...
 * await server.close();
 * ```
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { listenOnLoopback } from "./loopback-server.js";

/** One SSE frame: `event:` (optional) and `data:` (JSON-encoded unless a string). */
export interface Frame {
  event?: string;
  data: unknown;
}

export type WireResponse =
  | { kind: "sse"; frames: Frame[]; chunkDelayMs: number }
  | { kind: "json"; status: number; body: unknown; headers: Record<string, string> }
  | { kind: "reset"; frames: Frame[] }
  | { kind: "stall"; frames: Frame[] };

export const sseFrames = (frames: Frame[], options: { chunkDelayMs?: number } = {}): WireResponse => ({
  kind: "sse",
  frames,
  chunkDelayMs: options.chunkDelayMs ?? 0,
});
export const jsonError = (status: number, body: unknown, headers: Record<string, string> = {}): WireResponse => ({
  kind: "json",
  status,
  body,
  headers,
});
/** Sends `frames`, then destroys the socket: a connection dropped mid-stream. */
export const resetAfter = (frames: Frame[]): WireResponse => ({ kind: "reset", frames });
/** Sends `frames`, then nothing, keeping the connection open. */
export const stallAfter = (frames: Frame[]): WireResponse => ({ kind: "stall", frames });

export interface WireRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  rawBody: string;
}

export interface WireServer {
  readonly url: string;
  readonly requests: WireRequest[];
  script(...responses: WireResponse[]): void;
  clear(): void;
  close(): Promise<void>;
}

export function encodeFrames(frames: Frame[]): string {
  return frames
    .map(({ event, data }) => `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`)
    .join("");
}

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

const pause = (ms: number): Promise<void> => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

export async function startWireServer(): Promise<WireServer> {
  const queue: WireResponse[] = [];
  const requests: WireRequest[] = [];

  const writeChunked = async (res: ServerResponse, text: string, delayMs: number): Promise<boolean> => {
    for (const chunk of byteChunks(text)) {
      if (res.destroyed || res.socket?.destroyed) return false;
      res.write(chunk);
      await pause(delayMs);
    }
    return !res.destroyed;
  };

  const respond = async (res: ServerResponse, scripted: WireResponse): Promise<void> => {
    if (scripted.kind === "json") {
      res.writeHead(scripted.status, { "content-type": "application/json", ...scripted.headers });
      res.end(JSON.stringify(scripted.body));
      return;
    }
    res.socket?.setNoDelay(true);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    const text = encodeFrames(scripted.frames);
    switch (scripted.kind) {
      case "sse":
        if (await writeChunked(res, text, scripted.chunkDelayMs)) res.end();
        return;
      case "reset":
        await writeChunked(res, text, 0);
        res.socket?.destroy();
        return;
      case "stall":
        await writeChunked(res, text, 0);
        return;
    }
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
      const scripted = queue.shift() ?? jsonError(500, { error: { message: "The test server has no scripted response left" } });
      void respond(res, scripted);
    });
  });
  const listening = await listenOnLoopback(server);

  return {
    url: listening.url,
    requests,
    script: (...responses) => queue.push(...responses),
    clear: () => {
      queue.length = 0;
      requests.length = 0;
    },
    close: listening.close,
  };
}
