/**
 * `xstate-agent-loop/mcp`: Model Context Protocol servers' tools in the loop, on the official SDK
 * (`@modelcontextprotocol/sdk`, an optional peer dependency). Browser-safe: Streamable HTTP servers
 * and any SDK transport; stdio servers (spawned processes) need `xstate-agent-loop/mcp/node`.
 */
export { connectMcp, McpClient, type TransportResolver } from "./mcp-client.js";
export { mcpToolName, NAME_SEPARATOR } from "./names.js";
export type {
  McpClientOptions,
  McpServerConfig,
  McpHttpServerConfig,
  McpStdioServerConfig,
  McpTransportServerConfig,
  McpServerSettings,
  McpToolOverride,
  McpLimits,
  McpReconnectSettings,
  McpServerStatus,
  McpToolStatus,
  McpToolDetails,
  McpCallErrorKind,
} from "./types.js";
