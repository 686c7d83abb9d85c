/**
 * `xstate-agent-loop/mcp/node`: `connectMcp` that also spawns stdio servers (`command`, `args`,
 * `env`, `cwd`), as Claude Code's `mcpServers` entries describe them. Node only: it starts
 * processes. The server's stderr is kept (its last lines explain a failed start or a crash) and
 * never printed.
 */
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connectMcpWith, httpTransports, type McpClient, type TransportResolver } from "./mcp-client.js";
import type { McpClientOptions } from "./types.js";

export * from "./index.js";

/** How much of a server's stderr is kept, in characters. */
const STDERR_TAIL = 1_000;

const nodeTransports: TransportResolver = (name, config) => {
  if (!("command" in config)) return httpTransports(name, config);
  return () => {
    const transport = new StdioClientTransport({
      command: config.command,
      ...(config.args ? { args: config.args } : {}),
      // The SDK's safe defaults (PATH, HOME, …), then the config's own values.
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: "pipe",
    });
    let tail = "";
    transport.stderr?.on("data", (chunk: Buffer | string) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL);
    });
    return { transport, stderrTail: () => tail };
  };
};

/** `connectMcp` with stdio servers too (see `xstate-agent-loop/mcp`). */
export async function connectMcp(options: McpClientOptions): Promise<McpClient> {
  return connectMcpWith(options, nodeTransports);
}
