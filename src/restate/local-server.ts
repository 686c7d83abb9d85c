/**
 * A Restate server for development and tests, started from `node_modules` (the
 * `@restatedev/restate-server-<platform>-<arch>` package ships the binary; nothing is downloaded).
 *
 * It binds loopback only, on ports the server picks itself (`--use-random-ports`, read back from
 * its JSON log), so test files running in parallel and a developer's own server never collide.
 * The base directory is a fresh temporary one unless given, and is removed on `stop()`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

export interface LocalRestateServerOptions {
  /**
   * The invocation retry policy's first interval in ms (Restate's default is 500 ms, growing to a
   * minute): crash tests want a dead worker's invocation retried within ~100 ms.
   */
  readonly retryIntervalMs?: number;
  /** Keep the server's data here (reused across starts); default: a temporary directory removed on stop. */
  readonly baseDir?: string;
  /** How long to wait for `/health` (default 20 s). */
  readonly startTimeoutMs?: number;
}

export interface LocalRestateServer {
  /** Where clients call handlers, e.g. `http://127.0.0.1:41234`. */
  readonly ingressUrl: string;
  /** The admin API; its UI is at `${adminUrl}/ui/`. */
  readonly adminUrl: string;
  readonly baseDir: string;
  /** Registers (or re-registers, `force`) a worker's endpoint, e.g. `http://127.0.0.1:9080`. */
  registerDeployment(endpointUrl: string): Promise<void>;
  /**
   * Waits until the invocation of `target` (`service/key/handler`) has one of `statuses` (Restate's
   * `sys_invocation.status`: `running`, `backing-off`, `suspended`, `completed`, …), read from the
   * admin API's SQL introspection. For tests that must know what the server did (a dead worker noticed).
   */
  waitForInvocationStatus(target: string, statuses: readonly string[], timeoutMs?: number): Promise<string>;
  /** Stops the server (SIGTERM, SIGKILL after 5 s) and removes a temporary base directory. */
  stop(): Promise<void>;
}

/** The server could not be started: its binary is not installed, or it did not become healthy. */
export class RestateServerError extends Error {
  override name = "RestateServerError";
}

export function restateServerBinary(): string {
  const pkg = `@restatedev/restate-server-${process.platform}-${process.arch}`;
  try {
    return join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), "bin", "restate-server");
  } catch {
    throw new RestateServerError(`the Restate server binary is not installed: add @restatedev/restate-server (it brings ${pkg}) to your devDependencies`);
  }
}

export async function startLocalRestateServer(options: LocalRestateServerOptions = {}): Promise<LocalRestateServer> {
  const binary = restateServerBinary();
  const ownDir = options.baseDir === undefined;
  const baseDir = options.baseDir ?? mkdtempSync(join(tmpdir(), "restate-"));
  const env: NodeJS.ProcessEnv = { ...process.env, RESTATE_DISABLE_TELEMETRY: "true", SCARF_ANALYTICS: "false", DO_NOT_TRACK: "1" };
  if (options.retryIntervalMs !== undefined) {
    env.RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL = `${options.retryIntervalMs}ms`;
    env.RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL = `${options.retryIntervalMs}ms`;
    // At that pace the default 70 attempts would pause an invocation after seconds without a worker.
    env.RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS = "1000000";
  }
  const child = spawn(binary, ["--base-dir", baseDir, "--bind-ip", "127.0.0.1", "--no-logo", "--use-random-ports", "true", "--listen-mode", "tcp", "--log-format", "json"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stopOnExit = () => child.kill("SIGKILL");
  process.once("exit", stopOnExit);
  const recent: string[] = [];
  const cleanup = () => {
    process.removeListener("exit", stopOnExit);
    if (ownDir) rmSync(baseDir, { recursive: true, force: true });
  };
  try {
    const ports = await readPorts(child, recent, options.startTimeoutMs ?? 20_000);
    const adminUrl = `http://127.0.0.1:${ports.admin}`;
    await waitForHealth(adminUrl, child, options.startTimeoutMs ?? 20_000);
    return {
      ingressUrl: `http://127.0.0.1:${ports.ingress}`,
      adminUrl,
      baseDir,
      registerDeployment: (endpointUrl) => registerDeployment(adminUrl, endpointUrl),
      waitForInvocationStatus: (target, statuses, timeoutMs = 20_000) => waitForInvocationStatus(adminUrl, target, statuses, timeoutMs),
      stop: async () => {
        await stopChild(child);
        cleanup();
      },
    };
  } catch (error) {
    await stopChild(child);
    cleanup();
    const detail = recent.length ? `; its last log lines:\n${recent.join("\n")}` : "";
    throw new RestateServerError(`${(error as Error).message}${detail}`);
  }
}

/** The ingress and admin ports, from the server's JSON log lines that announce its listeners. */
function readPorts(child: ChildProcess, recent: string[], timeoutMs: number): Promise<{ ingress: number; admin: number }> {
  return new Promise((resolve, reject) => {
    const found: { ingress?: number; admin?: number } = {};
    const timer = setTimeout(() => reject(new Error(`the Restate server did not announce its ports within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`the Restate server exited (code ${code}) before it listened`));
    };
    child.once("exit", onExit);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        recent.push(line);
        if (recent.length > 20) recent.shift();
        const span = parseSpan(line);
        if (span?.server_name === "http-ingress-server") found.ingress = span["server.port"];
        if (span?.server_name === "admin-api-server") found.admin = span["server.port"];
        if (found.ingress && found.admin) {
          clearTimeout(timer);
          child.removeListener("exit", onExit);
          resolve({ ingress: found.ingress, admin: found.admin });
        }
      });
    }
  });
}

function parseSpan(line: string): { server_name?: string; "server.port"?: number } | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    return (JSON.parse(line) as { span?: { server_name?: string; "server.port"?: number } }).span;
  } catch {
    return undefined;
  }
}

async function waitForHealth(adminUrl: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Restate server exited (code ${child.exitCode})`);
    try {
      if ((await fetch(`${adminUrl}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the Restate server was not healthy within ${timeoutMs} ms`);
}

async function registerDeployment(adminUrl: string, uri: string): Promise<void> {
  const response = await fetch(`${adminUrl}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri, force: true }),
  });
  if (!response.ok) throw new RestateServerError(`registering ${uri} failed: HTTP ${response.status} ${await response.text()}`);
}

async function waitForInvocationStatus(adminUrl: string, target: string, statuses: readonly string[], timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let seen: string[] = [];
  while (Date.now() < deadline) {
    const response = await fetch(`${adminUrl}/query`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: `SELECT status FROM sys_invocation WHERE target = '${target.replaceAll("'", "''")}'` }),
    });
    if (!response.ok) throw new RestateServerError(`query failed: HTTP ${response.status} ${await response.text()}`);
    seen = ((await response.json()) as { rows: { status: string }[] }).rows.map((row) => row.status);
    const hit = seen.find((status) => statuses.includes(status));
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new RestateServerError(`invocation ${target} did not reach ${statuses.join(" or ")} within ${timeoutMs} ms (seen: ${seen.join(", ") || "none"})`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
