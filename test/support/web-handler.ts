/**
 * A Web `Request` → `Response` handler (the ui-stream route) behind Node's `http`: the request's
 * signal aborts when the client goes away, as a platform's would.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export async function serveWeb(req: IncomingMessage, res: ServerResponse, handler: (request: Request) => Promise<Response>): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks);
  const response = await handler(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body, signal: controller.signal }));
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) res.write(next.value);
  } catch {
    // the client went away
  }
  res.end();
}
