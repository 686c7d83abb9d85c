/**
 * One MCP server: its SDK client, its tool list, its calls. A server that crashes or disconnects
 * fails the calls in flight at once (the SDK rejects them when the transport closes: never a hang)
 * and is reconnected by the next call; reconnections that fail are spaced out with exponential
 * backoff (calls meanwhile fail fast with a typed error). The connection is a resource the app
 * owns (`close()`), never machine context (R14).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema, ToolSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { redact } from "../trace/json.js";
import { listedChecks, NO_CHECKS, structuredContentProblem, type ListedChecks } from "./listed-checks.js";
import type { McpCallResult } from "./result.js";
import type { McpCallErrorKind } from "./types.js";

/** A fresh transport per (re)connection; `stderrTail` says what a spawned server last wrote to stderr. */
export type TransportFactory = () => { transport: Transport; stderrTail?: () => string };

export interface ConnectionSettings {
  name: string;
  kind: "http" | "stdio" | "custom";
  createTransport: TransportFactory;
  /** Config values that must never appear in a message (header values, env values, tokens). */
  secrets: readonly string[];
  clientInfo: { name: string; version: string };
  connectTimeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Called after every successful tools/list (first connection, reconnection, list_changed) with
   * the tools that follow the MCP schema and those that do not, with the reason.
   */
  onTools: (tools: Tool[], rejected: RejectedTool[]) => void;
  /** Called when the state changes (for status displays). */
  onState: () => void;
}

/** A listed tool that cannot be offered: its name on the server (or what stands for it) and why. */
export interface RejectedTool {
  tool: string;
  reason: string;
}

export type ConnectionState = "connecting" | "connected" | "disconnected" | "failed" | "closed";

/** A call that did not produce the server's result. */
export class McpCallError extends Error {
  constructor(
    readonly kind: McpCallErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "McpCallError";
  }
}

/** `setTimeout` overflows above 2³¹−1 ms; the loop's own R65 timeout is what bounds a call. */
const NO_SDK_TIMEOUT = 2_147_483_647;

export class ServerConnection {
  state: ConnectionState = "connecting";
  error: string | undefined;
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  /** The client a connection attempt in progress is opening (`close()` closes it rather than wait it out). */
  private opening: Client | undefined;
  private stderrTail: (() => string) | undefined;
  private failures = 0;
  private nextAttemptAt = 0;
  /** tools/list refreshes in flight (list_changed): `settled()` waits for them. */
  private refreshing = new Set<Promise<void>>();
  /** What the last tools/list says about calls: output schemas, task-only tools. */
  private checks: ListedChecks = NO_CHECKS;

  constructor(private readonly settings: ConnectionSettings) {}

  get name(): string {
    return this.settings.name;
  }

  /** Connects (or reconnects) and lists the tools. Rejects with a redacted message. */
  connect(): Promise<Client> {
    if (this.state === "closed") return Promise.reject(new McpCallError("unavailable", `MCP server "${this.name}" is closed`));
    if (this.client && this.state === "connected") return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<Client> {
    this.setState("connecting");
    const client = new Client(this.settings.clientInfo, { capabilities: {} });
    this.opening = client;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // Registered now, before any later response is handled: a turn boundary after this message waits for it.
      if (this.client === client) this.track(this.listTools(client));
    });
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      if (this.state === "closed") return;
      this.error = this.describe("the connection closed");
      this.setState("disconnected");
    };
    try {
      // Inside the try: a transport factory that throws (a bad config, an app bug) is a failed
      // connection like any other, with its error and the backoff, never a server stuck connecting.
      this.stderrTail = undefined;
      const { transport, stderrTail } = this.settings.createTransport();
      this.stderrTail = stderrTail;
      await withTimeout(client.connect(transport, { timeout: this.settings.connectTimeoutMs }), this.settings.connectTimeoutMs, "connecting");
      this.client = client;
      await this.listTools(client);
    } catch (error) {
      this.client = undefined;
      await client.close().catch(() => {});
      // (Closed meanwhile: `close()` ended the attempt; the server is closed, not failed.)
      if (this.state === "closed") throw new McpCallError("unavailable", `MCP server "${this.name}" is closed`);
      this.failures++;
      this.nextAttemptAt = Date.now() + Math.min(this.settings.maxDelayMs, this.settings.baseDelayMs * 2 ** (this.failures - 1));
      this.error = this.describe(messageOf(error));
      this.setState("failed");
      throw new McpCallError("unavailable", `MCP server "${this.name}" is unavailable: ${this.error}`);
    } finally {
      this.opening = undefined;
    }
    if (this.state === "closed") {
      await client.close().catch(() => {});
      throw new McpCallError("unavailable", `MCP server "${this.name}" is closed`);
    }
    this.failures = 0;
    this.error = undefined;
    this.setState("connected");
    return client;
  }

  /**
   * Calls a tool. Resolves with the server's result (an `isError` result included); rejects with
   * `McpCallError` when the call could not be made or its outcome is unknown. An abort of `signal`
   * makes the SDK send `notifications/cancelled`.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal | undefined, onProgress: (progress: number, total?: number, message?: string) => void): Promise<McpCallResult> {
    if (signal?.aborted) throw new McpCallError("aborted", "Operation aborted");
    // A reconnection may take up to the connect timeout: the call settles when aborted, and the
    // reconnection goes on for later calls.
    const client = await untilAborted(this.ready(), signal);
    // Task-only tools are left out at listing; this refuses a tool object kept from before.
    if (this.checks.taskRequired.has(tool)) {
      throw new McpCallError("protocol", `MCP server "${this.name}": tool "${tool}" requires task-based execution, which this client does not support`);
    }
    let result: McpCallResult;
    try {
      result = (await client.callTool({ name: tool, arguments: args }, undefined, {
        ...(signal ? { signal } : {}),
        timeout: NO_SDK_TIMEOUT,
        onprogress: (progress) => onProgress(progress.progress, progress.total, progress.message),
      })) as McpCallResult;
    } catch (error) {
      if (signal?.aborted) throw new McpCallError("aborted", "Operation aborted");
      const lost = isConnectionLoss(error);
      // An HTTP server that went away leaves the SDK's client open: drop it, so the next call reconnects.
      if (lost && this.client === client) this.drop(client, messageOf(error));
      if (lost || this.client !== client || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
        throw new McpCallError(
          "disconnected",
          `MCP server "${this.name}" disconnected during the call to ${tool} (${this.describe(messageOf(error))}); its outcome is unknown. The server is reconnected for later calls.`,
        );
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) throw new McpCallError("timeout", this.describe(messageOf(error)));
      throw new McpCallError("protocol", `MCP server "${this.name}" refused the call to ${tool}: ${this.describe(messageOf(error))}`);
    }
    const problem = structuredContentProblem(tool, this.checks.outputSchemas.get(tool), result);
    // A problem may quote the result: the config's secrets are kept out of it as out of results.
    if (problem) throw new McpCallError("protocol", redact(`MCP server "${this.name}": ${problem}`, this.settings.secrets).slice(0, 2_000));
    return result;
  }

  /** The connected client, reconnecting if need be (not before the backoff allows). */
  private async ready(): Promise<Client> {
    if (this.client && this.state === "connected") return this.client;
    if (this.state === "closed") throw new McpCallError("unavailable", `MCP server "${this.name}" is closed`);
    const wait = this.nextAttemptAt - Date.now();
    if (this.failures > 0 && wait > 0 && !this.connecting) {
      throw new McpCallError("unavailable", `MCP server "${this.name}" is unavailable (${this.error ?? "not connected"}); the next reconnection is in ${wait} ms`);
    }
    return this.connect();
  }

  /**
   * Reconnects a failed server once its backoff allows, and lists its tools (a server that failed
   * in `connectMcp` has no tools, so no call would ever reconnect it). Never rejects: a failure is
   * in `state` and `error`, and is returned for a warning.
   */
  async retryIfDue(): Promise<string | undefined> {
    if (this.state !== "failed" || this.connecting || Date.now() < this.nextAttemptAt) return undefined;
    return this.connect().then(
      () => undefined,
      (error: unknown) => messageOf(error),
    );
  }

  private drop(client: Client, reason: string): void {
    this.client = undefined;
    this.error = this.describe(reason);
    this.setState("disconnected");
    void client.close().catch(() => {});
  }

  /** Resolves when the tool-list refreshes started so far have ended. */
  async settled(): Promise<void> {
    while (this.refreshing.size > 0) await Promise.allSettled([...this.refreshing]);
  }

  async close(): Promise<void> {
    this.setState("closed");
    const client = this.client;
    this.client = undefined;
    // A server still starting (a restart that hangs before it answers) is closed now, not waited
    // for until its connect timeout.
    void this.opening?.close().catch(() => {});
    await this.connecting?.catch(() => {});
    await client?.close().catch(() => {});
  }

  /**
   * tools/list, read tool by tool: the SDK's `listTools` checks the whole result against its strict
   * schema, so one malformed tool (a numeric name, `required: "a"`) failed the server with no tool
   * named. Each tool is checked here instead, and one that does not follow the schema is rejected
   * with its reason while the others are offered.
   */
  private async listTools(client: Client): Promise<void> {
    const tools: Tool[] = [];
    const rejected: RejectedTool[] = [];
    let cursor: string | undefined;
    // Paginated; a server that keeps returning cursors is cut off rather than listed forever.
    for (let page = 0; page < 100; page++) {
      const result = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, LenientToolsPage, { timeout: this.settings.connectTimeoutMs });
      for (const raw of result.tools) {
        const parsed = ToolSchema.safeParse(raw);
        if (parsed.success) tools.push(parsed.data);
        else rejected.push({ tool: toolLabel(raw, tools.length + rejected.length), reason: `its definition does not follow the MCP schema: ${issueText(parsed.error.issues[0])}` });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    const { checks, rejected: unusable } = listedChecks(tools);
    rejected.push(...unusable);
    const usable = tools.filter((tool) => !rejected.some((entry) => entry.tool === tool.name));
    if (this.client !== client) return;
    this.checks = checks;
    this.settings.onTools(usable, rejected);
  }

  private track(refresh: Promise<void>): void {
    const tracked = refresh.catch((error) => {
      this.error = this.describe(`tools/list failed: ${messageOf(error)}`);
    });
    this.refreshing.add(tracked);
    void tracked.finally(() => this.refreshing.delete(tracked));
  }

  private setState(state: ConnectionState): void {
    if (this.state === "closed") return;
    this.state = state;
    this.settings.onState();
  }

  /** A message with the config's secrets (and anything shaped like a credential) redacted, and the server's last stderr words. */
  private describe(message: string): string {
    const tail = this.stderrTail?.().trim();
    const text = tail ? `${message}; its stderr ended with: ${tail}` : message;
    return redact(text, this.settings.secrets).slice(0, 2_000);
  }
}

/**
 * A failure of the connection rather than of the call: the stdio process closed, or an HTTP
 * request could not reach the server or lost it mid-response (undici's `fetch failed`,
 * `terminated`, a reset socket), or the server forgot the session (HTTP 404).
 */
function isConnectionLoss(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === 404) return true;
  const cause = (error as { cause?: { code?: unknown } }).cause?.code;
  if (typeof cause === "string" && /^(ECONNREFUSED|ECONNRESET|EPIPE|ENOTFOUND|EHOSTUNREACH|UND_ERR_SOCKET|UND_ERR_CLOSED)$/.test(cause)) return true;
  return /fetch failed|terminated|socket hang up|ECONNRESET|ECONNREFUSED|SSE stream disconnected|Not connected/i.test(error.message);
}

/** An error's message (a thrown non-Error as text). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A tools/list page whose tools are checked one by one (see `listTools`). */
const LenientToolsPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A rejected tool's name for a message: its name when it has a string one, else its place in the list. */
function toolLabel(raw: unknown, index: number): string {
  const name = typeof raw === "object" && raw !== null ? (raw as { name?: unknown }).name : undefined;
  return typeof name === "string" ? name : `#${index} (name ${JSON.stringify(name) ?? "undefined"})`.slice(0, 120);
}

function issueText(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return "malformed";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** `promise`, or an `aborted` McpCallError as soon as `signal` aborts (`promise` goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new McpCallError("aborted", "Operation aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  // The losing side must not become an unhandled rejection.
  promise.catch(() => {});
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort!));
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
