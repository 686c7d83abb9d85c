/**
 * The browser embedding example (examples/web-chat/): builds the library if dist/ is stale, builds
 * the page with Vite, and serves it on 127.0.0.1 with node:http.
 *
 *   npm run example:web                    scripted model, offline (default port 5174)
 *   npm run example:web -- --anthropic     Claude through a local proxy; ANTHROPIC_API_KEY stays here
 *   npm run example:web -- --port 0 --model claude-haiku-4-5
 *
 * Routes: /  /assets/*   GET /api/config (which model the page runs, and the proxy's token)
 *         POST /api/stream (only with --anthropic): the stream proxy protocol of pi's `streamProxy`
 *         (`createStreamProxyHandler` from `xstate-agent-loop/proxy`; the page uses `streamProxy`
 *         through `proxyStreamFn`): the server runs `anthropicStreamFn` with its own key and model.
 *
 * The model is always the server's (`resolveModel`), and the key never leaves this process. The
 * proxy answers only same-origin requests to 127.0.0.1/localhost (no CORS, a Host check against
 * DNS rebinding, `Origin` checked) that carry this server's random bearer token, so other sites
 * and other local processes cannot spend the key.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Model } from "../src/types.js";
import { anthropicModel, anthropicStreamFn } from "../src/providers/anthropic/index.js";
import { createStreamProxyHandler, PROXY_STREAM_PATH } from "../src/proxy/index.js";
import { DEFAULT_MODEL } from "../src/node/cli/args.js";
import { ensureLibraryBuilt } from "./build.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const EXAMPLE_DIR = join(ROOT, "examples/web-chat");
export const EXAMPLE_OUT_DIR = join(EXAMPLE_DIR, "dist");
export const DEFAULT_PORT = 5174;

// ---------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------

/** The library build is `npm run build`'s (scripts/build.ts); re-exported for the tests that use dist/. */
export { ensureLibraryBuilt };

/** `vite build` of the example (examples/web-chat/vite.config.ts) into examples/web-chat/dist. */
export async function buildExample(options: { quiet?: boolean; outDir?: string } = {}): Promise<string> {
  const { build } = await import("vite");
  const outDir = options.outDir ?? EXAMPLE_OUT_DIR;
  // Another outDir lets test files build the example side by side without emptying each other's.
  await build({ configFile: join(EXAMPLE_DIR, "vite.config.ts"), logLevel: options.quiet ? "warn" : "info", build: { outDir } });
  return outDir;
}

// ---------------------------------------------------------------------------------------------
// Serving
// ---------------------------------------------------------------------------------------------

export interface AnthropicProxyOptions {
  apiKey: string;
  /** Claude model id; default: the CLI's default model. */
  model?: string;
  /** Another Messages API endpoint (e.g. a test server); default `ANTHROPIC_BASE_URL` or api.anthropic.com. */
  baseURL?: string;
}

export interface ExampleServerOptions {
  /** Default 5174; 0 picks a free port. */
  port?: number;
  /** Serve this build (default examples/web-chat/dist). */
  dir?: string;
  /** Forward the page's requests to Claude. */
  anthropic?: AnthropicProxyOptions;
  /** Let `follow.html` read the events of sessions that run on Restate (read-only: the `events` handler only). */
  restate?: { ingressUrl: string; object?: string };
}

export interface ExampleServer {
  url: string;
  server: Server;
  /** The model the page runs, as `/api/config` reports it. */
  model: Model | null;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/** The inspector UI (stately.ai) may be framed; everything else is this origin only. */
const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-src https://stately.ai";

export async function startExampleServer(options: ExampleServerOptions = {}): Promise<ExampleServer> {
  const dir = resolve(options.dir ?? EXAMPLE_OUT_DIR);
  if (!existsSync(join(dir, "index.html"))) throw new Error(`no build in ${dir}: run buildExample() first`);
  const proxy = options.anthropic ? anthropicProxy(options.anthropic) : null;
  let origin = "";

  const send = (res: ServerResponse, status: number, body: string | Buffer, type = "text/plain; charset=utf-8") => {
    res.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff", "content-security-policy": CSP });
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // DNS rebinding: only this server's own host names.
    const port = new URL(origin).port;
    if (req.headers.host !== `127.0.0.1:${port}` && req.headers.host !== `localhost:${port}`) return send(res, 403, "forbidden host\n");
    const path = decodeURIComponent(new URL(req.url ?? "/", origin).pathname);
    if (path === PROXY_STREAM_PATH) {
      if (!proxy) return send(res, 404, "start the server with --anthropic to use the proxy\n");
      if (req.method !== "POST") return send(res, 405, "method not allowed\n");
      const from = req.headers.origin;
      if (from !== undefined && from !== `http://${req.headers.host}`) return send(res, 403, "cross-origin requests are refused\n");
      if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) return send(res, 415, "expected application/json\n");
      return proxy.handle(req, res);
    }
    if (path === RESTATE_EVENTS_PATH) {
      if (!options.restate) return send(res, 404, "start the server with --restate to follow a session\n");
      if (req.method !== "POST") return send(res, 405, "method not allowed\n");
      const from = req.headers.origin;
      if (from !== undefined && from !== `http://${req.headers.host}`) return send(res, 403, "cross-origin requests are refused\n");
      return forwardRestateEvents(req, res, options.restate, send);
    }
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "method not allowed\n");
    if (path === "/api/config") {
      const config = proxy ? { provider: "anthropic", model: proxy.model, proxyToken: proxy.token } : { provider: "scripted" };
      return send(res, 200, JSON.stringify(config), TYPES[".json"]);
    }
    if (path === "/favicon.ico") return send(res, 204, "");
    const file = resolve(dir, `.${path === "/" ? "/index.html" : path}`);
    if (!file.startsWith(dir + sep)) return send(res, 404, "not found\n");
    try {
      return send(res, 200, await readFile(file), TYPES[extname(file)] ?? "application/octet-stream");
    } catch {
      return send(res, 404, "not found\n");
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, `${error instanceof Error ? error.message : String(error)}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_PORT, "127.0.0.1", () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    server,
    model: proxy?.model ?? null,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

const RESTATE_EVENTS_PATH = "/api/restate/events";

/**
 * POST /api/restate/events {session, after}: the session object's `events` handler on Restate's
 * ingress. Only that read-only handler is reachable, and only for a well-formed session id.
 */
async function forwardRestateEvents(
  req: IncomingMessage,
  res: ServerResponse,
  restate: { ingressUrl: string; object?: string },
  send: (res: ServerResponse, status: number, body: string | Buffer, type?: string) => void,
): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4_096) return send(res, 413, "request too large\n");
    chunks.push(chunk as Buffer);
  }
  let body: { session?: unknown; after?: unknown };
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return send(res, 400, "expected JSON\n");
  }
  if (typeof body.session !== "string" || !/^[\w.:-]{1,200}$/.test(body.session)) return send(res, 400, "session: an id of letters, digits and . _ : -\n");
  const after = typeof body.after === "number" && Number.isInteger(body.after) && body.after >= 0 ? body.after : 0;
  const object = restate.object ?? "agentSession";
  const upstream = await fetch(`${restate.ingressUrl}/${object}/${encodeURIComponent(body.session)}/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ after, limit: 200 }),
  });
  return send(res, upstream.status, await upstream.text(), TYPES[".json"]);
}

/** POST /api/stream: the page's `streamProxy` request, answered by Claude with the server's key and model. */
function anthropicProxy(options: AnthropicProxyOptions) {
  const baseURL = options.baseURL ?? process.env.ANTHROPIC_BASE_URL;
  // An unknown --model is priced like the default model rather than refused (a local demo).
  const model = anthropicModel(options.model ?? DEFAULT_MODEL, baseURL ? { baseUrl: baseURL } : {}, { fallback: DEFAULT_MODEL });
  const token = randomBytes(24).toString("base64url");
  const handle = createStreamProxyHandler(anthropicStreamFn({ apiKey: options.apiKey }), { authToken: token, resolveModel: () => model });
  return { model, token, handle };
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

interface Args {
  port: number;
  anthropic: boolean;
  restate?: string;
  model?: string;
  help: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { port: DEFAULT_PORT, anthropic: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--port" || arg === "-p") args.port = Number(argv[++i]);
    else if (arg.startsWith("--port=")) args.port = Number(arg.slice("--port=".length));
    else if (arg === "--anthropic") args.anthropic = true;
    else if (arg === "--restate") args.restate = argv[++i];
    else if (arg === "--model" || arg === "-m") args.model = argv[++i];
    else if (arg.startsWith("--model=")) args.model = arg.slice("--model=".length);
    else if (arg === "--help" || arg === "-h") args.help = true;
    else throw new Error(`unexpected argument: ${arg}`);
  }
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) throw new Error("--port must be an integer from 0 to 65535");
  if (args.model !== undefined && !args.anthropic) throw new Error("--model needs --anthropic");
  return args;
}

const USAGE = `usage: npm run example:web -- [--anthropic [--model ID]] [--port N]
  Builds examples/web-chat and serves it on http://127.0.0.1:N/ (default ${DEFAULT_PORT}).
  --anthropic   talk to Claude through a local proxy (needs ANTHROPIC_API_KEY; the key stays in this process)
  --model ID    Claude model (default ${DEFAULT_MODEL})
  --restate URL let follow.html?session=ID follow a session on Restate (URL: its ingress, e.g. http://127.0.0.1:8080)`;

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const apiKey = process.env.ANTHROPIC_API_KEY;
  if (args.anthropic && !apiKey) throw new Error("--anthropic needs ANTHROPIC_API_KEY in the environment");
  const { rebuilt } = await ensureLibraryBuilt((line) => console.log(line));
  if (!rebuilt) console.log("library: dist/ is up to date");
  await buildExample();
  const server = await startExampleServer({
    port: args.port,
    ...(args.anthropic ? { anthropic: { apiKey: apiKey!, ...(args.model ? { model: args.model } : {}) } } : {}),
    ...(args.restate ? { restate: { ingressUrl: args.restate } } : {}),
  });
  const model = server.model ? `${server.model.id} via the local proxy` : "the scripted model (offline)";
  console.log(`web chat example: ${server.url}  (${model}; Ctrl-C to stop)`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`example:web: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
