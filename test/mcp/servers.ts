/**
 * The MCP servers of test/mcp, started and stopped by the tests: the public everything server
 * (@modelcontextprotocol/server-everything, from npm) over stdio and over Streamable HTTP on an
 * ephemeral port, our fixture server (fixtures/fixture-server.mjs) over stdio, and a hand-written
 * one (fixtures/raw-server.mjs) that lists malformed tools.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { McpStdioServerConfig } from "../../src/mcp/types.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const FIXTURE_SERVER = path.join(here, "fixtures/fixture-server.mjs");
const RAW_SERVER = path.join(here, "fixtures/raw-server.mjs");
const EVERYTHING_HTTP = path.join(here, "fixtures/everything-http.mjs");
export const EVERYTHING_MAIN = path.join(path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");

export const fixtureServer = (extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig => ({ command: process.execPath, args: [FIXTURE_SERVER], ...extra });
/**
 * A hand-written server (fixtures/raw-server.mjs) that lists exactly `tools`, malformed ones
 * included, and answers a call with `results[tool]` if given; `env` adds RAW_CALL_LOG or
 * RAW_NEXT_TOOLS (see the server).
 */
export const rawServer = (tools: unknown[], results: Record<string, unknown> = {}, env: Record<string, string> = {}): McpStdioServerConfig => ({
  command: process.execPath,
  args: [RAW_SERVER],
  env: { RAW_TOOLS: JSON.stringify(tools), RAW_RESULTS: JSON.stringify(results), ...env },
});
export const everythingStdio = (extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig => ({ command: process.execPath, args: [EVERYTHING_MAIN, "stdio"], ...extra });

/** The everything server over Streamable HTTP; `stop()` ends its process. */
export const startEverythingHttp = () => startHttpHost([EVERYTHING_HTTP]);
/** The fixture server over Streamable HTTP (one session). */
export const startFixtureHttp = () => startHttpHost([FIXTURE_SERVER, "http"]);

async function startHttpHost(args: string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /PORT (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the everything HTTP host exited (${code}) before listening: ${out}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => stopProcess(child) };
}

export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
