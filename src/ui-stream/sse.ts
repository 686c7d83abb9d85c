/** The UI message stream's wire format: server-sent events of JSON parts, ended by `[DONE]`. */
import type { UIStreamChunk } from "./chunks.js";

/** ai@7's `UI_MESSAGE_STREAM_HEADERS`: `useChat` reads a response with these as a UI message stream. */
export const UI_MESSAGE_STREAM_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

const encoder = new TextEncoder();

export function sseChunk(chunk: UIStreamChunk): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);
}

export const SSE_DONE = encoder.encode("data: [DONE]\n\n");
