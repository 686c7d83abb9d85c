/**
 * `connectMcp`: MCP servers' tools as `AgentTool`s. Each tool is named `server__tool`, its input
 * schema is checked and compiled by the project's own validator (the loop validates and explains
 * arguments against it as for any JSON Schema tool), its description is bounded, and its rules
 * (R13 replay, R70 concurrency, R82 approval, R65 timeout) come from trusted annotations or
 * overrides. A tool object stays the same object while its server's definition of it does not
 * change, so declarations (R30) only move when a server's tools really change.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AgentInputError } from "../boundary/errors.js";
import { boundText } from "../boundary/bounded-text.js";
import { schemaProblem } from "../boundary/tools.js";
import { problemText } from "../boundary/problem.js";
import { compileSchema, type CompiledSchema } from "../tools/compiled-schema.js";
import { unusableKeyword } from "../tools/schema-usability.js";
import type { AgentLoopTurnUpdate, AgentTool, AgentToolResult, AgentToolUpdateCallback, JsonValue, PrepareNextTurnContext } from "../types.js";
import { toolRules } from "./annotations.js";
import { checkOptions } from "./options.js";
import { mcpToolName } from "./names.js";
import { errorResult, toToolResult, type ResultLimits } from "./result.js";
import { McpCallError, messageOf, ServerConnection, type RejectedTool, type TransportFactory } from "./server-connection.js";
import type { McpClientOptions, McpServerConfig, McpServerStatus, McpToolDetails, McpToolStatus } from "./types.js";

/** Makes a server's transport; the Node entry adds stdio servers. */
export type TransportResolver = (name: string, config: McpServerConfig) => TransportFactory;

interface ServerEntry {
  config: McpServerConfig;
  /** The config's secret values, kept out of results too (a server may echo its environment). */
  secrets: string[];
  connection: ServerConnection;
  /** The server's tools as last listed. */
  listed: Tool[];
  /** Tool objects by server tool name, with the definition they were made from. */
  made: Map<string, { key: string; tool: AgentTool; status: McpToolStatus }>;
  skipped: { tool: string; reason: string }[];
  /** Listed tools that did not follow the MCP schema, and why. */
  rejected: RejectedTool[];
}

export const DEFAULT_LIMITS = { descriptionChars: 2_000, resultChars: 50_000, binaryChars: 4_000_000 } as const;

export class McpClient {
  private readonly servers = new Map<string, ServerEntry>();
  private readonly reserved: Set<string>;
  private readonly owned = new WeakSet<AgentTool>();
  private readonly byName = new Map<string, { server: string; tool: string }>();
  private readonly listeners = new Set<(tools: readonly AgentTool[]) => void>();
  /** Warnings given so far that a rebuild would repeat (a skipped tool is reported once, not at every list). */
  private readonly warned = new Set<string>();
  private current: AgentTool[] = [];
  private readonly limits: ResultLimits & { descriptionChars: number };

  /** Use `connectMcp`. */
  constructor(
    private readonly options: McpClientOptions,
    resolveTransport: TransportResolver,
  ) {
    checkOptions(options);
    this.reserved = new Set(options.reservedNames ?? []);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    for (const [name, config] of Object.entries(options.servers)) {
      const entry: ServerEntry = { config, secrets: secretsOf(config), listed: [], rejected: [], made: new Map(), skipped: [], connection: undefined! };
      entry.connection = new ServerConnection({
        name,
        kind: "url" in config ? "http" : "command" in config ? "stdio" : "custom",
        createTransport: resolveTransport(name, config),
        secrets: entry.secrets,
        clientInfo: options.clientInfo ?? { name: "xstate-agent-loop", version: "0" },
        connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
        baseDelayMs: options.reconnect?.baseDelayMs ?? 500,
        maxDelayMs: options.reconnect?.maxDelayMs ?? 30_000,
        onTools: (tools, rejected) => {
          entry.listed = tools;
          entry.rejected = rejected;
          this.rebuild();
        },
        onState: () => {},
      });
      this.servers.set(name, entry);
    }
  }

  /**
   * Connects every server at once; one that fails is reported in `status()` and `onWarning`. A
   * server that failed before is tried again only once its reconnection backoff allows.
   */
  async connectAll(): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(async (entry) => {
        const failure = entry.connection.state === "failed" ? await entry.connection.retryIfDue() : await entry.connection.connect().then(() => undefined, messageOf);
        if (failure) this.warn(failure);
      }),
    );
  }

  /**
   * Tries again, once their backoff allows, the servers that failed before listing any tool (a
   * server that failed in `connectMcp` has no tool, so no call of the model would reconnect it).
   * Resolves when those attempts have ended; their tools are then in `tools` (and `onToolsChanged`
   * listeners were called). `prepareNextTurn` starts it at every turn boundary without waiting.
   */
  async retryFailed(): Promise<void> {
    await Promise.all(
      [...this.servers.values()]
        .filter((entry) => entry.listed.length === 0)
        .map(async (entry) => {
          const failure = await entry.connection.retryIfDue();
          if (failure) this.warn(failure);
        }),
    );
  }

  /** The tools of every connected server, in config order then the server's order. */
  get tools(): readonly AgentTool[] {
    return this.current;
  }

  /** `tools` with this client's tools (old or current) replaced by its current ones: `agent.state.tools = mcp.withTools(agent.state.tools)`. */
  withTools(tools: readonly AgentTool[]): AgentTool[] {
    return [...tools.filter((tool) => !this.owned.has(tool)), ...this.current];
  }

  /**
   * SPEC R30 between turns: a `prepareNextTurn` (loop) or `prepareNextTurnWithContext` (Agent)
   * hook that swaps in the servers' current tools after a `tools/list_changed`; the loop then
   * announces the change with a system message before the next request. Waits for tool lists
   * being fetched, so a change notified during the turn is seen at its end. Also starts
   * `retryFailed()` without waiting for it: a server that failed at the start gets its tools in at
   * the first turn boundary after it connected.
   */
  readonly prepareNextTurn = async (turn: PrepareNextTurnContext): Promise<AgentLoopTurnUpdate | undefined> => {
    // Not awaited: a server that is down (or hangs until the connect timeout) must not hold the
    // turn. Its tools come in at the first turn boundary after it connected.
    void this.retryFailed().catch(() => {});
    await this.settled();
    const before = turn.context.tools ?? [];
    const next = this.withTools(before);
    if (next.length === before.length && next.every((tool, i) => tool === before[i])) return undefined;
    return { context: { ...turn.context, tools: next } };
  };

  /** Called with the new tool set whenever a server's tools change (a list_changed, a reconnection). */
  onToolsChanged(listener: (tools: readonly AgentTool[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Which server (and which of its tools) a tool name belongs to: for approval questions and UIs. */
  toolInfo(name: string): { server: string; tool: string } | undefined {
    return this.byName.get(name);
  }

  /** Every server's state and tools (no secret in it). */
  status(): McpServerStatus[] {
    return [...this.servers].map(([name, entry]) => ({
      name,
      transport: "url" in entry.config ? "http" : "command" in entry.config ? "stdio" : "custom",
      state: entry.connection.state,
      ...(entry.connection.error ? { error: entry.connection.error } : {}),
      trustAnnotations: entry.config.trustAnnotations === true,
      tools: [...entry.made.values()].map((made) => made.status),
      skipped: entry.skipped.slice(),
    }));
  }

  /** Resolves when every tool-list refresh started so far has ended. */
  async settled(): Promise<void> {
    await Promise.all([...this.servers.values()].map((entry) => entry.connection.settled()));
  }

  /** Closes every connection (stdio servers' processes end). Calls afterwards get an `unavailable` result. */
  async close(): Promise<void> {
    await Promise.all([...this.servers.values()].map((entry) => entry.connection.close()));
  }

  private rebuild(): void {
    const taken = new Set(this.reserved);
    const tools: AgentTool[] = [];
    this.byName.clear();
    for (const [server, entry] of this.servers) {
      const made = new Map<string, { key: string; tool: AgentTool; status: McpToolStatus }>();
      entry.skipped = entry.rejected.slice();
      for (const definition of entry.listed) {
        const override = entry.config.tools?.[definition.name];
        if (override?.enabled === false) continue;
        const name = mcpToolName(server, definition.name);
        if (taken.has(name)) {
          entry.skipped.push({ tool: definition.name, reason: this.reserved.has(name) ? `its name ${name} is a built-in tool's` : `its name ${name} is already another tool's` });
          continue;
        }
        const key = JSON.stringify(definition);
        const previous = entry.made.get(definition.name);
        const built = previous?.key === key ? previous : this.makeTool(server, entry, definition, name, key);
        if ("reason" in built) {
          entry.skipped.push({ tool: definition.name, reason: built.reason });
          continue;
        }
        taken.add(name);
        made.set(definition.name, built);
        tools.push(built.tool);
        this.byName.set(name, { server, tool: definition.name });
      }
      entry.made = made;
      for (const skipped of entry.skipped) this.warnOnce(`MCP server "${server}": tool ${JSON.stringify(skipped.tool)} left out: ${skipped.reason}`);
    }
    const changed = tools.length !== this.current.length || tools.some((tool, i) => tool !== this.current[i]);
    this.current = tools;
    if (changed) for (const listener of this.listeners) this.guarded(() => listener(tools));
  }

  /** The app's `onWarning`: its throw is the app's bug, never a failed server or an unhandled rejection. */
  private warn(message: string): void {
    this.guarded(() => this.options.onWarning?.(message));
  }

  private warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.warn(message);
  }

  /** Runs an app callback; what it throws is reported, never thrown into the connection that called it. */
  private guarded(callback: () => void): void {
    try {
      callback();
    } catch (error) {
      console.warn("xstate-agent-loop/mcp: a listener threw:", error);
    }
  }

  private makeTool(server: string, entry: ServerEntry, definition: Tool, name: string, key: string): { key: string; tool: AgentTool; status: McpToolStatus } | { reason: string } {
    const schema = definition.inputSchema as Record<string, unknown>;
    const problem = schemaProblem(schema, "inputSchema");
    if (problem) return { reason: `its input schema is unusable: ${problemText(problem)}` };
    let compiled: CompiledSchema;
    try {
      compiled = compileSchema(schema);
    } catch (error) {
      return { reason: `its input schema is unusable: ${error instanceof Error ? error.message : String(error)}` };
    }
    // Keywords the validator cannot use would fail every call that reaches them: the tool is left out.
    const unusable = unusableKeyword(compiled, "inputSchema");
    if (unusable) return { reason: `its input schema is unusable: ${problemText(unusable)}` };
    const rules = toolRules(definition.annotations, entry.config.trustAnnotations === true, this.options.needsApprovalByDefault === true, entry.config.tools?.[definition.name], entry.config.toolTimeoutMs);
    const description = boundText(definition.description ?? "", this.limits.descriptionChars);
    const serverTool = definition.name;
    const tool: AgentTool<Record<string, unknown>, McpToolDetails> = {
      name,
      label: boundText(definition.title ?? definition.annotations?.title ?? serverTool, 200),
      description,
      parameters: schema,
      replay: rules.replay,
      execute: (_toolCallId, args, signal, onUpdate) => this.execute(server, serverTool, args, signal, onUpdate),
    };
    if (definition.outputSchema) tool.outputSchema = definition.outputSchema;
    if (rules.concurrencySafe) tool.isConcurrencySafe = () => true;
    if (rules.needsApproval !== false) tool.needsApproval = rules.needsApproval;
    if (rules.timeoutMs !== undefined) tool.timeoutMs = rules.timeoutMs;
    this.owned.add(tool);
    const status: McpToolStatus = {
      name,
      serverTool,
      concurrencySafe: rules.concurrencySafe,
      replay: rules.replay,
      needsApproval: typeof rules.needsApproval === "function" ? "predicate" : rules.needsApproval,
    };
    return { key, tool, status };
  }

  private async execute(server: string, tool: string, args: Record<string, unknown>, signal: AbortSignal | undefined, onUpdate: AgentToolUpdateCallback<McpToolDetails> | undefined) {
    const entry = this.servers.get(server)!;
    try {
      const result = await entry.connection.call(tool, args ?? {}, signal, (done, total, message) => {
        const text = boundText(redactSecrets(message ?? `${tool}: ${done}${total !== undefined ? ` of ${total}` : ""}`, entry.secrets), 500);
        onUpdate?.({ content: [{ type: "text", text }], details: { mcp: { server, tool }, progress: { done, ...(total !== undefined ? { total } : {}), unit: "steps" } } });
      });
      return redactResult(toToolResult(server, tool, result, this.limits), entry.secrets);
    } catch (error) {
      if (error instanceof McpCallError) return errorResult(server, tool, error.kind, error.message);
      return errorResult(server, tool, "protocol", error instanceof Error ? error.message : String(error));
    }
  }
}

/** The default transports of the browser-safe entry: Streamable HTTP, or the app's own. */
export const httpTransports: TransportResolver = (name, config) => {
  if ("transport" in config && typeof config.transport === "function") return () => ({ transport: config.transport() });
  if ("url" in config) {
    const url = new URL(config.url);
    return () => ({
      transport: new StreamableHTTPClientTransport(url, {
        ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
        ...(config.authProvider ? { authProvider: config.authProvider } : {}),
        ...(config.fetch ? { fetch: config.fetch } : {}),
      }),
    });
  }
  throw new AgentInputError(`servers.${name}`, `MCP server "${name}" is a stdio server (command): import connectMcp from "xstate-agent-loop/mcp/node" to spawn it`);
};

/**
 * Connects to the servers and lists their tools. Resolves once every server connected or failed
 * (a failed one is in `status()`; its next call tries again). Throws `AgentInputError` for a
 * malformed configuration.
 */
export async function connectMcp(options: McpClientOptions): Promise<McpClient> {
  return connectMcpWith(options, httpTransports);
}

export async function connectMcpWith(options: McpClientOptions, resolveTransport: TransportResolver): Promise<McpClient> {
  const client = new McpClient(options, resolveTransport);
  await client.connectAll();
  return client;
}


const redactSecrets = (text: string, secrets: readonly string[]): string =>
  secrets.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join("[redacted]") : out), text);

/** `result` with every configured secret value replaced (texts and structured content). */
function redactResult<T extends AgentToolResult>(result: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return result;
  const clean = (text: string) => redactSecrets(text, secrets);
  const content = result.content.map((part) => (part.type === "text" ? { ...part, text: clean(part.text) } : part));
  const structured = result.structuredContent === undefined ? undefined : JSON.stringify(result.structuredContent);
  return {
    ...result,
    content,
    ...(structured !== undefined && clean(structured) !== structured ? { structuredContent: JSON.parse(clean(structured)) as JsonValue } : {}),
  };
}

/** The values of a server's config that are secrets: headers and environment values. */
function secretsOf(config: McpServerConfig): string[] {
  const values: string[] = [];
  if ("headers" in config && config.headers) values.push(...Object.values(config.headers));
  if ("env" in config && config.env) values.push(...Object.values(config.env));
  // A bearer header's token alone may show up in a message too.
  for (const value of [...values]) {
    const token = /^\s*\S+\s+(\S{4,})\s*$/.exec(value)?.[1];
    if (token) values.push(token);
  }
  return values.filter((value) => typeof value === "string" && value.length >= 4);
}
