/**
 * The MCP client on its own: names, annotation rules, result mapping, limits, shadowing, secrets
 * and typed errors, against the everything server and the fixture server (real processes).
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentInputError, runAgentLoop, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import type { AgentTool, AgentToolResult } from "../../src/index.js";
import { connectMcp as connectBrowserSafe } from "../../src/mcp/index.js";
import { connectMcp, mcpToolName, type McpClient } from "../../src/mcp/node.js";
import { toolRules } from "../../src/mcp/annotations.js";
import { toToolResult } from "../../src/mcp/result.js";
import type { McpClientOptions, McpToolDetails } from "../../src/mcp/types.js";
import { baseConfig, recorder, tool, user } from "../loop/helpers.js";
import { everythingStdio, fixtureServer, rawServer } from "./servers.js";

const clients: McpClient[] = [];
async function connect(options: McpClientOptions): Promise<McpClient> {
  const client = await connectMcp(options);
  clients.push(client);
  return client;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

const find = (mcp: McpClient, name: string): AgentTool => {
  const found = mcp.tools.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};
const text3 = (letter: string, length: number) => ({ type: "text", text: letter.repeat(length) });
const call = (mcp: McpClient, name: string, args: Record<string, unknown> = {}) => find(mcp, name).execute("call", args) as Promise<AgentToolResult<McpToolDetails>>;

describe("names", () => {
  it("server__tool; other characters or a long name get a stable hash suffix, never a shared name", () => {
    expect(mcpToolName("everything", "get-sum")).toBe("everything__get-sum");
    const dotted = mcpToolName("my.server", "do it");
    expect(dotted).toMatch(/^my_server__do_it_[0-9a-f]{8}$/);
    expect(mcpToolName("my_server", "do_it")).toBe("my_server__do_it");
    expect(mcpToolName("my.server", "do it")).toBe(dotted);
    const long = mcpToolName("s", "x".repeat(100));
    expect(long.length).toBe(64);
    expect(mcpToolName("s", `${"x".repeat(99)}y`)).not.toBe(long);
  });
});

describe("annotations → the loop's rules (trusted only on opt-in)", () => {
  const rules = (annotations: object | undefined, trusted: boolean, byDefault = true, override = {}) => toolRules(annotations, trusted, byDefault, override, undefined);
  it("untrusted: no hint counts; the default decides approval", () => {
    expect(rules({ readOnlyHint: true }, false)).toEqual({ concurrencySafe: false, replay: "never", needsApproval: true });
    expect(rules({ readOnlyHint: true }, false, false)).toEqual({ concurrencySafe: false, replay: "never", needsApproval: false });
  });
  it("trusted: readOnlyHint → R70 safe and R13 replay-safe; destructiveHint or no hint → R82 approval; destructiveHint false → none", () => {
    expect(rules({ readOnlyHint: true }, true)).toEqual({ concurrencySafe: true, replay: "safe", needsApproval: false });
    expect(rules({ destructiveHint: true }, true, false)).toEqual({ concurrencySafe: false, replay: "never", needsApproval: true });
    expect(rules(undefined, true, false)).toEqual({ concurrencySafe: false, replay: "never", needsApproval: true });
    expect(rules({ destructiveHint: false }, true)).toEqual({ concurrencySafe: false, replay: "never", needsApproval: false });
  });
  it("a per-tool override wins over annotations and defaults", () => {
    expect(rules({ readOnlyHint: true }, true, true, { concurrencySafe: false, replay: "never", needsApproval: true, timeoutMs: 5 })).toEqual({ concurrencySafe: false, replay: "never", needsApproval: true, timeoutMs: 5 });
    expect(rules(undefined, false, true, { concurrencySafe: true, replay: "safe", needsApproval: false })).toEqual({ concurrencySafe: true, replay: "safe", needsApproval: false });
  });

  it("the tools a server offers carry those rules (status and tool objects agree)", async () => {
    const mcp = await connect({
      servers: { trusted: fixtureServer({ trustAnnotations: true, tools: { slow: { needsApproval: false }, crash: { enabled: false } } }), untrusted: fixtureServer() },
      needsApprovalByDefault: true,
    });
    const [trusted, untrusted] = mcp.status();
    const pick = (name: string, server = trusted!) => server.tools.find((entry) => entry.serverTool === name);
    expect(pick("lookup")).toEqual({ name: "trusted__lookup", serverTool: "lookup", concurrencySafe: true, replay: "safe", needsApproval: false });
    expect(pick("delete_item")).toEqual({ name: "trusted__delete_item", serverTool: "delete_item", concurrencySafe: false, replay: "never", needsApproval: true });
    expect(pick("slow")).toEqual({ name: "trusted__slow", serverTool: "slow", concurrencySafe: false, replay: "never", needsApproval: false });
    expect(pick("crash")).toBeUndefined();
    expect(pick("lookup", untrusted)).toEqual({ name: "untrusted__lookup", serverTool: "lookup", concurrencySafe: false, replay: "never", needsApproval: true });
    expect(find(mcp, "trusted__lookup")).toMatchObject({ replay: "safe" });
    expect(find(mcp, "trusted__lookup").isConcurrencySafe?.({})).toBe(true);
    expect(find(mcp, "untrusted__lookup")).toMatchObject({ replay: "never", needsApproval: true });
    expect(find(mcp, "untrusted__lookup").isConcurrencySafe).toBeUndefined();
  });
});

describe("results", () => {
  it("text, image, embedded resources, resource links and structured content are mapped; isError is kept", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() } });
    expect(await call(mcp, "fixture__mixed")).toEqual({
      content: [
        { type: "text", text: "some text" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "text", text: "[resource file:///notes.txt]\nresource text" },
        { type: "text", text: "[resource file:///data.bin (application/octet-stream, 3 bytes): not shown]" },
        { type: "text", text: "[resource link: linked file:///linked.txt]" },
      ],
      details: { mcp: { server: "fixture", tool: "mixed" } },
      structuredContent: { answer: 42 },
    });
    expect(await call(mcp, "fixture__fail")).toEqual({ content: [{ type: "text", text: "it broke" }], details: { mcp: { server: "fixture", tool: "fail" } }, isError: true });
  });

  it("the everything server's image and structured content (with its output schema)", async () => {
    const mcp = await connect({ servers: { everything: everythingStdio() } });
    const image = await call(mcp, "everything__get-tiny-image");
    expect(image.content.map((part) => part.type)).toEqual(["text", "image", "text"]);
    expect(image.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    const weather = await call(mcp, "everything__get-structured-content", { location: "Chicago" });
    expect(weather.structuredContent).toEqual({ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) });
    expect(find(mcp, "everything__get-structured-content").outputSchema).toMatchObject({ type: "object" });
  });
});

describe("security and limits", () => {
  it("a huge description is cut; a huge result is cut with a note (details.truncated)", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() }, limits: { resultChars: 1_000 } });
    const huge = find(mcp, "fixture__huge");
    expect(huge.description.length).toBeLessThanOrEqual(2_000);
    expect(huge.description).toMatch(/… \[\d+ bytes omitted\]$/);
    const result = await huge.execute("h", {});
    const body = (result.content[0] as { text: string }).text;
    expect(body).toBe(`${"x".repeat(1_000)}\n… (cut at 1000 characters: the server's result had 200000)`);
    expect(result.details).toEqual({ mcp: { server: "fixture", tool: "huge", truncated: true } });
  });

  it("a cut that falls between two parts still ends with the note (the parts after it are dropped)", () => {
    const result = toToolResult("s", "t", { content: [text3("a", 10), { type: "image", data: "AAAA", mimeType: "image/png" }, text3("b", 10), text3("c", 10)] }, { resultChars: 20, binaryChars: 100 });
    expect(result.content).toEqual([
      { type: "text", text: "a".repeat(10) },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "text", text: `${"b".repeat(10)}\n… (cut at 20 characters: the server's result had 30)` },
    ]);
    expect(result.details.mcp.truncated).toBe(true);
  });

  it("a server tool named like a built-in is offered under its prefix: the model's read_file runs the built-in", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() } });
    const builtIn = tool("read_file", async () => ({ content: [{ type: "text", text: "built-in read" }], details: {} }));
    const stream = scriptedStreamFn([{ content: [toolCall("read_file", {}, "r"), toolCall("fixture__read_file", { path: "a" }, "f")] }, { content: [text("ok")] }]);
    const rec = recorder();
    const messages = await runAgentLoop([user("go")], { messages: [], tools: mcp.withTools([builtIn]) }, baseConfig(), rec.sink, undefined, stream);
    expect(messages.filter((message) => message.role === "toolResult").map((message) => `${message.toolName}: ${(message.content[0] as { text: string }).text}`)).toEqual([
      "read_file: built-in read",
      "fixture__read_file: fixture read a",
    ]);
  });

  it("no tool takes a reserved (built-in) name or another server's tool's name: it is left out, with a warning", async () => {
    const warnings: string[] = [];
    const mcp = await connect({
      servers: { fixture: fixtureServer(), "fixture.": fixtureServer() },
      reservedNames: ["fixture__lookup"],
      onWarning: (message) => warnings.push(message),
    });
    expect(mcp.tools.map((entry) => entry.name)).not.toContain("fixture__lookup");
    expect(mcp.status()[0]!.skipped).toEqual([{ tool: "lookup", reason: "its name fixture__lookup is a built-in tool's" }]);
    // "fixture." sanitizes to "fixture_": its names differ from fixture's by the hash suffix.
    const second = mcp.status()[1]!;
    expect(second.skipped).toEqual([]);
    expect(new Set(mcp.tools.map((entry) => entry.name)).size).toBe(mcp.tools.length);
    expect(warnings).toContain('MCP server "fixture": tool "lookup" left out: its name fixture__lookup is a built-in tool\'s');
  });

  it("secrets of a server's config (headers, env) never appear in its status, warnings or call results", async () => {
    const token = "sekrit-token-0123456789";
    // An HTTP server that echoes the request's Authorization header in its error body.
    const http: Server = createServer((req, res) => res.writeHead(500, { "content-type": "text/plain" }).end(`bad auth: ${req.headers.authorization}`));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const port = (http.address() as { port: number }).port;
    const warnings: string[] = [];
    try {
      const mcp = await connect({
        servers: {
          web: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer ${token}` } },
          local: { command: process.execPath, args: ["-e", "console.error('my token is ' + process.env.MY_TOKEN); process.exit(1)"], env: { MY_TOKEN: token } },
        },
        onWarning: (message) => warnings.push(message),
      });
      const everything = JSON.stringify({ status: mcp.status(), warnings });
      expect(everything).not.toContain(token);
      expect(mcp.status().map((server) => server.state)).toEqual(["failed", "failed"]);
      expect(mcp.status()[1]!.error).toContain("my token is [redacted]");
      expect(warnings).toHaveLength(2);
    } finally {
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe("malformed tool lists", () => {
  const object = { type: "object" };
  it("a tool that does not follow the MCP schema is left out with its reason; the server's other tools are offered", async () => {
    const warnings: string[] = [];
    const mcp = await connect({
      servers: { raw: rawServer([{ name: "ok", inputSchema: object }, { name: "bad-required", inputSchema: { ...object, properties: {}, required: "a" } }, { name: 5, inputSchema: object }, { name: "after", inputSchema: object }]) },
      onWarning: (message) => warnings.push(message),
    });
    const [status] = mcp.status();
    expect(status).toMatchObject({ state: "connected", skipped: [
      { tool: "bad-required", reason: "its definition does not follow the MCP schema: inputSchema.required: Invalid input: expected array, received string" },
      { tool: "#2 (name 5)", reason: "its definition does not follow the MCP schema: name: Invalid input: expected string, received number" },
    ] });
    expect(mcp.tools.map((entry) => entry.name)).toEqual(["raw__ok", "raw__after"]);
    expect(warnings).toContain('MCP server "raw": tool "bad-required" left out: its definition does not follow the MCP schema: inputSchema.required: Invalid input: expected array, received string');
    expect((await call(mcp, "raw__after", {})).content).toEqual([{ type: "text", text: "called after {}" }]);
  });

  it("an input schema the validator cannot use is left out with its reason, naming the keyword's place", async () => {
    const prop = (schema: object) => ({ type: "object", properties: { a: schema } });
    const mcp = await connect({
      servers: {
        raw: rawServer([
          { name: "bad-type", inputSchema: prop({ type: "bogus" }) },
          { name: "ref-missing", inputSchema: prop({ $ref: "#/$defs/nope" }) },
          { name: "remote-ref", inputSchema: prop({ $ref: "https://example.com/schema.json" }) },
          { name: "pattern-bad", inputSchema: prop({ type: "string", pattern: "(" }) },
          { name: "pattern-props-bad", inputSchema: { type: "object", patternProperties: { "[": { type: "string" } } } },
          { name: "ref-cycle", inputSchema: { type: "object", $defs: { n: { type: "object", properties: { next: { $ref: "#/$defs/n" } } } }, properties: { root: { $ref: "#/$defs/n" } } } },
          { name: "pattern-lookahead", inputSchema: prop({ type: "string", pattern: "^(?=a)a+$" }) },
          { name: "types", inputSchema: prop({ type: ["string", "null"] }) },
        ]),
      },
    });
    expect(mcp.status()[0]!.skipped).toEqual([
      { tool: "bad-type", reason: 'its input schema is unusable: inputSchema.properties.a.type must be a JSON Schema type (array, boolean, integer, null, number, object, string) or an array of them, got "bogus"' },
      { tool: "ref-missing", reason: 'its input schema is unusable: inputSchema.properties.a.$ref "#/$defs/nope" names no part of the schema' },
      { tool: "remote-ref", reason: 'its input schema is unusable: inputSchema.properties.a.$ref "https://example.com/schema.json" names no part of the schema (remote references are not fetched)' },
      { tool: "pattern-bad", reason: expect.stringMatching(/^its input schema is unusable: inputSchema\.properties\.a\.pattern "\(" is not a regular expression the validator can run: Invalid regular expression/) },
      { tool: "pattern-props-bad", reason: expect.stringMatching(/^its input schema is unusable: inputSchema\.patternProperties\.\[ "\[" is not a regular expression/) },
    ]);
    expect(mcp.tools.map((entry) => entry.name)).toEqual(["raw__ref-cycle", "raw__pattern-lookahead", "raw__types"]);
    expect((await call(mcp, "raw__ref-cycle", { root: { next: {} } })).content).toEqual([{ type: "text", text: 'called ref-cycle {"root":{"next":{}}}' }]);
  });

  it("an output schema the validator cannot use leaves only its tool out, naming the keyword's place", async () => {
    const mcp = await connect({
      servers: {
        raw: rawServer([
          { name: "bad-output", inputSchema: object, outputSchema: { type: "object", properties: { n: { type: "bogus" } } } },
          { name: "typed", inputSchema: object, outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
        ]),
      },
    });
    expect(mcp.status()[0]!.skipped).toEqual([
      { tool: "bad-output", reason: 'its output schema is unusable: outputSchema.properties.n.type must be a JSON Schema type (array, boolean, integer, null, number, object, string) or an array of them, got "bogus"' },
    ]);
    expect(mcp.tools.map((entry) => entry.name)).toEqual(["raw__typed"]);
  });
});

describe("structured results are checked against the tool's output schema", () => {
  const object = { type: "object" };
  const outputSchema = { type: "object", properties: { n: { type: "number" }, unit: { type: "string" } }, required: ["n"] };
  const tools = [
    { name: "typed", inputSchema: object, outputSchema },
    { name: "plain", inputSchema: object },
  ];
  const structured = (value: unknown, extra: object = {}) => ({ content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, ...extra });

  it("a result that matches is kept as it is", async () => {
    const mcp = await connect({ servers: { raw: rawServer(tools, { typed: structured({ n: 3, unit: "m" }) }) } });
    expect(await call(mcp, "raw__typed")).toEqual({ content: [{ type: "text", text: '{"n":3,"unit":"m"}' }], details: { mcp: { server: "raw", tool: "typed" } }, structuredContent: { n: 3, unit: "m" } });
  });

  it("a result that does not match is an error result naming the tool and the first problem", async () => {
    const mcp = await connect({ servers: { raw: rawServer(tools, { typed: structured({ n: "three", unit: 1 }) }) } });
    const message = 'MCP server "raw": the structured content of tool "typed" does not match its output schema: n: expected number, got string (and 1 more problem)';
    expect(await call(mcp, "raw__typed")).toEqual({ content: [{ type: "text", text: message }], details: { mcp: { server: "raw", tool: "typed", error: { kind: "protocol", message } } }, isError: true });
  });

  it("a result without structured content is an error result; the raw server answers with text only", async () => {
    const mcp = await connect({ servers: { raw: rawServer(tools) } });
    const message = 'MCP server "raw": tool "typed" has an output schema but did not return structured content';
    expect((await call(mcp, "raw__typed")).details.mcp.error).toEqual({ kind: "protocol", message });
    // A tool without an output schema is not checked.
    expect((await call(mcp, "raw__plain")).content).toEqual([{ type: "text", text: "called plain {}" }]);
  });

  it("an error result needs no structured content, but one it carries is checked", async () => {
    const mcp = await connect({ servers: { raw: rawServer([...tools, { name: "typed2", inputSchema: object, outputSchema }], { typed: { content: [{ type: "text", text: "it broke" }], isError: true }, typed2: structured({ n: "x" }, { isError: true }) }) } });
    expect(await call(mcp, "raw__typed")).toEqual({ content: [{ type: "text", text: "it broke" }], details: { mcp: { server: "raw", tool: "typed" } }, isError: true });
    expect((await call(mcp, "raw__typed2")).details.mcp.error).toEqual({ kind: "protocol", message: 'MCP server "raw": the structured content of tool "typed2" does not match its output schema: n: expected number, got string' });
  });

  const taskOnly = (name: string) => ({ name, inputSchema: object, execution: { taskSupport: "required" } });
  const taskReason = "it requires task-based execution (execution.taskSupport \"required\"), which this client does not support";
  const callLog = () => path.join(mkdtempSync(path.join(tmpdir(), "xal-mcp-")), "calls");
  const calls = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);

  it("a tool that requires task-based execution is not offered; a call by name (a stale transcript) never reaches the server", async () => {
    const warnings: string[] = [];
    const log = callLog();
    const mcp = await connect({ servers: { raw: rawServer([taskOnly("task-only"), { name: "plain", inputSchema: object }], {}, { RAW_CALL_LOG: log }) }, onWarning: (message) => warnings.push(message) });
    expect(mcp.tools.map((entry) => entry.name)).toEqual(["raw__plain"]);
    expect(mcp.status()[0]!.skipped).toEqual([{ tool: "task-only", reason: taskReason }]);
    expect(warnings).toEqual([`MCP server "raw": tool "task-only" left out: ${taskReason}`]);
    const stream = scriptedStreamFn([{ content: [toolCall("raw__task-only", {}, "t"), toolCall("raw__plain", {}, "p")] }, { content: [text("done")] }]);
    const messages = await runAgentLoop([user("go")], { messages: [], tools: [...mcp.tools] }, baseConfig(), recorder().sink, undefined, stream);
    expect(messages.filter((message) => message.role === "toolResult").map((message) => `${message.toolName}: ${(message.content[0] as { text: string }).text}`)).toEqual([
      "raw__task-only: Tool raw__task-only not found",
      "raw__plain: called plain {}",
    ]);
    expect(calls(log)).toEqual(["plain"]);
  });

  it("a tool object kept from before its listing turned task-only is refused without reaching the server", async () => {
    const log = callLog();
    const mcp = await connect({
      servers: { raw: rawServer([{ name: "relist", inputSchema: object }, { name: "flip", inputSchema: object }], {}, { RAW_CALL_LOG: log, RAW_NEXT_TOOLS: JSON.stringify([taskOnly("flip")]) }) },
    });
    const stale = find(mcp, "raw__flip");
    await call(mcp, "raw__relist");
    await mcp.settled();
    expect(mcp.tools.map((entry) => entry.name)).toEqual([]);
    expect(mcp.status()[0]!.skipped).toEqual([{ tool: "flip", reason: taskReason }]);
    const result = (await stale.execute("late", {})) as AgentToolResult<McpToolDetails>;
    expect(result.details.mcp.error).toEqual({ kind: "protocol", message: 'MCP server "raw": tool "flip" requires task-based execution, which this client does not support' });
    expect(calls(log)).toEqual(["relist"]);
  });
});

describe("secrets in results", () => {
  it("a server that echoes its environment (the everything server's get-env) does not leak the configured values", async () => {
    const token = "env-sekrit-0123456789";
    const mcp = await connect({ servers: { everything: everythingStdio({ env: { MY_TOKEN: token } }) } });
    const result = await call(mcp, "everything__get-env");
    const body = (result.content[0] as { text: string }).text;
    expect(body).toContain('"MY_TOKEN": "[redacted]"');
    expect(JSON.stringify(result)).not.toContain(token);
  });
});

describe("typed errors", () => {
  it("a malformed configuration is an AgentInputError naming the field; stdio needs the Node entry", async () => {
    await expect(connectMcp({ servers: { a: { url: "not a url" } } })).rejects.toMatchObject({ name: "AgentInputError", field: "servers.a.url" });
    await expect(connectMcp({ servers: { a: {} as never } })).rejects.toBeInstanceOf(AgentInputError);
    await expect(connectBrowserSafe({ servers: { a: { command: "x" } } })).rejects.toMatchObject({ field: "servers.a", message: expect.stringContaining("xstate-agent-loop/mcp/node") });
  });

  it("every documented option is checked: a malformed one is an AgentInputError naming the field, before anything connects", async () => {
    const server = fixtureServer();
    const cases: [McpClientOptions, string, string][] = [
      [{ servers: { s: { ...server, args: "server.js" as never } } }, "servers.s.args", "servers.s.args must be an array of strings, got a string (\"server.js\")"],
      [{ servers: { s: { ...server, args: [1 as never] } } }, "servers.s.args[0]", "servers.s.args[0] must be a string, got a number (1)"],
      [{ servers: { s: { ...server, toolTimeoutMs: "abc" as never } } }, "servers.s.toolTimeoutMs", "servers.s.toolTimeoutMs must be a number of milliseconds, got a string (\"abc\")"],
      [{ servers: { s: { ...server, toolTimeoutMs: -5 } } }, "servers.s.toolTimeoutMs", "servers.s.toolTimeoutMs must be a positive number of milliseconds, got a number (-5)"],
      [{ servers: { s: { ...server, tools: { t: { replay: "always" as never } } } } }, "servers.s.tools.t.replay", 'servers.s.tools.t.replay must be "safe" or "never", got a string ("always")'],
      [{ servers: { s: { ...server, env: { A: 1 as never } } } }, "servers.s.env.A", "servers.s.env.A must be a string, got a number (1)"],
      [{ servers: { s: server }, limits: { resultChars: -1 } }, "limits.resultChars", "limits.resultChars must be a positive number of characters, got a number (-1)"],
      [{ servers: { s: server }, limits: { resultChars: 0 } }, "limits.resultChars", "limits.resultChars must be a positive number of characters, got a number (0)"],
      [{ servers: { s: server }, limits: { descriptionChars: 1.5 } }, "limits.descriptionChars", "limits.descriptionChars must be a whole number of characters, got a number (1.5)"],
      [{ servers: { s: server }, connectTimeoutMs: Number.NaN }, "connectTimeoutMs", "connectTimeoutMs must be a number of milliseconds, got a number (NaN)"],
      [{ servers: { s: server }, reservedNames: "read_file" as never }, "reservedNames", 'reservedNames must be an iterable (an array, a Set) of tool names, got a string ("read_file")'],
      [{ servers: { s: { transport: {} as never } } }, "servers.s.transport", "servers.s.transport must be a function returning an SDK Transport (made afresh for every connection), got an object"],
      [{ servers: { s: { url: "https://example.com/mcp", headers: { Authorization: 5 as never } } } }, "servers.s.headers.Authorization", "servers.s.headers.Authorization must be a string, got a number (5)"],
    ];
    for (const [options, field, message] of cases) {
      await expect(connectMcp(options), field).rejects.toMatchObject({ name: "AgentInputError", field, message });
    }
  });

  it("a transport factory that throws: the server is `failed` with the error, named in the warning, and retried only after its backoff", async () => {
    const warnings: string[] = [];
    let made = 0;
    const transport = () => {
      made++;
      throw new Error("factory broke");
    };
    const mcp = await connectBrowserSafe({ servers: { s: { transport } }, reconnect: { baseDelayMs: 60_000 }, onWarning: (message) => warnings.push(message) });
    clients.push(mcp);
    expect(mcp.status()[0]).toMatchObject({ state: "failed", error: "factory broke" });
    expect(warnings).toEqual(['MCP server "s" is unavailable: factory broke']);
    await mcp.connectAll();
    await mcp.retryFailed();
    expect(made).toBe(1);
  });

  it("an onWarning that throws is the app's bug: reported, and neither connectMcp, a retry nor a turn boundary rejects", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const transport = () => {
        throw new Error("factory broke");
      };
      const mcp = await connectBrowserSafe({
        servers: { s: { transport } },
        reconnect: { baseDelayMs: 0 },
        onWarning: () => {
          throw new Error("app bug");
        },
      });
      clients.push(mcp);
      expect(mcp.status()[0]).toMatchObject({ state: "failed", error: "factory broke" });
      await expect(mcp.retryFailed()).resolves.toBeUndefined();
      await mcp.prepareNextTurn({ context: { messages: [], tools: [] } } as never);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(String(warn.mock.calls[0]?.[1])).toContain("app bug");
    } finally {
      warn.mockRestore();
    }
  });

  it("a server that cannot be restarted: its calls get `unavailable` results, spaced by the reconnection backoff", async () => {
    const once = path.join(mkdtempSync(path.join(tmpdir(), "xal-mcp-")), "started");
    const mcp = await connect({ servers: { once: fixtureServer({ env: { FIXTURE_ONCE: once } }) }, reconnect: { baseDelayMs: 60_000 } });
    const crashed = await call(mcp, "once__crash");
    expect(crashed.details.mcp.error?.kind).toBe("disconnected");
    const first = await call(mcp, "once__lookup", { key: "a" });
    expect(first.details.mcp.error).toEqual({ kind: "unavailable", message: expect.stringMatching(/^MCP server "once" is unavailable: .*its stderr ended with: fixture: started once already$/) });
    const second = await call(mcp, "once__lookup", { key: "a" });
    expect(second.details.mcp.error).toEqual({ kind: "unavailable", message: expect.stringMatching(/the next reconnection is in \d+ ms$/) });
    expect(mcp.status()[0]!.state).toBe("failed");
    // A closed client: calls are refused at once.
    await mcp.close();
    expect((await call(mcp, "once__lookup", { key: "a" })).details.mcp.error).toEqual({ kind: "unavailable", message: 'MCP server "once" is closed' });
  });
});
