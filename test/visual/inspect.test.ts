import { once } from "node:events";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import type { InspectionEvent } from "xstate";
import { runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool, type Message } from "../../src/index.js";
import {
  connectBrowserInspector,
  connectWebSocketInspector,
  REDACTED,
  sanitizeInspectionEvent,
  sanitizeStatelyEvent,
  sanitizeValue,
  sanitizingObserver,
  summarizeMessages,
} from "../../src/inspect/index.js";

const SECRET = "sk-ant-TEST-SECRET-123";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function slowTool(name: string, ms: number, details: unknown): AgentTool {
  return {
    name,
    label: name,
    description: `The ${name} tool`,
    parameters: { type: "object", properties: {} },
    async execute() {
      await sleep(ms);
      return { content: [{ type: "text", text: `${name} done` }], details };
    },
  };
}

interface WireMessage {
  type: string;
  name?: string;
  sessionId: string;
  parentId?: string;
  rootId?: string;
  event?: { type: string; [key: string]: unknown };
  snapshot?: { status?: string; value?: unknown; context?: Record<string, unknown> };
}

describe("WebSocket inspector", () => {
  it("streams actor, event and snapshot messages of the run and its tool-call actors, without the API key", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const raw: string[] = [];
    let socket: WebSocket | undefined;
    server.on("connection", (connection) => {
      socket = connection;
      connection.on("message", (data) => raw.push(data.toString()));
    });

    const inspect = connectWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
    // Connected before the run, so nothing waits in the inspector's 200-event buffer.
    await once(server, "connection");
    const closed = once(socket!, "close");

    const stream = scriptedStreamFn([
      { content: [text(`calling two tools (never echo ${SECRET})`), toolCall("alpha", { apiKey: SECRET }), toolCall("beta", {})] },
      { content: [text("done")] },
    ]);
    // Defensive: a tool that leaks the key into its details must not leak it to the inspector.
    const tools = [
      slowTool("alpha", 40, { headers: { authorization: `Bearer ${SECRET}`, "x-api-key": SECRET }, log: `used ${SECRET}` }),
      slowTool("beta", 80, { big: "x".repeat(5_000) }),
    ];
    let keyRequests = 0;
    const messages = await runAgentLoop(
      [{ role: "user", content: "hi", timestamp: 1 }],
      { messages: [], tools },
      {
        model: scriptedModel,
        convertToLlm: (all) => all as Message[],
        apiKey: SECRET,
        getApiKey: async () => {
          keyRequests++;
          return SECRET;
        },
      },
      () => {},
      undefined,
      stream,
      { inspect },
    );
    expect(messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
    expect(keyRequests).toBe(2);
    expect(stream.calls.every((call) => call.hadApiKey)).toBe(true);

    await inspect.close();
    await closed;
    server.close();

    const wire = raw.map((line) => JSON.parse(line) as WireMessage);
    const types = new Set(wire.map((message) => message.type));
    expect(types).toEqual(new Set(["@xstate.actor", "@xstate.event", "@xstate.snapshot"]));

    const actors = wire.filter((message) => message.type === "@xstate.actor");
    const run = actors.find((actor) => actor.name === "run" && actor.parentId === undefined);
    expect(run, "the run actor").toBeDefined();
    for (const id of ["tool:0", "tool:1"]) {
      const tool = actors.find((actor) => actor.name === id);
      expect(tool, `spawned actor ${id}`).toBeDefined();
      expect(tool!.parentId).toBe(run!.sessionId);
      const snapshots = wire.filter((message) => message.type === "@xstate.snapshot" && message.sessionId === tool!.sessionId);
      expect(snapshots.map((message) => message.snapshot!.value)).toContain("executing");
      expect(snapshots.at(-1)!.snapshot!.status).toBe("done");
      const received = wire.filter((message) => message.type === "@xstate.event" && message.sessionId === tool!.sessionId);
      expect(received.map((message) => message.event!.type)).toContain("step.executeToolCall.done");
    }
    const runSnapshots = wire.filter((message) => message.type === "@xstate.snapshot" && message.sessionId === run!.sessionId);
    expect(runSnapshots.at(-1)!.snapshot).toMatchObject({ status: "done", value: "done" });
    const runEvents = wire.filter((message) => message.type === "@xstate.event" && message.sessionId === run!.sessionId);
    expect(runEvents.map((message) => message.event!.type)).toEqual(expect.arrayContaining(["xstate.done.actor.tool:0", "xstate.done.actor.tool:1"]));

    // Sanitized: the transcript is a summary, tool details are cut.
    const context = runSnapshots.at(-1)!.snapshot!.context!;
    expect(context.messages).toMatchObject({ count: messages.length, last: { role: "assistant", preview: "done" } });
    expect(JSON.stringify(wire).includes("x".repeat(1_000))).toBe(false);

    // The key appears nowhere, in any form.
    for (const line of raw) {
      expect(line).not.toContain(SECRET);
      expect(line).not.toContain("TEST-SECRET");
    }
    expect(raw.join("\n")).toContain(REDACTED);
  });

  it("buffers events until the socket opens, and close() waits to deliver them", async () => {
    // The handshake is held back until the run is over: everything goes through the buffer.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = new WebSocketServer({
      host: "127.0.0.1",
      port: 0,
      verifyClient: (_info: unknown, done: (ok: boolean) => void) => void held.then(() => done(true)),
    });
    await once(server, "listening");
    const raw: string[] = [];
    server.on("connection", (connection) => connection.on("message", (data) => raw.push(data.toString())));
    const inspect = connectWebSocketInspector({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}` });
    await runAgentLoop(
      [{ role: "user", content: "hi", timestamp: 1 }],
      { messages: [], tools: [slowTool("alpha", 5, {}), slowTool("beta", 5, {})] },
      { model: scriptedModel, convertToLlm: (all) => all as Message[] },
      () => {},
      undefined,
      scriptedStreamFn([{ content: [toolCall("alpha", {}), toolCall("beta", {})] }, { content: [text("ok")] }]),
      { inspect },
    );
    expect(raw).toEqual([]);
    const closing = inspect.close();
    release();
    await closing;
    await sleep(50);
    server.close();
    const names = raw.map((line) => JSON.parse(line) as WireMessage).filter((m) => m.type === "@xstate.actor").map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(["run", "tool:0", "tool:1"]));
    expect(raw.length).toBeGreaterThan(20);
  });

  const ping = { type: "@xstate.event", actorRef: { sessionId: "x:0" }, rootId: "x:0", event: { type: "PING" } } as unknown as InspectionEvent;

  it("closes cleanly when the server accepts the connection but never answers the handshake", async () => {
    const server = createServer();
    const accepted: Socket[] = [];
    // Read (and ignore) the handshake, so the peer's close is seen.
    server.on("connection", (socket) => accepted.push(socket.resume()));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const inspect = connectWebSocketInspector({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}` });
      inspect.next(ping);
      await vi.waitUntil(() => accepted.length === 1);
      const peerClosed = once(accepted[0], "close");
      // Still connecting after the timeout: close() gives up waiting and tears the socket down.
      await expect(inspect.close({ timeoutMs: 200 })).resolves.toBeUndefined();
      await peerClosed;
      expect(accepted[0].destroyed).toBe(true);
      // Closed: later events are dropped before the adapter, and a second close() is a no-op.
      const forwarded = vi.spyOn(inspect.inspector.inspect, "next");
      inspect.next(ping);
      expect(forwarded).not.toHaveBeenCalled();
      await expect(inspect.close()).resolves.toBeUndefined();
      expect(accepted).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it("closes cleanly when the connection is refused", async () => {
    const inspect = connectWebSocketInspector({ url: "ws://127.0.0.1:9" });
    const forwarded = vi.spyOn(inspect.inspector.inspect, "next");
    inspect.next(ping);
    expect(forwarded).toHaveBeenCalledTimes(1);
    await expect(inspect.close({ timeoutMs: 200 })).resolves.toBeUndefined();
    inspect.next(ping);
    expect(forwarded).toHaveBeenCalledTimes(1);
    await expect(inspect.close()).resolves.toBeUndefined();
  });

  it("leaves nothing that keeps the process alive: the reconnect timer after a refused connection is unref'd and cleared by close()", async () => {
    // @statelyai/inspect waits 5 s after a socket error before it reconnects: record that timer.
    const timers: ReturnType<typeof setTimeout>[] = [];
    const original = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((handler: () => void, ms?: number) => {
      const timer = original(handler, ms);
      if (ms === 5_000) timers.push(timer);
      return timer;
    }) as typeof setTimeout);
    try {
      const inspect = connectWebSocketInspector({ url: "ws://127.0.0.1:9" });
      for (let waited = 0; timers.length === 0 && waited < 2_000; waited += 10) await new Promise((resolve) => original(resolve, 10));
      expect(timers).toHaveLength(1);
      expect(timers[0]!.hasRef()).toBe(false);
      const cleared = vi.spyOn(globalThis, "clearTimeout");
      await inspect.close();
      expect(cleared).toHaveBeenCalledWith(timers[0]);
      cleared.mockRestore();
    } finally {
      spy.mockRestore();
    }
  });
});

describe("browser inspector", () => {
  it("posts sanitized events to the inspector window", async () => {
    const posted: { type: string; [key: string]: unknown }[] = [];
    const listeners: ((event: { data: unknown }) => void)[] = [];
    const inspectorWindow = { postMessage: (data: { type: string }) => void posted.push(data) };
    const opened: string[] = [];
    const fakeWindow = {
      open: (url: string) => (opened.push(url), inspectorWindow),
      addEventListener: (_type: string, listener: (event: { data: unknown }) => void) => void listeners.push(listener),
    } as unknown as Window;
    const inspect = connectBrowserInspector({ window: fakeWindow, url: "http://127.0.0.1:1/inspect" });
    expect(opened).toEqual(["http://127.0.0.1:1/inspect"]);
    for (const listener of listeners) listener({ data: { type: "@statelyai.connected" } });

    await runAgentLoop(
      [{ role: "user", content: `key ${SECRET}`, timestamp: 1 }],
      { messages: [], tools: [slowTool("alpha", 5, { token: SECRET })] },
      { model: scriptedModel, convertToLlm: (all) => all as Message[], apiKey: SECRET },
      () => {},
      undefined,
      scriptedStreamFn([{ content: [toolCall("alpha", {})] }, { content: [text("ok")] }]),
      { inspect },
    );
    await inspect.close();

    expect(new Set(posted.map((event) => event.type))).toEqual(
      new Set(["@xstate.actor", "@xstate.event", "@xstate.snapshot", "@statelyai.disconnected"]),
    );
    expect(posted.some((event) => event.type === "@xstate.actor" && event.name === "tool:0")).toBe(true);
    expect(JSON.stringify(posted)).not.toContain("TEST-SECRET");
  });

  it("does nothing without a window", async () => {
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      const inspect = connectBrowserInspector();
      inspect.next({ type: "@xstate.event", actorRef: { sessionId: "x" }, rootId: "x", event: { type: "A" } } as unknown as InspectionEvent);
      await inspect.close();
    } finally {
      console.error = original;
    }
    expect(errors).toHaveLength(1);
  });
});

describe("sanitizer", () => {
  const history = [
    { role: "system", content: "prompt", timestamp: 1 },
    { role: "user", content: `my key is ${SECRET}`, timestamp: 2 },
    { role: "assistant", content: [{ type: "text", text: "A long answer ".repeat(20) }, { type: "toolCall", id: "t", name: "read", arguments: {} }], timestamp: 3 },
  ];

  it("summarizes message histories as count + last role/preview", () => {
    const summary = summarizeMessages(history);
    expect(summary.count).toBe(3);
    expect(summary.last.role).toBe("assistant");
    expect(summary.last.preview.length).toBeLessThanOrEqual(80);
    expect(summary.last.preview.startsWith("A long answer")).toBe(true);
    expect(sanitizeValue({ messages: history, newMessages: [] })).toEqual({ messages: summary, newMessages: [] });
    expect(sanitizeValue([history[1]])).toEqual({ count: 1, last: { role: "user", preview: `my key is ${REDACTED}` } });
  });

  it("truncates tool details and long strings, replaces image data by its size", () => {
    const out = sanitizeValue({
      result: { content: [{ type: "image", data: "QUJDRA==", mimeType: "image/png" }], details: { blob: "z".repeat(400) } },
      text: "y".repeat(5_000),
    }) as { result: { content: { data: string }[]; details: unknown }; text: string };
    expect(out.result.content[0].data).toBe("<4 bytes>");
    expect(typeof out.result.details).toBe("string");
    expect((out.result.details as string).length).toBeLessThanOrEqual(200);
    expect(out.text.length).toBeLessThanOrEqual(1_000);
    expect(sanitizeValue({ details: { ok: true } })).toEqual({ details: { ok: true } });
  });

  it("redacts secrets by key and by shape, even with summarizing off", () => {
    const input = {
      apiKey: "anything",
      headers: { Authorization: "Bearer abcdefghijklmnop", "X-Api-Key": "k", accept: "json" },
      nested: [{ note: `token ${SECRET} here` }, `sk-proj-${"a".repeat(30)}`],
      mine: "hunter2-long-secret",
    };
    for (const summarize of [true, false]) {
      const out = sanitizeValue(input, { summarize, secrets: ["hunter2-long-secret"] });
      expect(out).toEqual({
        apiKey: REDACTED,
        headers: { Authorization: REDACTED, "X-Api-Key": REDACTED, accept: "json" },
        nested: [{ note: `token ${REDACTED} here` }, REDACTED],
        mine: REDACTED,
      });
    }
  });

  it("is idempotent and JSON-safe (cycles, functions, refs, bigint)", () => {
    const cyclic: Record<string, unknown> = { n: 1n, f: () => 1, when: new Date(0), set: new Set([1]), ref: { toJSON: () => ({ xstate$$type: 1, id: "effects" }) } };
    cyclic.self = cyclic;
    const value = { context: { messages: history, cyclic, details: { blob: "z".repeat(400) }, text: "w".repeat(3_000) } };
    const once = sanitizeValue(value);
    expect(sanitizeValue(once)).toEqual(once);
    expect(() => JSON.stringify(once)).not.toThrow();
    expect((once as { context: { cyclic: Record<string, unknown> } }).context.cyclic).toEqual({
      n: "1",
      when: "1970-01-01T00:00:00.000Z",
      set: [1],
      ref: { xstate$$type: 1, id: "effects" },
      self: "[Circular]",
    });
  });

  it("sanitizes XState inspection events and keeps the actor refs", () => {
    const actorRef = { id: "tool:0", sessionId: "x:1" };
    const event = {
      type: "@xstate.snapshot",
      actorRef,
      rootId: "x:0",
      event: { type: "effect.run", job: { name: "convertToLlm", input: { messages: history } } },
      snapshot: { status: "active", value: "executing", context: { messages: history, apiKey: SECRET }, children: { "tool:0": actorRef }, machine: {} },
    } as unknown as InspectionEvent;
    const out = sanitizeInspectionEvent(event) as unknown as { actorRef: unknown; event: { job: { input: { messages: unknown } } }; snapshot: Record<string, unknown> };
    expect(out.actorRef).toBe(actorRef);
    expect(out.event.job.input.messages).toMatchObject({ count: 3 });
    expect(out.snapshot).toEqual({
      status: "active",
      value: "executing",
      context: { messages: summarizeMessages(history), apiKey: REDACTED },
      children: { "tool:0": { id: "tool:0" } },
    });
    expect(JSON.stringify(out.snapshot)).not.toContain("TEST-SECRET");

    const seen: InspectionEvent[] = [];
    sanitizingObserver((e) => seen.push(e)).next(event);
    expect(seen[0]).toMatchObject({ snapshot: { context: { apiKey: REDACTED } } });
  });

  it("sanitizes Stately wire events, definition included", () => {
    const wire = {
      type: "@xstate.actor",
      definition: JSON.stringify({ id: "run", note: SECRET }),
      snapshot: { status: "active", input: { apiKey: SECRET }, output: history, context: {} },
      sessionId: "x:0",
    };
    const out = sanitizeStatelyEvent(wire);
    expect(JSON.stringify(out)).not.toContain("TEST-SECRET");
    expect(out.snapshot).toEqual({ status: "active", context: {}, input: { apiKey: REDACTED }, output: summarizeMessages(history) });
    expect(sanitizeStatelyEvent(out)).toEqual(out);
  });
});
