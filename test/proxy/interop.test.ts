/**
 * Issue 16, "streamProxy and its wire protocol": our server side against the reference's client,
 * our client against a scripted server speaking the protocol (and against the reference's client
 * on the same server), and both of ours end to end through the loop. Servers bind 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent as PiAgent, streamProxy as piStreamProxy } from "@earendil-works/pi-agent-core";
import {
  runAgentLoop,
  streamProxy,
  proxyStreamFn,
  defaultConvertToLlm,
  type AgentEvent,
  type AgentLoopConfig,
  type StreamFn,
  type TranscriptContext,
} from "../../src/index.js";
import { createStreamProxyHandler, PROXY_STREAM_PATH, type ProxyAssistantMessageEvent } from "../../src/proxy/index.js";
import { scriptedModel, scriptedStreamFn, text, thinking, toolCall, type ScriptedResponse } from "../../src/testing/index.js";
import { drain, listen, readJson, writeSse, type LocalServer } from "./helpers.js";

// The reference types its client with pi-ai's Model and branded TranscriptContext; the shapes are ours.
const referenceStreamProxy = piStreamProxy as unknown as typeof streamProxy;

const TOKEN = "proxy-test-token";
const context: TranscriptContext = { messages: [{ role: "user", content: "read a.txt", timestamp: 1 }] };
const RESPONSE: ScriptedResponse = {
  content: [thinking("the user wants a file", "sig-1"), text("Reading it now."), toolCall("read", { path: "a.txt" }, "call-1")],
  usage: { input: 12, output: 7 },
};

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function proxyServer(streamFn: StreamFn, options: Parameters<typeof createStreamProxyHandler>[1] = { authToken: TOKEN }) {
  const handler = createStreamProxyHandler(streamFn, options);
  const server = await listen(async (req, res) => {
    if (new URL(req.url ?? "/", "http://x").pathname === PROXY_STREAM_PATH) await handler(req, res);
    else res.writeHead(404).end();
  });
  servers.push(server);
  return server;
}

/** What the scripted provider itself produces for RESPONSE, without any proxy. */
async function direct() {
  return drain(await scriptedStreamFn([RESPONSE])(scriptedModel, context, {}));
}

describe("issue 16: the reference's streamProxy against our server (createStreamProxyHandler)", () => {
  it("streams every event, and the rebuilt message equals the provider's", async () => {
    const upstream = scriptedStreamFn([RESPONSE]);
    const server = await proxyServer(upstream);
    const viaProxy = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN, temperature: 0.2, maxTokens: 99 }));
    expect(viaProxy).toEqual(await direct());
    // The wire options reached the server's stream function; no key travelled.
    expect(upstream.calls).toHaveLength(1);
    expect(upstream.calls[0].options).toMatchObject({ temperature: 0.2, maxTokens: 99 });
    expect(upstream.calls[0].hadApiKey).toBe(false);
    expect(upstream.calls[0].context.messages).toEqual(context.messages);
  });

  it("a wrong token is refused with 401, which the reference reports as its proxy error", async () => {
    const upstream = scriptedStreamFn([RESPONSE]);
    const server = await proxyServer(upstream);
    const result = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: "wrong" }));
    expect(result.events).toEqual([{ type: "error", reason: "error" }]);
    expect(result.message).toMatchObject({ stopReason: "error", errorMessage: "Proxy error: Unauthorized", content: [] });
    expect(upstream.calls).toHaveLength(0);
  });

  it("a provider failure arrives as the reference's error event with the provider's message", async () => {
    const server = await proxyServer(scriptedStreamFn([{ content: [text("partial answer")], stopReason: "error", errorMessage: "overloaded" }]));
    const result = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(result.events.at(-1)).toEqual({ type: "error", reason: "error" });
    expect(result.message).toMatchObject({ stopReason: "error", errorMessage: "overloaded", content: [{ type: "text", text: "partial answer" }] });
  });

  it("a provider failure quoting a key reaches the client without it", async () => {
    const server = await proxyServer(scriptedStreamFn([{ content: [], stopReason: "error", errorMessage: "invalid x-api-key sk-ant-api03-abcdefghijklmnop" }]));
    const result = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(result.message.errorMessage).toBe("invalid x-api-key [redacted]");
  });
});

const USAGE = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** A server that speaks the protocol from a fixed script (no library code on the server side). */
const SCRIPTED_WIRE: ProxyAssistantMessageEvent[] = [
  { type: "start" },
  { type: "thinking_start", contentIndex: 0 },
  { type: "thinking_delta", contentIndex: 0, delta: "plan" },
  { type: "thinking_end", contentIndex: 0, contentSignature: "sig-9" },
  { type: "text_start", contentIndex: 1 },
  { type: "text_delta", contentIndex: 1, delta: "hel" },
  { type: "text_delta", contentIndex: 1, delta: "lo" },
  { type: "text_end", contentIndex: 1 },
  { type: "toolcall_start", contentIndex: 2, id: "c1", toolName: "read" },
  { type: "toolcall_delta", contentIndex: 2, delta: '{"pa' },
  { type: "toolcall_delta", contentIndex: 2, delta: 'th":"x"}' },
  { type: "toolcall_end", contentIndex: 2, toolCall: { type: "toolCall", id: "c1", name: "read", arguments: { path: "x" } } },
  { type: "done", reason: "toolUse", usage: USAGE },
];

describe("issue 16: our streamProxy against a scripted server speaking the protocol", () => {
  it("sends the reference's request: POST /api/stream, bearer token, {model, context, options} without key or signal", async () => {
    const seen: { method?: string; url?: string; auth?: string; type?: string; body?: unknown }[] = [];
    const server = await listen(async (req, res) => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers["content-type"], body: await readJson(req) });
      writeSse(res, SCRIPTED_WIRE);
    });
    servers.push(server);
    const options = { proxyUrl: server.url, authToken: TOKEN, temperature: 0.5, maxTokens: 10, reasoning: "low" as const, sessionId: "s", headers: { a: "b" } };
    await drain(streamProxy(scriptedModel, context, { ...options, apiKey: "sk-secret", signal: new AbortController().signal } as typeof options));
    await drain(referenceStreamProxy(scriptedModel, context, { ...options, apiKey: "sk-secret" } as typeof options));
    expect(seen).toHaveLength(2);
    expect(seen[0]).toEqual(seen[1]);
    expect(seen[0]).toEqual({
      method: "POST",
      url: "/api/stream",
      auth: `Bearer ${TOKEN}`,
      type: "application/json",
      body: { model: scriptedModel, context, options: { temperature: 0.5, maxTokens: 10, reasoning: "low", sessionId: "s", headers: { a: "b" } } },
    });
  });

  it("rebuilds the same events and message as the reference's client from the same wire", async () => {
    const server = await listen((_req, res) => writeSse(res, SCRIPTED_WIRE));
    servers.push(server);
    const ours = await drain(streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    const theirs = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(ours).toEqual(theirs);
    expect(ours.message.content).toEqual([
      { type: "thinking", thinking: "plan", thinkingSignature: "sig-9" },
      { type: "text", text: "hello" },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "x" } },
    ]);
  });

  it("each event's partial is the message so far (text grows delta by delta)", async () => {
    const server = await listen((_req, res) => writeSse(res, SCRIPTED_WIRE));
    servers.push(server);
    const texts: string[] = [];
    for await (const event of streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN })) {
      if (event.type === "text_delta") {
        const block = event.partial.content[event.contentIndex];
        texts.push(block.type === "text" ? block.text : "?");
      }
    }
    expect(texts).toEqual(["hel", "hello"]);
  });

  it("each event's partial equals the reference's at that event (partial tool arguments included)", async () => {
    // The server sends one event, then waits until the client has handled it, so each partial is seen as it was.
    const wire: ProxyAssistantMessageEvent[] = [
      { type: "start" },
      { type: "toolcall_start", contentIndex: 0, id: "c1", toolName: "read" },
      { type: "toolcall_delta", contentIndex: 0, delta: '{"path":"ab' },
      { type: "toolcall_delta", contentIndex: 0, delta: 'c","n":[1,' },
      { type: "toolcall_end", contentIndex: 0, toolCall: { type: "toolCall", id: "c1", name: "read", arguments: { path: "abc", n: [1, 2] } } },
      { type: "done", reason: "toolUse", usage: USAGE },
    ];
    let handled: (() => void) | undefined;
    const server = await listen(async (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const event of wire) {
        const next = new Promise<void>((resolve) => (handled = resolve));
        res.write(`data: ${JSON.stringify(event)}\n\n`);
        await next;
      }
      res.end();
    });
    servers.push(server);
    const partials = async (client: typeof streamProxy) => {
      const seen: unknown[] = [];
      for await (const event of client(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN })) {
        seen.push("partial" in event ? structuredClone(event.partial.content) : event.type);
        handled?.();
      }
      return seen;
    };
    const ours = await partials(streamProxy);
    expect(ours).toEqual(await partials(referenceStreamProxy));
    expect(ours[2]).toEqual([{ type: "toolCall", id: "c1", name: "read", arguments: { path: "ab" } }]);
    expect(ours[3]).toEqual([{ type: "toolCall", id: "c1", name: "read", arguments: { path: "abc", n: [1] } }]);
  });

  const failures: [string, (res: import("node:http").ServerResponse) => void][] = [
    ["a JSON error status", (res) => res.writeHead(401, { "content-type": "application/json" }).end('{"error":"bad token"}')],
    ["a plain error status", (res) => res.writeHead(500).end("boom")],
    ["a provider error event", (res) => writeSse(res, [{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "x" }, { type: "error", reason: "error", errorMessage: "upstream failed", usage: USAGE }])],
    ["a stream cut before its end", (res) => writeSse(res, [{ type: "start" }])],
    ["an event type it does not know", (res) => writeSse(res, [{ type: "start" }, { type: "future_event" }, SCRIPTED_WIRE.at(-1)])],
  ];
  for (const [name, respond] of failures) {
    it(`${name}: the same outcome as the reference's client, and no throw`, async () => {
      const server = await listen((req, res) => {
        req.resume();
        respond(res);
      });
      servers.push(server);
      const ours = await drain(streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
      const theirs = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
      expect(ours).toEqual(theirs);
    });
  }

  it("malformed data ends the stream with a protocol error instead of throwing", async () => {
    const server = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" }).end('data: {"type":"start"}\n\ndata: not json\n\n');
    });
    servers.push(server);
    const result = await drain(streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(result.events).toEqual([{ type: "start" }, { type: "error", reason: "error" }]);
    expect(result.message.errorMessage).toMatch(/^Proxy protocol error: an event is not JSON/);
  });

  it("an out-of-range content index is a protocol error (no sparse array from a hostile server)", async () => {
    const server = await listen((req, res) => {
      req.resume();
      writeSse(res, [{ type: "start" }, { type: "text_start", contentIndex: 1_000_000 }]);
    });
    servers.push(server);
    const result = await drain(streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(result.message).toMatchObject({ stopReason: "error", content: [], errorMessage: "Proxy protocol error: content index 1000000 out of order" });
  });

  it("an abort mid-stream ends it as aborted, like the reference", async () => {
    const server = await listen((req, res) => {
      req.resume();
      writeSse(res, [{ type: "start" }], false);
    });
    servers.push(server);
    const outcome = async (client: typeof streamProxy) => {
      const controller = new AbortController();
      const types: string[] = [];
      const stream = client(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN, signal: controller.signal });
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "start") controller.abort();
      }
      const { stopReason, errorMessage } = await stream.result();
      return { types, stopReason, errorMessage };
    };
    const ours = await outcome(streamProxy);
    expect(ours).toEqual(await outcome(referenceStreamProxy));
    expect(ours).toEqual({ types: ["start", "error"], stopReason: "aborted", errorMessage: "Request aborted by user" });
  });

  it("a refused connection is an error result, not a rejection", async () => {
    const server = await listen(() => {});
    const url = server.url;
    await server.close();
    const result = await drain(streamProxy(scriptedModel, context, { proxyUrl: url, authToken: TOKEN }));
    expect(result.events).toEqual([{ type: "error", reason: "error" }]);
    expect(result.message.stopReason).toBe("error");
  });
});

describe("issue 16: our client and our server through the loop", () => {
  it("the reference's own Agent, its streamFn being the reference's streamProxy, runs a turn against our server", async () => {
    const upstream = scriptedStreamFn([{ content: [text("hello from our server")] }]);
    const server = await proxyServer(upstream);
    // The reference's types are pi-ai's; at runtime its Agent takes our plain model and its client's stream.
    const agent = new PiAgent({
      initialState: { systemPrompt: "Be brief.", model: scriptedModel as never },
      streamFn: ((model: never, ctx: never, options: Record<string, unknown>) =>
        piStreamProxy(model, ctx, { ...options, proxyUrl: server.url, authToken: TOKEN })) as never,
    });
    await agent.prompt("hi");
    const last = agent.state.messages.at(-1) as { role: string; content: unknown; stopReason: string };
    expect(last).toMatchObject({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: "hello from our server" }] });
    // The reference sends its system prompt as a system message, which our stream function receives.
    expect(upstream.calls[0].context.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("a run through proxyStreamFn and createStreamProxyHandler adds the same messages as a direct run", async () => {
    const script: ScriptedResponse[] = [{ content: [toolCall("echo", { text: "hi" }, "c1")] }, { content: [text("done")] }];
    const tools = [
      {
        name: "echo",
        label: "echo",
        description: "Echoes",
        parameters: { type: "object", properties: { text: { type: "string" } } },
        execute: async (_id: string, params: { text: string }) => ({ content: [{ type: "text" as const, text: params.text }], details: {} }),
      },
    ];
    const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: defaultConvertToLlm };
    const run = async (streamFn: StreamFn) => {
      const events: AgentEvent["type"][] = [];
      const messages = await runAgentLoop([{ role: "user", content: "go", timestamp: 1 }], { messages: [], tools }, config, (e) => void events.push(e.type), undefined, streamFn);
      return { events, messages: messages.map((m) => ("timestamp" in m ? { ...m, timestamp: 0, durationMs: undefined } : m)) };
    };
    const server = await proxyServer(scriptedStreamFn(script));
    const proxied = await run(proxyStreamFn({ proxyUrl: server.url, authToken: TOKEN }));
    expect(proxied).toEqual(await run(scriptedStreamFn(script)));
    // The first is the tool-declaration system message (R30).
    expect(proxied.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
  });
});

describe("issue 16: createStreamProxyHandler refuses what it must", () => {
  it("is refused at creation without authToken or authorize (it spends the server's key)", () => {
    expect(() => createStreamProxyHandler(scriptedStreamFn([RESPONSE]))).toThrow(TypeError);
    expect(() => createStreamProxyHandler(undefined as unknown as StreamFn, { authToken: TOKEN })).toThrow(TypeError);
  });

  it("answers wrong methods, bad bodies and oversized bodies with JSON errors, never calling the provider", async () => {
    const upstream = scriptedStreamFn([RESPONSE]);
    const server = await proxyServer(upstream, { authToken: TOKEN, maxBodyBytes: 1024 });
    const post = (body: string) =>
      fetch(`${server.url}${PROXY_STREAM_PATH}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body });
    const answers = await Promise.all([
      fetch(`${server.url}${PROXY_STREAM_PATH}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
      post("not json"),
      post(JSON.stringify({ model: scriptedModel })),
      post(JSON.stringify({ model: { id: 1 }, context })),
      post(JSON.stringify({ model: scriptedModel, context: { messages: [{ role: "user", content: "x".repeat(2000), timestamp: 1 }] } })),
    ]);
    const summary = await Promise.all(answers.map(async (r) => [r.status, ((await r.json()) as { error: string }).error]));
    expect(summary).toEqual([
      [405, "Use POST"],
      [400, "The request body is not JSON"],
      [400, "Expected context: { messages: [...] }"],
      [400, "Expected model: { id, api, provider, … }"],
      [413, "Request body larger than 1024 bytes"],
    ]);
    expect(upstream.calls).toHaveLength(0);
  });

  it("a client that leaves while the handler still resolves its model: the provider is never called", async () => {
    const upstream = scriptedStreamFn([RESPONSE]);
    let resolved!: () => void;
    const resolving = new Promise<void>((resolve) => (resolved = resolve));
    const server = await proxyServer(upstream, {
      authToken: TOKEN,
      resolveModel: async (model) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        resolved();
        return model;
      },
    });
    const controller = new AbortController();
    const request = fetch(`${server.url}${PROXY_STREAM_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: scriptedModel, context }),
      signal: controller.signal,
    }).catch(() => undefined);
    setTimeout(() => controller.abort(), 50);
    await request;
    await resolving;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(upstream.calls).toHaveLength(0);
  });

  it("a stream function that throws (breaking its contract): the client's error has no credential in it", async () => {
    const throwing: StreamFn = () => {
      throw new Error("upstream refused key sk-ant-api03-secretsecretsecret for this org");
    };
    const server = await proxyServer(throwing);
    const result = await drain(streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(result.message.errorMessage).toContain("upstream refused key [redacted] for this org");
    expect(JSON.stringify(result)).not.toContain("secretsecret");
  });

  it("drops the client's baseUrl by default, and resolveModel decides which model runs", async () => {
    const upstream = scriptedStreamFn(() => RESPONSE);
    const server = await proxyServer(upstream, { authorize: (token) => token === TOKEN, resolveModel: (m) => (m.id === "forbidden" ? undefined : { ...m, name: "server's" }) });
    await drain(streamProxy({ ...scriptedModel, baseUrl: "https://attacker.example" }, context, { proxyUrl: server.url, authToken: TOKEN }));
    const refused = await drain(streamProxy({ ...scriptedModel, id: "forbidden" }, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(upstream.calls.map((c) => [c.model.name, c.model.baseUrl])).toEqual([["server's", "https://attacker.example"]]);
    expect(refused.message.errorMessage).toBe('Proxy error: Model "forbidden" is not available through this proxy');

    const defaults = scriptedStreamFn(() => RESPONSE);
    const plain = await proxyServer(defaults);
    await drain(streamProxy({ ...scriptedModel, baseUrl: "https://attacker.example" }, context, { proxyUrl: plain.url, authToken: TOKEN }));
    expect(defaults.calls[0].model).not.toHaveProperty("baseUrl");
  });

  it("takes only the wire's stream options from the body (an apiKey in it is ignored)", async () => {
    const received: Record<string, unknown>[] = [];
    const recording: StreamFn = (model, ctx, options) => {
      received.push({ ...options, signal: options.signal instanceof AbortSignal });
      return scriptedStreamFn([RESPONSE])(model, ctx, {});
    };
    const server = await proxyServer(recording);
    const res = await fetch(`${server.url}${PROXY_STREAM_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: scriptedModel, context, options: { apiKey: "sk-client", temperature: 1, onPayload: "x", maxTokens: 5 } }),
    });
    await res.text();
    expect(received).toEqual([{ temperature: 1, maxTokens: 5, signal: true }]);
  });

  it("the client going away aborts the server's upstream request", async () => {
    let upstreamSignal: AbortSignal | undefined;
    let started!: () => void;
    const upstreamStarted = new Promise<void>((resolve) => (started = resolve));
    const hanging: StreamFn = (model, ctx, options) => {
      upstreamSignal = options.signal;
      started();
      return scriptedStreamFn([{ content: [text("slow answer")], delayMs: 60_000 }])(model, ctx, options);
    };
    const server = await proxyServer(hanging);
    const controller = new AbortController();
    const stream = streamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN, signal: controller.signal });
    await upstreamStarted;
    const aborted = new Promise<void>((resolve) => upstreamSignal!.addEventListener("abort", () => resolve(), { once: true }));
    controller.abort();
    expect((await stream.result()).stopReason).toBe("aborted");
    await aborted;
    expect(upstreamSignal!.aborted).toBe(true);
  });

  it("a stream function that throws despite its contract still gives the client a terminal error event", async () => {
    const server = await proxyServer(() => {
      throw new Error("provider exploded");
    });
    const result = await drain(referenceStreamProxy(scriptedModel, context, { proxyUrl: server.url, authToken: TOKEN }));
    expect(result.message).toMatchObject({ stopReason: "error", errorMessage: "provider exploded" });
  });
});
