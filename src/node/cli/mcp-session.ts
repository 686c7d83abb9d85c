/**
 * The terminal agent's MCP client: started only when servers are configured (the SDK loads then,
 * never otherwise), its tools beside the built-in ones (no shadowing: the built-ins' names are
 * reserved), every call of a tool whose annotations are not trusted asked about (R82), `/mcp`'s
 * listing, and the approval question that names the server.
 */
import type { McpClient } from "../../mcp/mcp-client.js";
import type { McpServerStatus } from "../../mcp/types.js";
import type { ToolApprovalRequest } from "../../types.js";
import type { CliMcpServer } from "./mcp-config.js";
import type { Style } from "./style.js";
import { visible } from "./visible.js";

export interface CliMcpOptions {
  servers: readonly CliMcpServer[];
  /** The built-in tools' names: no MCP tool may take one. */
  reservedNames: readonly string[];
  /** `--yes`: MCP calls run without asking. */
  yes: boolean;
  version: string;
  onWarning: (message: string) => void;
}

export async function startCliMcp(options: CliMcpOptions): Promise<McpClient> {
  const { connectMcp } = await import("../../mcp/node.js");
  return connectMcp({
    servers: Object.fromEntries(options.servers.map((server) => [server.name, server.config])),
    reservedNames: options.reservedNames,
    needsApprovalByDefault: !options.yes,
    clientInfo: { name: "xstate-agent", version: options.version },
    onWarning: options.onWarning,
  });
}

/**
 * `/mcp`: each server, its state and its tools (with what the loop knows of them). What a server
 * reports (its error, its tools' names, why one was left out) is shown, not obeyed (`visible`),
 * before the styles go on: the caller prints it as a styled notice.
 */
export function formatMcpStatus(status: readonly McpServerStatus[], style: Style): string {
  if (status.length === 0) return "no MCP servers (configure them in .mcp.json or with --mcp-config FILE)";
  const lines: string[] = [];
  for (const server of status) {
    const state = server.state === "connected" ? style.green(server.state) : server.state === "failed" ? style.red(server.state) : style.yellow(server.state);
    lines.push(`${style.bold(server.name)} · ${server.transport} · ${state} · ${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}${server.trustAnnotations ? " · annotations trusted" : ""}`);
    if (server.error) lines.push(`  ${style.red(visible(server.error))}`);
    for (const tool of server.tools) {
      const traits = [tool.concurrencySafe ? "parallel" : "", tool.replay === "safe" ? "replay-safe" : "", tool.needsApproval === false ? "" : "asks"].filter(Boolean);
      lines.push(`  ${visible(tool.name)}${traits.length ? style.dim(` (${traits.join(", ")})`) : ""}`);
    }
    for (const skipped of server.skipped) lines.push(style.dim(visible(`  left out: ${skipped.tool} — ${skipped.reason}`)));
  }
  return lines.join("\n");
}

/** The question for an MCP call, naming its server; undefined for a tool that is not an MCP one. */
export function mcpApprovalQuestion(request: ToolApprovalRequest, client: McpClient | undefined): string | undefined {
  const info = client?.toolInfo(request.toolName);
  if (!info) return undefined;
  let args = JSON.stringify(request.args ?? {});
  if (args.length > 160) args = `${args.slice(0, 160)}…`;
  // JSON escapes C0 but not DEL or C1; the tool's name is the server's.
  return visible(`? allow MCP server "${info.server}" to run ${info.tool} ${args}? [y/N/a = always this tool] `);
}
