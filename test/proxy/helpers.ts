import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream } from "../../src/index.js";

export interface LocalServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 and a free port; `close()` drops open connections too. */
export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<LocalServer> {
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The message without what differs from run to run (clock readings). */
export function stable(message: AssistantMessage): Omit<AssistantMessage, "timestamp" | "durationMs"> {
  const { timestamp: _t, durationMs: _d, ...rest } = message;
  return rest;
}

/** An event without its partial/message (compared separately), as plain data. */
export function projectEvent(event: AssistantMessageEvent): Record<string, unknown> {
  const { partial: _p, message: _m, error: _e, ...rest } = event as AssistantMessageEvent & { partial?: unknown; message?: unknown; error?: unknown };
  return rest;
}

/** Every event (projected) and the final message (stable) of a stream. */
export async function drain(stream: AssistantMessageEventStream): Promise<{ events: Record<string, unknown>[]; message: ReturnType<typeof stable> }> {
  const events: Record<string, unknown>[] = [];
  for await (const event of stream) events.push(projectEvent(event));
  return { events, message: stable(await stream.result()) };
}

/** Writes `events` as the proxy protocol's server-sent events. */
export function writeSse(res: ServerResponse, events: readonly unknown[], end = true): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
  if (end) res.end();
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}
