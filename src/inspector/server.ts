/**
 * `createLiveInspector`: a local HTTP server (node:http) with one self-contained page and a
 * Server-Sent Events channel, fed by an inspection observer. Loopback by default; bound anywhere
 * else, every request needs the random token in the URL. On loopback the Host header must name
 * the loopback too, so a web page cannot reach the inspector through DNS rebinding.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import type { AttachableObserver } from "../boundary/inspect-observer.js";
import type { SanitizeOptions } from "../inspect/sanitize.js";
import { findDiagramsDir, loadDiagrams, loadRules } from "./diagrams.js";
import { createInspectorFeed, type WireMessage } from "./feed.js";
import { ForkError, type ApprovalDecision, type ForkSource } from "./fork.js";
import type { ForkPoint } from "./fork-points.js";
import { createForkManager, type ForkApprovalRequest, type ForkRequest, type StartedFork } from "./forks.js";
import { renderPage } from "./page.js";
import { traceMessages } from "./trace-source.js";
import { machineTransitions } from "./transitions.js";

export interface LiveInspectorOptions {
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. Any other address requires the token (in the printed URL). */
  host?: string;
  /** How values are sanitized (secrets to redact, sizes); the defaults of `xstate-agent-loop/inspect`. */
  sanitize?: SanitizeOptions;
  /** Where the *.machine.svg diagrams are (default: the package's visualizations/). */
  diagramsDir?: string;
  /** How often observed steps are sent, at most (default 16 ms: one frame). */
  flushMs?: number;
  /**
   * Answers a fork's approval without the page (headless use, tests): a decision, or undefined to
   * leave it to the page.
   */
  forkApprovals?: (request: ForkApprovalRequest) => ApprovalDecision | undefined;
}

export interface LiveInspector {
  /** The page's URL (with the token when one is required). */
  url: string;
  host: string;
  port: number;
  /** Pass in `inspect: [inspector.observer]` (composes with other observers). */
  observer: AttachableObserver;
  /** Everything observed so far, sanitized (what a page that connects now receives first). */
  messages(): WireMessage[];
  /**
   * Time travel: the page may fork this durable session from any of its persisted points (a new
   * session in the same store; the original is only read), run with `source.run`.
   */
  addForkSource(source: ForkSource): void;
  /**
   * Shows a recorded trace (src/trace/FORMAT.md) in the page beside live sessions: one session per
   * run, named `<name> · run k`. Throws `TraceFormatError` for a file that is not a version 1 trace.
   */
  showTrace(text: string, name: string): void;
  /**
   * The session's fork points (what the page lists): empty until the store holds a run of it.
   * Throws `ForkError` for a session without a source.
   */
  forkPoints(session: string): ForkPoint[];
  /** Forks as the page's "fork from here" does. Throws `ForkError` for an unknown session or point. */
  fork(request: ForkRequest): StartedFork;
  /** Answers an approval a fork waits for, as the page's buttons do (false: nothing waits under that id). */
  decide(session: string, approvalId: string, decision: ApprovalDecision): boolean;
  close(): Promise<void>;
}

/** A POST body larger than this is refused (an edited response is text). */
const MAX_BODY = 256 * 1024;

/** A request the inspector refuses, answered with `status` and the reason. */
class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Refused at once; the rest is read and dropped (not kept), so the client, still sending,
      // gets the answer rather than a reset connection.
      if (size > MAX_BODY) reject(new BadRequest(`the body is larger than ${MAX_BODY / 1024} KB`, 413));
      else chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new BadRequest("the body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}

const reasonOf = (error: unknown): string => (error instanceof Error ? (error instanceof BadRequest || error instanceof ForkError ? error.message : `${error.name}: ${error.message}`) : String(error));

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function forkRequestOf(body: unknown): ForkRequest {
  if (!isRecord(body) || typeof body.session !== "string" || !Number.isInteger(body.seq)) throw new BadRequest("expected { session, seq, edit? }");
  const edit = body.edit;
  if (edit !== undefined && (!isRecord(edit) || typeof edit.text !== "string" || (edit.keepCalls !== undefined && typeof edit.keepCalls !== "boolean"))) {
    throw new BadRequest("edit must be { text, keepCalls? }");
  }
  return { session: body.session, seq: body.seq as number, ...(edit ? { edit: { text: edit.text as string, ...(edit.keepCalls !== undefined ? { keepCalls: edit.keepCalls as boolean } : {}) } } : {}) };
}

function decisionOf(body: unknown): { session: string; id: string; decision: ApprovalDecision } {
  if (!isRecord(body) || typeof body.session !== "string" || typeof body.id !== "string" || typeof body.approve !== "boolean") throw new BadRequest("expected { session, id, approve, reason? }");
  const reason = typeof body.reason === "string" && body.reason ? body.reason : "rejected in the inspector";
  return { session: body.session, id: body.id, decision: body.approve ? { approve: true } : { approve: false, reason } };
}

/** Bytes a page may leave unread before it is dropped (it reconnects). */
const MAX_CLIENT_BUFFER = 8 * 1024 * 1024;

/**
 * A loopback address or name: `localhost`, an IPv4 literal in 127.0.0.0/8, `::1`. Only literals
 * count (`isIP`): `127.attacker.example` is a name its owner can point anywhere (DNS rebinding).
 */
export const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));

/**
 * The host of a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`), lowercased; undefined for
 * anything else (a bare IPv6 address, a user part, a path), which no browser sends.
 */
export function hostOfHeader(header: string): string | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]@/\\]+))(?::\d{1,5})?$/.exec(header);
  return match ? (match[1] ?? match[2])!.toLowerCase() : undefined;
}

export async function createLiveInspector(options: LiveInspectorOptions): Promise<LiveInspector> {
  const host = options.host ?? "127.0.0.1";
  const token = isLoopback(host) ? undefined : randomBytes(18).toString("base64url");
  // Every POST carries this (the page has it; another site's page cannot read it nor send the header without a preflight we refuse).
  const actionToken = randomBytes(18).toString("base64url");
  const feed = createInspectorFeed({ sanitize: options.sanitize });
  const forks = createForkManager({ observer: feed.observer, note: feed.note, reserve: feed.reserve, sanitize: { ...options.sanitize }, answer: options.forkApprovals });
  const diagramsDir = options.diagramsDir ?? findDiagramsDir();
  const diagrams = loadDiagrams(diagramsDir);
  // Inlined as a JSON data block (never executed): "<" escaped so no text closes the element.
  const transitions = JSON.stringify(machineTransitions(loadRules(diagramsDir))).replace(/</g, "\\u003c");
  const clients = new Set<ServerResponse>();
  const flushMs = options.flushMs ?? 16;

  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    timer = undefined;
    const batch = feed.drain();
    if (batch.length === 0 || clients.size === 0) return;
    const frame = `data: ${JSON.stringify(batch)}\n\n`;
    for (const client of clients) {
      // A page that cannot keep up (a background tab, a stalled socket) would grow this process's
      // memory without bound: it is dropped, and its EventSource reconnects to a fresh history.
      if (client.writableLength > MAX_CLIENT_BUFFER) {
        clients.delete(client);
        client.end();
      } else client.write(frame);
    }
  };
  feed.onPending(() => {
    timer ??= setTimeout(flush, flushMs);
    // A pending flush must not keep a finished CLI or test process alive.
    timer.unref?.();
  });

  const allowed = (req: IncomingMessage, url: URL): boolean => {
    if (token) return url.searchParams.get("token") === token;
    const name = hostOfHeader(req.headers.host ?? "");
    return name !== undefined && isLoopback(name);
  };

  const server = createServer((req, res) => {
    const headers = { "cache-control": "no-store", "x-content-type-options": "nosniff" };
    // Whatever a request makes fail is its 500, never an uncaught exception in the host (the CLI).
    try {
      route(req, res, headers);
    } catch (error) {
      failed(res, headers, error);
    }
  });

  /** The last resort: a failure no handler answered becomes a 500 with its reason. */
  const failed = (res: ServerResponse, headers: Record<string, string>, error: unknown) => {
    if (res.headersSent) res.destroy();
    else res.writeHead(500, { ...headers, "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ error: reasonOf(error) }));
  };

  const route = (req: IncomingMessage, res: ServerResponse, headers: Record<string, string>) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (!allowed(req, url)) {
      res.writeHead(403, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("forbidden\n");
      return;
    }
    if (req.method === "POST") {
      act(req, res, url.pathname, headers).catch((error: unknown) => failed(res, headers, error));
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, headers).end();
      return;
    }
    if (url.pathname === "/") {
      const nonce = randomBytes(16).toString("base64");
      res.writeHead(200, {
        ...headers,
        "content-type": "text/html; charset=utf-8",
        // Nothing but this page's own inline script and style, and its own origin for the channel.
        "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'`,
      });
      res.end(renderPage({ nonce, diagrams, actionToken, transitions }));
      return;
    }
    if (url.pathname === "/events") {
      res.writeHead(200, { ...headers, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
      flush(); // what is pending goes to the others first, so history and live do not overlap
      res.write(`event: reset\ndata: ${JSON.stringify(feed.history())}\n\n`);
      clients.add(res);
      req.once("close", () => clients.delete(res));
      return;
    }
    if (url.pathname === "/messages.json") {
      flush();
      res.writeHead(200, { ...headers, "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(feed.history()));
      return;
    }
    if (url.pathname === "/points") {
      json(res, headers, () => forks.points(url.searchParams.get("session") ?? ""));
      return;
    }
    res.writeHead(404, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("not found\n");
  };

  /** Answers with `answer()`'s JSON: the caller's mistake is a 4xx with the reason, anything else a 500. */
  const json = (res: ServerResponse, headers: Record<string, string>, answer: () => unknown) => {
    let status = 200;
    let body: unknown;
    try {
      body = answer();
    } catch (error) {
      status = error instanceof BadRequest ? error.status : error instanceof ForkError ? 400 : 500;
      body = { error: reasonOf(error) };
    }
    // A refused body may still be arriving: the connection is not reused.
    const close = status === 413 ? { connection: "close" } : {};
    res.writeHead(status, { ...headers, ...close, "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
  };

  /** The page's actions: fork from a point, answer a fork's approval. */
  const act = async (req: IncomingMessage, res: ServerResponse, path: string, headers: Record<string, string>) => {
    if (req.headers["x-inspector-token"] !== actionToken || !/^application\/json\b/.test(req.headers["content-type"] ?? "")) {
      res.writeHead(403, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("forbidden\n");
      return;
    }
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (error) {
      if (!res.headersSent) json(res, headers, () => { throw error instanceof BadRequest ? error : new BadRequest(reasonOf(error)); });
      return;
    }
    if (path === "/fork") json(res, headers, () => ({ fork: forks.fork(forkRequestOf(body)).sessionId }));
    else if (path === "/approval") {
      json(res, headers, () => {
        const { session, id, decision } = decisionOf(body);
        if (!forks.decide(session, id, decision)) throw new BadRequest(`no call of ${session} waits as ${id}`);
        return { ok: true };
      });
    } else res.writeHead(404, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("not found\n");
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/${token ? `?token=${token}` : ""}`,
    host: address.address,
    port: address.port,
    observer: feed.observer,
    messages: () => {
      flush();
      return feed.history();
    },
    addForkSource: (source) => forks.addSource(source),
    showTrace: (text, name) => {
      for (const message of traceMessages(text, name, { ...options.sanitize })) {
        if (message.t === "session") feed.reserve(message.s);
        else feed.note(message);
      }
    },
    forkPoints: (session) => forks.points(session).points,
    fork: (request) => forks.fork(request),
    decide: (session, approvalId, decision) => forks.decide(session, approvalId, decision),
    close: () =>
      new Promise<void>((resolve) => {
        if (timer) clearTimeout(timer);
        for (const client of clients) client.end();
        clients.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
