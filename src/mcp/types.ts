/**
 * The configuration of `xstate-agent-loop/mcp`: which MCP servers to connect to, how far to trust
 * what they say about their tools, and the limits their descriptions and results are held to.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { AgentTool } from "../types.js";

/** What a server may be told about one of its tools, whatever its annotations say. Overrides always win. */
export interface McpToolOverride {
  /** `false`: the tool is not offered to the model. */
  enabled?: boolean;
  /** SPEC R70: may the call start while the model streams, beside other safe calls? */
  concurrencySafe?: boolean;
  /** SPEC R13: may a call in flight at a crash run again after the resume? */
  replay?: "safe" | "never";
  /** SPEC R82: does the call wait for `approve`/`reject`? */
  needsApproval?: AgentTool["needsApproval"];
  /** SPEC R65: the call's timeout in ms. */
  timeoutMs?: number;
}

/** What every server's entry may say, whatever its transport. */
export interface McpServerSettings {
  /**
   * MCP calls tool annotations untrusted hints: a server that lies about `readOnlyHint` could get a
   * side effect run twice after a crash. Only with `true` does `readOnlyHint` make a tool
   * concurrency-safe (R70) and replay-safe (R13), and `destructiveHint` (or no hint) make it need
   * approval (R82). Default `false`: no tool of this server is concurrency- or replay-safe.
   */
  trustAnnotations?: boolean;
  /** Per-tool settings, keyed by the tool's name on the server (not the prefixed name). */
  tools?: Record<string, McpToolOverride>;
  /** SPEC R65: every call's timeout in ms unless the tool's override sets one. */
  toolTimeoutMs?: number;
}

/** A Streamable HTTP server (browser-safe). */
export interface McpHttpServerConfig extends McpServerSettings {
  type?: "http";
  url: string | URL;
  /** Sent with every request (an API key, a bearer token): never shown in events, snapshots, traces or logs. */
  headers?: Record<string, string>;
  /** The SDK's OAuth client flow (`OAuthClientProvider`): tokens, refresh and the authorization redirect. */
  authProvider?: OAuthClientProvider;
  /** A fetch implementation for the server's requests. */
  fetch?: typeof globalThis.fetch;
}

/** A server spawned as a process, talking over its stdin and stdout (Node only: `xstate-agent-loop/mcp/node`). */
export interface McpStdioServerConfig extends McpServerSettings {
  type?: "stdio";
  command: string;
  args?: string[];
  /** Added to the SDK's safe default environment (PATH, HOME, …): never shown in events, snapshots, traces or logs. */
  env?: Record<string, string>;
  cwd?: string;
}

/** Any transport of the SDK (an in-memory pair, WebSocket, …), made afresh for every (re)connection. */
export interface McpTransportServerConfig extends McpServerSettings {
  transport: () => Transport;
}

export type McpServerConfig = McpHttpServerConfig | McpStdioServerConfig | McpTransportServerConfig;

export interface McpLimits {
  /** A server's tool description is cut to this many characters (default 2 000). */
  descriptionChars?: number;
  /** The text of one result is cut to this many characters, with a note (default 50 000). */
  resultChars?: number;
  /** An image or other binary part above this many base64 characters is replaced by a note (default 4 000 000). */
  binaryChars?: number;
}

export interface McpReconnectSettings {
  /** The wait after the first failed reconnection, in ms; it doubles per failure (default 500). */
  baseDelayMs?: number;
  /** The longest wait between reconnections, in ms (default 30 000). */
  maxDelayMs?: number;
}

export interface McpClientOptions {
  /** The servers, by name. The name prefixes each of its tools: `NAME__tool`. */
  servers: Record<string, McpServerConfig>;
  /**
   * Names no MCP tool may take (the app's built-in tools): a server tool whose name would be one of
   * them is left out, as is one whose name another server's tool already has.
   */
  reservedNames?: Iterable<string>;
  /**
   * SPEC R82: whether a tool whose annotations are not trusted (or say nothing about it) waits for
   * approval. Default `false` (an app without an approval UI); the terminal agent says `true`.
   */
  needsApprovalByDefault?: boolean;
  limits?: McpLimits;
  reconnect?: McpReconnectSettings;
  /** How long connecting (initialize and the first tools/list) may take, in ms (default 30 000). */
  connectTimeoutMs?: number;
  /** How this client introduces itself to servers. */
  clientInfo?: { name: string; version: string };
  /** Notes about servers and tools (a tool left out, a server that failed); secrets are redacted. */
  onWarning?: (message: string) => void;
}

/** What a server is doing, for UIs (`/mcp`). Holds no secret. */
export interface McpServerStatus {
  name: string;
  transport: "http" | "stdio" | "custom";
  state: "connecting" | "connected" | "disconnected" | "failed" | "closed";
  /** Why it failed or disconnected (secrets redacted). */
  error?: string;
  trustAnnotations: boolean;
  /** Its tools as offered to the model. */
  tools: McpToolStatus[];
  /** Tools left out, and why. */
  skipped: { tool: string; reason: string }[];
}

export interface McpToolStatus {
  /** The name the model calls it by (`server__tool`). */
  name: string;
  /** Its name on the server. */
  serverTool: string;
  concurrencySafe: boolean;
  replay: "safe" | "never";
  needsApproval: boolean | "predicate";
}

/** Why an MCP call did not give the server's own result. */
export type McpCallErrorKind = "unavailable" | "disconnected" | "timeout" | "aborted" | "protocol";

/** `details` of an MCP tool's results (and of its progress updates). */
export interface McpToolDetails {
  mcp: {
    server: string;
    tool: string;
    /** Present when the call failed on the client's side (the server's own `isError` results have none). */
    error?: { kind: McpCallErrorKind; message: string };
    /** The result's text was cut at `limits.resultChars`. */
    truncated?: boolean;
  };
  /** A progress update (the workspace tools' convention). */
  progress?: { done: number; total?: number; unit: string };
}
