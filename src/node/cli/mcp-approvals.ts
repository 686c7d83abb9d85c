/**
 * A project's `.mcp.json` can start any command: the terminal agent asks once before starting a
 * project server it has not seen (Claude Code does), and remembers the answer in its state
 * directory (outside the workspace, which the file tools refuse: the model cannot approve a server
 * by writing the file). A server whose command, arguments or URL changed is asked about again.
 * Servers named with `--mcp-config` are the user's own choice and start without a question.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { CliMcpServer } from "./mcp-config.js";

export const MCP_APPROVALS_FILE = "mcp-servers.json";

type Decision = "allowed" | "refused";
type Remembered = Record<string, { fingerprint: string; decision: Decision }>;

/** What decides a server's start: a question on the terminal (resolves with the typed line), or none. */
export interface McpServerGate {
  stateDir: string;
  /** Absent when there is no terminal to ask on. */
  ask?: (question: string) => Promise<string>;
  /** `--yes`: start project servers without asking (the answer is not remembered). */
  yes: boolean;
}

export interface GateOutcome {
  allowed: CliMcpServer[];
  /** Lines for the screen: what was not started, and why. */
  notices: string[];
}

export async function gateProjectServers(servers: readonly CliMcpServer[], gate: McpServerGate): Promise<GateOutcome> {
  const file = path.join(gate.stateDir, MCP_APPROVALS_FILE);
  const remembered = readRemembered(file);
  const allowed: CliMcpServer[] = [];
  const notices: string[] = [];
  let changed = false;
  for (const server of servers) {
    if (server.source !== "project" || gate.yes) {
      allowed.push(server);
      continue;
    }
    const fingerprint = fingerprintOf(server);
    const known = remembered[server.name]?.fingerprint === fingerprint ? remembered[server.name]!.decision : undefined;
    let decision = known;
    if (decision === undefined && gate.ask) {
      const answer = await gate.ask(`? start MCP server "${server.name}" from ${path.basename(server.file)} (${server.summary})? It was not started here before. [y/N] `);
      decision = /^\s*y(es)?\s*$/i.test(answer) ? "allowed" : "refused";
      remembered[server.name] = { fingerprint, decision };
      changed = true;
    }
    if (decision === "allowed") allowed.push(server);
    else if (decision === "refused") notices.push(`MCP server "${server.name}" not started (refused; remembered in ${file})`);
    else notices.push(`MCP server "${server.name}" from ${path.basename(server.file)} not started: never approved (run on a terminal once to be asked, or use --yes)`);
  }
  if (changed) writeRemembered(file, remembered);
  return { allowed, notices };
}

/** What identifies a server's start, without its env or header values (secrets are never written here). */
function fingerprintOf(server: CliMcpServer): string {
  const config = server.config as unknown as Record<string, unknown>;
  const shape = {
    command: config.command,
    args: config.args,
    cwd: config.cwd,
    url: config.url,
    env: Object.keys((config.env as object | undefined) ?? {}).sort(),
    headers: Object.keys((config.headers as object | undefined) ?? {}).sort(),
  };
  return createHash("sha256").update(JSON.stringify(shape)).digest("hex").slice(0, 32);
}

function readRemembered(file: string): Remembered {
  try {
    const json = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return typeof json === "object" && json !== null && !Array.isArray(json) ? (json as Remembered) : {};
  } catch {
    return {};
  }
}

function writeRemembered(file: string, remembered: Remembered): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(remembered, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** One line typed on the terminal (cooked mode, before the prompt editor takes the keyboard). */
export function readLine(stdin: NodeJS.ReadableStream, stdout: { write(text: string): unknown }, question: string): Promise<string> {
  stdout.write(question);
  return new Promise((resolve) => {
    let text = "";
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      const end = text.indexOf("\n");
      if (end < 0) return;
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.pause();
      resolve(text.slice(0, end).replace(/\r$/, ""));
    };
    const onEnd = () => {
      stdin.off("data", onData);
      resolve(text);
    };
    stdin.on("data", onData);
    stdin.once("end", onEnd);
    stdin.resume();
  });
}
