/**
 * MCP tools in the loop, against real servers started and stopped here: whole event sequences for
 * R70 (read-only calls start while the model streams), R82 (a destructive call waits for
 * approval), R65/abort (notifications/cancelled reaches the server), progress updates, a crash
 * mid-call (typed error result, the next call reconnects) and R30 (tools/list_changed between turns).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Agent, runAgentLoop, scriptedModel, scriptedStreamFn, pause, text, toolCall } from "../../src/index.js";
import type { AgentEvent, AgentTool, AnyAgentEvent, ScriptedStreamFn } from "../../src/index.js";
import { connectMcp, type McpClient } from "../../src/mcp/node.js";
import type { McpClientOptions, McpToolDetails } from "../../src/mcp/types.js";
import { baseConfig, logEntry, recorder, tool, user } from "../loop/helpers.js";
import { everythingStdio, fixtureServer, startEverythingHttp, startFixtureHttp } from "./servers.js";

const clients: McpClient[] = [];
async function connect(options: McpClientOptions): Promise<McpClient> {
  const client = await connectMcp(options);
  clients.push(client);
  return client;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

const resultText = (event: AgentEvent) => (event.type === "tool_execution_end" ? (event.result.content as { text?: string }[]).map((part) => part.text ?? `[${(part as { type: string }).type}]`).join("|") : "");
const ends = (events: AgentEvent[]) => events.filter((event) => event.type === "tool_execution_end").map((event) => `${(event as { toolName: string }).toolName}: ${resultText(event)}`);

/** A pause of the scripted model that lasts until `gate` resolves (the test decides when the stream goes on). */
function gatedStream(script: Parameters<typeof scriptedStreamFn>[0], gates: (() => Promise<void>)[]): ScriptedStreamFn {
  let next = 0;
  return scriptedStreamFn(script, {
    clock: {
      setTimer: (_ms, fire) => {
        const gate = gates[next++];
        void (gate ? gate() : Promise.resolve()).then(fire);
        return () => {};
      },
    },
  });
}

async function run(tools: readonly AgentTool[], stream: ScriptedStreamFn, config: Parameters<typeof baseConfig>[0] = {}, signal?: AbortSignal) {
  const rec = recorder();
  const waiters: { test: (event: AgentEvent) => boolean; resolve: () => void }[] = [];
  const sink = (event: AgentEvent) => {
    rec.sink(event);
    for (const waiter of waiters.splice(0)) (waiter.test(event) ? waiter.resolve : () => waiters.push(waiter))();
  };
  const when = (test: (event: AgentEvent) => boolean) => () =>
    rec.events.some(test) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ test, resolve }));
  return { rec, when, done: () => runAgentLoop([user("go")], { messages: [], tools: tools.slice() }, baseConfig(config), sink, signal, stream) };
}

describe("MCP tools run by the loop (real servers)", () => {
  it("the everything server over stdio: a call and its result, and arguments validated by the project's validator", async () => {
    const mcp = await connect({ servers: { everything: everythingStdio() } });
    const stream = scriptedStreamFn([
      { content: [toolCall("everything__get-sum", { a: 2, b: "3" }, "s1"), toolCall("everything__get-sum", { a: 2 }, "s2")] },
      { content: [text("five")] },
    ]);
    const rec = recorder();
    const messages = await runAgentLoop([user("go")], { messages: [], tools: mcp.tools.slice() }, baseConfig(), rec.sink, undefined, stream);
    const results = messages.filter((message) => message.role === "toolResult").map((message) => `${message.toolCallId}${message.isError ? "!" : ""}: ${(message.content[0] as { text: string }).text}`);
    expect(results).toEqual([
      // "3" is coerced to the schema's number, as for any JSON Schema tool.
      "s1: The sum of 2 and 3 is 5.",
      'Validation failed for tool "everything__get-sum":\n  - b: missing\n\nReceived arguments:\n{\n  "a": 2\n}'.replace(/^/, "s2!: "),
    ]);
  });

  it("the everything server over Streamable HTTP (port 0): its progress notifications arrive as tool updates", async () => {
    const http = await startEverythingHttp();
    try {
      const mcp = await connect({ servers: { everything: { url: http.url } } });
      const stream = scriptedStreamFn([{ content: [toolCall("everything__trigger-long-running-operation", { duration: 0.2, steps: 2 })] }, { content: [text("done")] }]);
      const { rec, done } = await run(mcp.tools, stream);
      await done();
      const tool = rec.events.filter((event) => event.type.startsWith("tool_execution"));
      expect(tool.map((event) => (event.type === "tool_execution_update" ? `update ${JSON.stringify((event.partialResult.details as { progress: unknown }).progress)}` : logEntry(event)))).toEqual([
        "tool_start:everything__trigger-long-running-operation",
        'update {"done":1,"total":2,"unit":"steps"}',
        'update {"done":2,"total":2,"unit":"steps"}',
        "tool_end:everything__trigger-long-running-operation",
      ]);
      expect(ends(rec.events)).toEqual(["everything__trigger-long-running-operation: Long running operation completed. Duration: 0.2 seconds, Steps: 2."]);
    } finally {
      await http.stop();
    }
  });

  it("R70: trusted read-only calls start while the model streams, in parallel (the fixture's barrier needs both at once)", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer({ trustAnnotations: true }) } });
    let when!: Awaited<ReturnType<typeof run>>["when"];
    let scenarioEvents: AgentEvent[] = [];
    const bothEnded = () => when(() => scenarioEvents.filter((event) => event.type === "tool_execution_end").length === 2)();
    // The response goes on after its two calls only once both have ended.
    const stream = gatedStream(
      [{ content: [toolCall("fixture__barrier", { key: "k", count: 2 }, "a"), toolCall("fixture__barrier", { key: "k", count: 2 }, "b"), pause(1), text("both met")] }, { content: [text("done")] }],
      [bothEnded],
    );
    const scenario = await run(mcp.tools, stream, { streamingToolExecution: true });
    when = scenario.when;
    scenarioEvents = scenario.rec.events;
    await scenario.done();
    expect(scenario.rec.log.slice(6)).toEqual([
      "message_start:assistant",
      "tool_start:fixture__barrier",
      "tool_start:fixture__barrier",
      "tool_end:fixture__barrier",
      "tool_end:fixture__barrier",
      // The assistant message ends only after both calls did: they ran while it streamed.
      "message_end:assistant(toolUse)",
      "message_start:toolResult(fixture__barrier)",
      "message_end:toolResult(fixture__barrier)",
      "message_start:toolResult(fixture__barrier)",
      "message_end:toolResult(fixture__barrier)",
      "turn_end:assistant(toolUse)+2",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:6",
    ]);
    expect(ends(scenario.rec.events)).toEqual(["fixture__barrier: k: 2 calls met", "fixture__barrier: k: 2 calls met"]);
  });

  it("R70: untrusted annotations: the same read-only tool is not concurrency-safe (each call runs alone)", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() } });
    const stream = scriptedStreamFn([{ content: [toolCall("fixture__lookup", { key: "a" }, "a"), toolCall("fixture__lookup", { key: "b" }, "b")] }, { content: [text("done")] }]);
    const { rec, done } = await run(mcp.tools, stream, { streamingToolExecution: true });
    await done();
    const calls = rec.events.filter((event) => event.type === "tool_execution_start" || event.type === "tool_execution_end").map((event) => `${event.type === "tool_execution_start" ? "start" : "end"} ${(event as { toolCallId: string }).toolCallId}`);
    expect(calls).toEqual(["start a", "end a", "start b", "end b"]);
  });

  it("R82: a destructive call of a trusted server waits for approval; approved, it runs on the server", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer({ trustAnnotations: true }) } });
    const agent = new Agent({
      initialState: { model: scriptedModel, tools: mcp.tools.slice() },
      streamFn: scriptedStreamFn([{ content: [toolCall("fixture__lookup", { key: "k" }, "l"), toolCall("fixture__delete_item", { id: "7" }, "d")] }, { content: [text("deleted")] }]),
    });
    const log: string[] = [];
    agent.subscribe(
      (event: AnyAgentEvent) => {
        if (event.type === "tool_approval_requested") {
          log.push(`approval? ${event.toolName} ${JSON.stringify(event.args)}`);
          asked = event.approvalId;
        } else if (event.type === "tool_approval_resolved") log.push(`approval ${event.decision}`);
        else if (event.type.startsWith("tool_execution_") && event.type !== "tool_execution_update") log.push(logEntry(event as AgentEvent));
        // The question is answered once the batch's other call has run meanwhile.
        if (asked && !approving && log.includes("tool_end:fixture__lookup")) {
          approving = true;
          queueMicrotask(() => agent.approve(asked!));
        }
      },
      { runtimeEvents: true },
    );
    let asked: string | undefined;
    let approving = false;
    await agent.prompt("delete item 7");
    // The lookup runs while the delete waits (whether it ends before or after the question is asked).
    expect(log.filter((entry) => entry !== "tool_end:fixture__lookup")).toEqual([
      "tool_start:fixture__lookup",
      "tool_start:fixture__delete_item",
      "approval? fixture__delete_item {\"id\":\"7\"}",
      "approval approved",
      "tool_end:fixture__delete_item",
    ]);
    expect(log.indexOf("tool_end:fixture__lookup")).toBeLessThan(log.indexOf("approval approved"));
    const observed = await mcp.tools.find((tool) => tool.name === "fixture__observed")!.execute("o", {});
    expect(JSON.parse((observed.content[0] as { text: string }).text)).toEqual(["lookup k", "delete_item 7"]);
  });

  it("abort: progress arrives as updates, then the abort sends notifications/cancelled, which the server observes", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() } });
    const controller = new AbortController();
    const stream = scriptedStreamFn([{ content: [toolCall("fixture__slow", { steps: 2 }, "s")] }, { content: [text("never")] }]);
    const rec = recorder();
    const sink = (event: AgentEvent) => {
      rec.sink(event);
      if (event.type === "tool_execution_update" && (event.partialResult.details as { progress: { done: number } }).progress.done === 2) controller.abort();
    };
    await runAgentLoop([user("go")], { messages: [], tools: mcp.tools.slice() }, baseConfig(), sink, controller.signal, stream);
    const tool = rec.events.filter((event) => event.type.startsWith("tool_execution"));
    expect(tool.map((event) => (event.type === "tool_execution_update" ? `update ${(event.partialResult.content[0] as { text: string }).text}` : `${logEntry(event)} ${resultText(event)}`.trim()))).toEqual([
      "tool_start:fixture__slow",
      "update step 1 of 2",
      "update step 2 of 2",
      "tool_end:fixture__slow! Operation aborted",
    ]);
    const observed = await mcp.tools.find((tool) => tool.name === "fixture__observed")!.execute("o", {});
    expect(JSON.parse((observed.content[0] as { text: string }).text)).toEqual(["slow start", "slow cancelled: AbortError: This operation was aborted"]);
  });

  it("R65: a tool timeout aborts the call and the server is told (notifications/cancelled)", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer({ tools: { slow: { timeoutMs: 300 } } }) } });
    const stream = scriptedStreamFn([{ content: [toolCall("fixture__slow", { steps: 0 }, "s")] }, { content: [text("timed out")] }]);
    const { rec, done } = await run(mcp.tools, stream);
    await done();
    expect(ends(rec.events)).toEqual(["fixture__slow: Tool fixture__slow timed out after 300 ms"]);
    const observed = await mcp.tools.find((tool) => tool.name === "fixture__observed")!.execute("o", {});
    expect(JSON.parse((observed.content[0] as { text: string }).text)).toEqual(["slow start", expect.stringMatching(/^slow cancelled: /)]);
  });

  it("a server that crashes mid-call gives that call a typed error result; the next call reconnects (a new process)", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() } });
    const pidTool = mcp.tools.find((tool) => tool.name === "fixture__pid")!;
    const firstPid = (pidTool.execute("p", {}) as Promise<{ content: { text: string }[] }>).then((result) => result.content[0].text);
    const stream = scriptedStreamFn([{ content: [toolCall("fixture__crash", {}, "c")] }, { content: [toolCall("fixture__pid", {}, "p")] }, { content: [text("back")] }]);
    const { rec, done } = await run(mcp.tools, stream);
    await done();
    const [crashEnd, pidEnd] = rec.events.filter((event) => event.type === "tool_execution_end");
    expect(crashEnd).toMatchObject({
      toolName: "fixture__crash",
      isError: true,
      result: { details: { mcp: { server: "fixture", tool: "crash", error: { kind: "disconnected" } } } },
    });
    expect(resultText(crashEnd!)).toMatch(/^MCP server "fixture" disconnected during the call to crash \(MCP error -32000: Connection closed\); its outcome is unknown/);
    expect(pidEnd).toMatchObject({ toolName: "fixture__pid", isError: false });
    expect(resultText(pidEnd!)).not.toBe(await firstPid);
    expect(mcp.status()[0]!.state).toBe("connected");
  });

  it("a Streamable HTTP server that dies mid-call: a typed `disconnected` result at once, then `unavailable` (never a hang)", async () => {
    const http = await startFixtureHttp();
    try {
      const mcp = await connect({ servers: { web: { url: http.url } } });
      const stream = scriptedStreamFn([{ content: [toolCall("web__crash", {}, "c")] }, { content: [toolCall("web__lookup", { key: "a" }, "l")] }, { content: [text("gone")] }]);
      const { rec, done } = await run(mcp.tools, stream);
      await done();
      const kinds = rec.events.filter((event) => event.type === "tool_execution_end").map((event) => `${event.toolName}: ${(event.result.details as { mcp: { error?: { kind: string } } }).mcp.error?.kind}`);
      expect(kinds).toEqual(["web__crash: disconnected", "web__lookup: unavailable"]);
      expect(mcp.status()[0]!.state).toBe("failed");
    } finally {
      await http.stop();
    }
  });

  it("R30: tools/list_changed during a turn: the next turn declares the added tool (a system message) and can call it", async () => {
    const mcp = await connect({ servers: { fixture: fixtureServer() } });
    const stream = scriptedStreamFn([{ content: [toolCall("fixture__add_tool", {}, "a")] }, { content: [toolCall("fixture__added", { x: 5 }, "b")] }, { content: [text("done")] }]);
    const { rec, done } = await run(mcp.tools, stream, { prepareNextTurn: mcp.prepareNextTurn });
    const messages = await done();
    expect(rec.log.slice(6)).toEqual([
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:fixture__add_tool",
      "tool_end:fixture__add_tool",
      "message_start:toolResult(fixture__add_tool)",
      "message_end:toolResult(fixture__add_tool)",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      // R30: the declaration of the new tool, before the request that may call it.
      "message_start:system",
      "message_end:system",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:fixture__added",
      "tool_end:fixture__added",
      "message_start:toolResult(fixture__added)",
      "message_end:toolResult(fixture__added)",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:8",
    ]);
    const declaration = messages.filter((message) => message.role === "system").at(-1) as { toolsAdded?: { name: string }[]; toolsRemoved?: unknown };
    expect(declaration.toolsAdded?.map((decl) => decl.name)).toEqual(["fixture__added"]);
    expect(declaration.toolsRemoved).toBeUndefined();
    expect(ends(rec.events)).toEqual(["fixture__add_tool: added the tool `added`", "fixture__added: added 5"]);
  });

  it("a server that failed in connectMcp is tried again at a turn boundary (after its backoff): its tools come in at the next one", async () => {
    const failFirst = path.join(mkdtempSync(path.join(tmpdir(), "xal-mcp-")), "failed");
    const mcp = await connect({ servers: { late: fixtureServer({ env: { FIXTURE_FAIL_FIRST: failFirst } }) }, reconnect: { baseDelayMs: 0 } });
    expect(mcp.status()[0]).toMatchObject({ state: "failed", tools: [] });
    const connected = new Promise<void>((resolve) => mcp.onToolsChanged(() => resolve()));
    // Turn 2's tool waits until the retry started at the end of turn 1 has listed the server's tools.
    const waitForServer = tool("wait_for_server", async () => {
      await connected;
      return { content: [{ type: "text", text: "connected" }], details: {} };
    });
    const stream = scriptedStreamFn([
      { content: [toolCall("late__lookup", { key: "a" }, "a")] },
      { content: [toolCall("wait_for_server", {}, "w")] },
      { content: [toolCall("late__lookup", { key: "b" }, "b")] },
      { content: [text("done")] },
    ]);
    const { rec, done } = await run([waitForServer], stream, { prepareNextTurn: mcp.prepareNextTurn });
    await done();
    expect(ends(rec.events)).toEqual([expect.stringMatching(/^late__lookup: Tool late__lookup not found/), "wait_for_server: connected", "late__lookup: value of b"]);
    expect(mcp.status()[0]!.state).toBe("connected");
  });

  /** A server that crashed after its first start: its restart never answers initialize, so a call waits for the reconnection. */
  async function crashedServer(connectTimeoutMs: number) {
    const hang = path.join(mkdtempSync(path.join(tmpdir(), "xal-mcp-")), "started");
    const mcp = await connect({ servers: { hang: fixtureServer({ env: { FIXTURE_HANG_RESTART: hang } }) }, connectTimeoutMs });
    const crash = mcp.tools.find((entry) => entry.name === "hang__crash")!;
    expect(((await crash.execute("c", {})).details as McpToolDetails).mcp.error?.kind).toBe("disconnected");
    return { mcp, lookup: mcp.tools.find((entry) => entry.name === "hang__lookup")! };
  }

  it("abort while the call waits for a reconnection: the call settles at once as `aborted` (the reconnection goes on)", async () => {
    const { mcp, lookup } = await crashedServer(2_000);
    const controller = new AbortController();
    const started = Date.now();
    // The restarted server never answers initialize: the call waits for the reconnection.
    const pending = lookup.execute("l", { key: "a" }, controller.signal);
    controller.abort();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((result.details as McpToolDetails).mcp.error).toEqual({ kind: "aborted", message: "Operation aborted" });
    expect(mcp.status()[0]!.state).toBe("connecting");
  });

  it("close() while a reconnection hangs closes it: the waiting call settles, nothing waits out the connect timeout", async () => {
    const { mcp, lookup } = await crashedServer(60_000);
    const pending = lookup.execute("l", { key: "a" });
    // The restarted server never answers initialize: the call waits for its reconnection.
    await vi.waitFor(() => expect(mcp.status()[0]!.state).toBe("connecting"));
    const closing = mcp.close();
    const outcome = await Promise.race([closing.then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("still waiting"), 30_000))]);
    expect(outcome).toBe("closed");
    expect(((await pending).details as McpToolDetails).mcp.error?.kind).toBe("unavailable");
    expect(mcp.status()[0]!.state).toBe("closed");
  }, 40_000);
});
