/**
 * The terminal agent's MCP servers, in the `mcpServers` format Claude Code and other clients use:
 * `.mcp.json` in the working directory (project servers: asked about once, mcp-approvals.ts) and
 * `--mcp-config FILE` (named by the user: started without asking). Values may use `${VAR}` and
 * `${VAR:-default}` from the environment, as Claude Code's do.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { McpServerConfig } from "../../mcp/types.js";

export const PROJECT_MCP_FILE = ".mcp.json";

export interface CliMcpServer {
  name: string;
  config: McpServerConfig;
  /** Where it was configured: `.mcp.json` (a project server) or the `--mcp-config` file. */
  source: "project" | "flag";
  file: string;
  /** What the approval question shows: the command line or the URL (no env, no headers). */
  summary: string;
}

export class McpConfigError extends Error {
  override name = "McpConfigError";
}

/** The servers of `.mcp.json` (if there is one) and of `--mcp-config` (which wins for a name both have). */
export function readMcpServers(cwd: string, flagFile: string | undefined, env: Record<string, string | undefined>, invocationCwd: string): CliMcpServer[] {
  const servers = new Map<string, CliMcpServer>();
  const project = path.join(cwd, PROJECT_MCP_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(project, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new McpConfigError(`cannot read ${project}: ${(error as Error).message}`);
  }
  if (text !== undefined) for (const server of parseMcpServers(text, project, "project", env)) servers.set(server.name, server);
  if (flagFile !== undefined) {
    const file = path.resolve(invocationCwd, flagFile);
    let flagText: string;
    try {
      flagText = readFileSync(file, "utf8");
    } catch (error) {
      throw new McpConfigError(`--mcp-config: cannot read ${file}: ${(error as Error).message}`);
    }
    for (const server of parseMcpServers(flagText, file, "flag", env)) servers.set(server.name, server);
  }
  return [...servers.values()];
}

export function parseMcpServers(text: string, file: string, source: CliMcpServer["source"], env: Record<string, string | undefined>): CliMcpServer[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`${file} is not JSON: ${(error as Error).message}`);
  }
  const entries = (json as { mcpServers?: unknown } | null)?.mcpServers;
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) throw new McpConfigError(`${file}: needs an object "mcpServers" of servers by name`);
  return Object.entries(entries).map(([name, raw]) => parseServer(name, raw, file, source, env));
}

function parseServer(name: string, raw: unknown, file: string, source: CliMcpServer["source"], env: Record<string, string | undefined>): CliMcpServer {
  const where = `${file}: mcpServers.${name}`;
  if (!/^[A-Za-z0-9_.-]{1,40}$/.test(name)) throw new McpConfigError(`${where}: a server name is 1-40 letters, digits, "_", "-" or "."`);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new McpConfigError(`${where}: must be an object`);
  const entry = raw as Record<string, unknown>;
  const expand = (value: string) => expandVariables(value, env);
  const strings = (key: string): string[] | undefined => {
    const value = entry[key];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) throw new McpConfigError(`${where}.${key}: must be an array of strings`);
    return value.map(expand);
  };
  const record = (key: string): Record<string, string> | undefined => {
    const value = entry[key];
    if (value === undefined) return undefined;
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.values(value).every((item) => typeof item === "string")) {
      throw new McpConfigError(`${where}.${key}: must be an object of strings`);
    }
    return Object.fromEntries(Object.entries(value as Record<string, string>).map(([key, item]) => [key, expand(item)]));
  };
  const settings = {
    ...(entry.trustAnnotations === true ? { trustAnnotations: true } : {}),
    ...(typeof entry.timeout === "number" && entry.timeout > 0 ? { toolTimeoutMs: entry.timeout } : {}),
  };
  const type = entry.type ?? (typeof entry.url === "string" ? "http" : "stdio");
  if (type === "stdio") {
    if (typeof entry.command !== "string" || entry.command === "") throw new McpConfigError(`${where}.command: a stdio server needs a command`);
    const command = expand(entry.command);
    const args = strings("args");
    const serverEnv = record("env");
    const cwd = typeof entry.cwd === "string" ? expand(entry.cwd) : undefined;
    return {
      name,
      source,
      file,
      config: { command, ...(args ? { args } : {}), ...(serverEnv ? { env: serverEnv } : {}), ...(cwd ? { cwd } : {}), ...settings },
      summary: [command, ...(args ?? [])].map(shellWord).join(" "),
    };
  }
  if (type === "http") {
    if (typeof entry.url !== "string") throw new McpConfigError(`${where}.url: an http server needs a url`);
    const url = expand(entry.url);
    try {
      new URL(url);
    } catch {
      throw new McpConfigError(`${where}.url: not an absolute URL`);
    }
    const headers = record("headers");
    return { name, source, file, config: { url, ...(headers ? { headers } : {}), ...settings }, summary: url };
  }
  throw new McpConfigError(`${where}.type: ${JSON.stringify(type)} is not supported (stdio or http; the deprecated sse transport is not)`);
}

/** `${VAR}` and `${VAR:-default}`; an unset variable without a default is an error (Claude Code fails too). */
export function expandVariables(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    throw new McpConfigError(`the environment variable ${name} is not set (used in an MCP server's configuration)`);
  });
}

const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);
