/**
 * `npm run view -- trace.jsonl [--port N] [--classic]` (default port 4173; 0 picks a free one).
 *
 * By default a trace file (src/trace/FORMAT.md) opens in the live inspector's page
 * (src/inspector): one UI for live runs and recorded files. `--classic` serves the older run
 * viewer instead (visualizations/viewer/: its timeline of turns and tool calls, usage table and
 * record filters, which the inspector page does not have yet), from the server below: a tiny
 * local HTTP server (127.0.0.1 only), no CDN, no build step, offline.
 *
 * Classic routes: /  /viewer.js  /viewer.css   /trace.jsonl (re-read on every request)
 *         /machines/index.json   /machines/<name>.machine.svg|json
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const VISUALIZATIONS_DIR = join(ROOT, "visualizations");
export const DEFAULT_PORT = 4173;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".jsonl": "application/x-ndjson; charset=utf-8",
};

export interface ViewerOptions {
  /** The trace file to show. */
  trace: string;
  /** Default 4173; 0 picks a free port. */
  port?: number;
  /** Where the viewer and the machine diagrams live (default visualizations/). */
  dir?: string;
}

export interface ViewerServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startViewerServer(options: ViewerOptions): Promise<ViewerServer> {
  const trace = resolve(options.trace);
  const dir = options.dir ?? VISUALIZATIONS_DIR;
  const viewerDir = join(dir, "viewer");
  if (!existsSync(trace)) throw new Error(`trace file not found: ${options.trace}`);

  const send = (res: ServerResponse, status: number, body: string | Buffer, type = "text/plain; charset=utf-8", extra: Record<string, string> = {}) => {
    res.writeHead(status, {
      "content-type": type,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
      ...extra,
    });
    res.end(body);
  };
  const sendFile = async (res: ServerResponse, path: string, extra?: Record<string, string>) => {
    const ext = path.slice(path.lastIndexOf("."));
    try {
      send(res, 200, await readFile(path), TYPES[ext] ?? "application/octet-stream", extra);
    } catch {
      send(res, 404, `not found: ${basename(path)}${/\.machine\./.test(path) ? " (run `npm run visualize`)" : ""}\n`);
    }
  };

  const machinesIndex = async () => {
    const files = existsSync(dir) ? (await readdir(dir)).filter((name) => name.endsWith(".machine.json")).sort() : [];
    const machines = [];
    for (const file of files) {
      const name = file.replace(/\.json$/, "");
      const graph = JSON.parse(await readFile(join(dir, file), "utf8")) as { id: string; source?: string };
      machines.push({
        name,
        id: graph.id,
        source: graph.source ?? null,
        json: `/machines/${name}.json`,
        svg: existsSync(join(dir, `${name}.svg`)) ? `/machines/${name}.svg` : null,
      });
    }
    return machines;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "method not allowed\n");
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
    if (path === "/" || path === "/index.html") return sendFile(res, join(viewerDir, "index.html"));
    if (path === "/viewer.js" || path === "/viewer.css") return sendFile(res, join(viewerDir, path.slice(1)));
    if (path === "/trace.jsonl") {
      const info = await stat(trace);
      return sendFile(res, trace, { "x-trace-name": encodeURIComponent(basename(trace)), "last-modified": info.mtime.toUTCString() });
    }
    if (path === "/machines/index.json") return send(res, 200, JSON.stringify(await machinesIndex()), TYPES[".json"]);
    const machine = /^\/machines\/([A-Za-z0-9_.-]+\.machine\.(svg|json))$/.exec(path);
    if (machine && !machine[1].includes("..")) return sendFile(res, join(dir, machine[1]));
    if (path === "/favicon.ico") return send(res, 204, "");
    return send(res, 404, "not found\n");
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, `${error instanceof Error ? error.message : String(error)}\n`));
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_PORT, "127.0.0.1", () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

/**
 * What `npm run view` serves for a trace: the live inspector's page showing the file (default), or
 * the classic viewer. Throws `TraceFormatError` (inspector page) when the file is not a v1 trace.
 */
export async function openTrace(options: { trace: string; port?: number; classic?: boolean }): Promise<{ url: string; close(): Promise<void> }> {
  if (options.classic) return startViewerServer({ trace: options.trace, port: options.port });
  const { createLiveInspector } = await import("../src/inspector/index.js");
  const text = await readFile(options.trace, "utf8");
  const inspector = await createLiveInspector({ port: options.port ?? DEFAULT_PORT });
  try {
    inspector.showTrace(text, basename(options.trace));
  } catch (error) {
    await inspector.close();
    throw error;
  }
  return inspector;
}

function parseArgs(argv: string[]): { trace?: string; port: number; help: boolean; classic: boolean } {
  let trace: string | undefined;
  let port = DEFAULT_PORT;
  let help = false;
  let classic = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--classic") classic = true;
    // The default now; still accepted so older commands keep working.
    else if (arg === "--live") classic = false;
    else if (arg === "--port" || arg === "-p") port = Number(argv[++i]);
    else if (arg.startsWith("--port=")) port = Number(arg.slice("--port=".length));
    else if (arg === "--help" || arg === "-h") help = true;
    else if (!trace) trace = arg;
    else throw new Error(`unexpected argument: ${arg}`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("--port must be an integer from 0 to 65535");
  return { trace, port, help, classic };
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  if (args.help || !args.trace) {
    console.log(
      "usage: npm run view -- TRACE.jsonl [--port N] [--classic]\n  Opens a trace (src/trace/FORMAT.md) in the live inspector's page on http://127.0.0.1:N/ (default 4173).\n  --classic: the older run viewer instead (timeline, usage table, record filters).",
    );
    process.exit(args.help ? 0 : 2);
  }
  if (args.classic && !existsSync(join(VISUALIZATIONS_DIR, "run.machine.svg"))) console.warn("warning: visualizations/run.machine.svg is missing; run `npm run visualize`");
  const view = await openTrace({ trace: args.trace, port: args.port, classic: args.classic });
  console.log(`${args.classic ? "Run viewer" : "Inspector"} for ${args.trace}: ${view.url}  (Ctrl-C to stop)`);
  const stop = () => void view.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`view: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
