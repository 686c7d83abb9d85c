/** Test support for the Restate tests: worker child processes whose output the test reads line by line. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const WORKER = fileURLToPath(new URL("./fixtures/session-worker.ts", import.meta.url));
// The worker bundled once per test process and run with plain `node`, as the crash test's child:
// under `--import tsx` each of the ≈30 workers the Restate tests start spent ≈1.8 s of CPU
// compiling src/ before it listened (≈0.6 s bundled). Packages stay external, resolved from this
// checkout's node_modules (the bundle is written inside it).
const CACHE = fileURLToPath(new URL("../../node_modules/.cache/", import.meta.url));
let bundle: Promise<string> | undefined;
function workerBundle(): Promise<string> {
  return (bundle ??= (async () => {
    mkdirSync(CACHE, { recursive: true });
    const dir = mkdtempSync(join(CACHE, "restate-worker-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const outfile = join(dir, "session-worker.mjs");
    await build({ entryPoints: [WORKER], bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", outfile, logLevel: "silent" });
    return outfile;
  })());
}

export interface Worker {
  readonly port: number;
  readonly process: ChildProcess;
  /** Every `executed <toolCallId>` line so far. */
  readonly executed: string[];
  /** Every `span {json}` line so far (a worker started with OTEL=1), parsed. */
  readonly spans: unknown[];
  /** Resolves when the worker has printed `count` executions in all. */
  executions(count: number): Promise<void>;
  kill(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startWorker(port: number, env: Record<string, string> = {}): Promise<Worker> {
  const child = spawn(process.execPath, [await workerBundle()], {
    env: { ...process.env, RESTATE_LOGGING: "WARN", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const executed: string[] = [];
  const spans: unknown[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4_000)));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`worker exited (${code}) before listening:\n${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("listening ")) {
        child.removeAllListeners("exit");
        resolve(worker);
      }
      if (line.startsWith("span ")) spans.push(JSON.parse(line.slice("span ".length)));
      if (line.startsWith("executed ")) {
        executed.push(line.slice("executed ".length));
        for (const waiter of waiters.filter((w) => executed.length >= w.count)) waiter.resolve();
      }
    });
    const worker: Worker = {
      port,
      process: child,
      executed,
      spans,
      executions: (count) => (executed.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
      kill: () =>
        child.exitCode !== null || child.signalCode !== null
          ? Promise.resolve()
          : new Promise((done) => {
              child.once("exit", () => done());
              child.kill("SIGKILL");
            }),
    };
  });
}

/**
 * A round-robin TCP balancer in front of several workers (Restate registers one endpoint URL per
 * deployment; a real deployment puts a load balancer there). A connection goes to the next worker
 * that accepts it, so a dead worker's share moves to the others.
 */
export async function startBalancer(ports: () => readonly number[]): Promise<{ port: number; close(): Promise<void> }> {
  const { createConnection } = await import("node:net");
  let next = 0;
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    const targets = ports();
    const attempt = (tries: number) => {
      if (tries >= targets.length) return void client.destroy();
      const port = targets[next++ % targets.length];
      const upstream = createConnection({ host: "127.0.0.1", port });
      upstream.once("connect", () => {
        // Nagle's algorithm with delayed ACKs would hold each small HTTP/2 frame ~40 ms.
        client.setNoDelay(true);
        upstream.setNoDelay(true);
        sockets.add(upstream);
        upstream.on("close", () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        upstream.on("error", () => client.destroy());
        client.on("error", () => upstream.destroy());
      });
      upstream.once("error", () => {
        if (!upstream.readyState || upstream.connecting) attempt(tries + 1);
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
