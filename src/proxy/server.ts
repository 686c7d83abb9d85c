/**
 * The server side of the stream proxy (wire.ts): a Node `http` request handler that runs the
 * server's own stream function (which holds the API key) for a client's `streamProxy` request and
 * answers with the partial-less events as server-sent events. Only types come from node:http, so
 * any server with Node's request/response shape works (Express, Fastify's raw objects, …).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { timingSafeEqual } from "node:crypto";
import type { AssistantMessageEvent, Message, Model, StreamFn, StreamOptions } from "../types.js";
import { emptyUsage } from "../providers/assistant-stream.js";
import { PROXY_OPTION_KEYS, toProxyEvent, type ProxyAssistantMessageEvent } from "./wire.js";
import { redactCredentials } from "../boundary/secret-keys.js";

export interface StreamProxyHandlerOptions {
  /**
   * Who may use the proxy (it spends your key): the bearer token every request must carry. Give
   * this or `authorize`; a handler with neither is refused at creation.
   */
  authToken?: string;
  /**
   * Decides per request, given the bearer token (undefined when absent) and the request; for apps
   * that authenticate otherwise (session cookies, a same-origin check) return true for them. May throw
   * or reject: the request is refused with 401.
   */
  authorize?: (token: string | undefined, request: IncomingMessage) => boolean | Promise<boolean>;
  /**
   * The model to run for the client's requested one; `undefined` refuses the request (400). Default:
   * the client's model without its `baseUrl`, so a client cannot send your key to a host of its
   * choosing. Restrict ids or prices here (the client's `cost` figures are only what it claims).
   */
  resolveModel?: (requested: Model) => Model | undefined | Promise<Model | undefined>;
  /** Request bodies above this are refused (413). Default 8 MiB. */
  maxBodyBytes?: number;
}

export type StreamProxyHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** A client-side failure, answered with its status and `{ "error": message }`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The handler for `POST <proxyUrl>/api/stream` (mount it at `PROXY_STREAM_PATH`). It answers any
 * request it is given, never throws or rejects, and aborts the upstream request when the client
 * goes away.
 */
export function createStreamProxyHandler(streamFn: StreamFn, options: StreamProxyHandlerOptions = {}): StreamProxyHandler {
  if (typeof streamFn !== "function") throw new TypeError("createStreamProxyHandler: streamFn must be a function");
  const authorize = authorizer(options);
  const resolveModel = options.resolveModel ?? withoutBaseUrl;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  return async (request, response) => {
    // The client aborted or went away (during the checks below too): abort the upstream request, or never make it.
    const controller = new AbortController();
    response.once("close", () => {
      if (!response.writableFinished) controller.abort();
    });
    let request_: { model: Model; messages: Message[]; options: StreamOptions };
    try {
      if (request.method !== "POST") throw new HttpError(405, "Use POST");
      if (!(await Promise.resolve().then(() => authorize(bearerToken(request), request)).catch(() => false))) throw new HttpError(401, "Unauthorized");
      const body = parseBody(await readBody(request, maxBodyBytes));
      const model = await resolveModel(body.model);
      if (!model) throw new HttpError(400, `Model ${JSON.stringify(body.model.id)} is not available through this proxy`);
      request_ = { model, messages: body.messages, options: body.options };
    } catch (error) {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof HttpError ? error.message : "Internal proxy error";
      if (!response.headersSent) response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
      response.end(JSON.stringify({ error: message }));
      request.resume();
      return;
    }
    if (controller.signal.aborted) return;
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" });
    const send = (event: ProxyAssistantMessageEvent) => {
      if (!response.destroyed) response.write(`data: ${JSON.stringify(event)}\n\n`);
    };
    try {
      const stream = await streamFn(request_.model, { messages: request_.messages }, { ...request_.options, signal: controller.signal });
      for await (const event of stream as AsyncIterable<AssistantMessageEvent>) {
        if (response.destroyed) break;
        send(toProxyEvent(event));
        if (event.type === "done" || event.type === "error") break;
      }
    } catch (error) {
      // The stream function broke its never-throw contract; the client still gets a terminal event.
      // (Its text may quote a key: the client gets it without anything shaped like one.)
      const text = error instanceof Error ? error.message : String(error);
      send({ type: "error", reason: controller.signal.aborted ? "aborted" : "error", errorMessage: redactCredentials(text), usage: emptyUsage() });
    }
    response.end();
  };
}

function authorizer(options: StreamProxyHandlerOptions): NonNullable<StreamProxyHandlerOptions["authorize"]> {
  if (options.authorize) {
    const authorize = options.authorize;
    return async (token, request) => (await authorize(token, request)) === true;
  }
  if (typeof options.authToken === "string" && options.authToken !== "") {
    const expected = Buffer.from(options.authToken);
    return (token) => {
      const given = Buffer.from(token ?? "");
      return given.length === expected.length && timingSafeEqual(given, expected);
    };
  }
  throw new TypeError("createStreamProxyHandler: give authToken or authorize (the proxy spends your API key)");
}

function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(.+)$/i.exec(header) : null;
  return match ? match[1].trim() : undefined;
}

function withoutBaseUrl(model: Model): Model {
  const { baseUrl: _dropped, ...rest } = model;
  return rest;
}

/** The request body, checked: a model, messages, and only the wire's stream options. */
function parseBody(text: string): { model: Model; messages: Message[]; options: StreamOptions } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "The request body is not JSON");
  }
  const { model, context, options } = (body && typeof body === "object" ? body : {}) as { model?: unknown; context?: { messages?: unknown }; options?: unknown };
  if (!isModel(model)) throw new HttpError(400, "Expected model: { id, api, provider, … }");
  if (!context || typeof context !== "object" || !Array.isArray(context.messages)) throw new HttpError(400, "Expected context: { messages: [...] }");
  const streamOptions: Record<string, unknown> = {};
  if (options && typeof options === "object") {
    for (const key of PROXY_OPTION_KEYS) {
      const value = (options as Record<string, unknown>)[key];
      if (value !== undefined) streamOptions[key] = value;
    }
  }
  return { model, messages: context.messages as Message[], options: streamOptions as StreamOptions };
}

function isModel(value: unknown): value is Model {
  if (!value || typeof value !== "object") return false;
  const model = value as Record<string, unknown>;
  return typeof model.id === "string" && typeof model.api === "string" && typeof model.provider === "string";
}

function readBody(request: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners("data");
        reject(new HttpError(413, `Request body larger than ${limit} bytes`));
      } else chunks.push(chunk);
    });
    request.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.once("error", reject);
  });
}
