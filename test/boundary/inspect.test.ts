/**
 * Issue 15 item 7: the inspector's sanitizer and the trace recorder never throw, whatever tool
 * `details` hold, and redact credentials by key name, in property names and in image data.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { InspectionEvent } from "xstate";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent } from "../../src/index.js";
import { connectWebSocketInspector, REDACTED, sanitizeValue, sanitizingObserver } from "../../src/inspect/index.js";
import { createTraceRecorder } from "../../src/trace/index.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";
import { watchCrashes, type CrashWatch } from "./crash-watch.js";

let crashes: CrashWatch;
beforeEach(() => void (crashes = watchCrashes()));
afterEach(async () => {
  const seen = await crashes.settle();
  crashes.stop();
  expect(seen, "uncaught exceptions / unhandled rejections").toEqual([]);
});

function hostileDetails() {
  const { proxy, revoke } = Proxy.revocable({ draft: true }, {});
  revoke();
  return {
    revoked: proxy,
    getter: Object.defineProperty({}, "boom", { enumerable: true, get: () => { throw new Error("getter"); } }),
    json: { toJSON: () => { throw new Error("toJSON"); } },
    endless: { toJSON: function next(): unknown { return { toJSON: next }; } },
  };
}

/** Runs one tool call whose result carries hostile details, with `inspect` attached. */
async function runWithHostileDetails(inspect: ((event: InspectionEvent) => void) | { next: (event: InspectionEvent) => void }) {
  const events: AgentEvent[] = [];
  const hostile = tool("hostile", async () => ok("done", { details: hostileDetails() }));
  const messages = await runAgentLoop(
    [user("hi")],
    { messages: [], tools: [hostile] },
    baseConfig(),
    (event) => void events.push(event),
    undefined,
    scriptedStreamFn([{ content: [toolCall("hostile")] }, { content: [text("ok")] }]),
    { inspect: inspect as never },
  );
  return { events, messages };
}

describe("issue 15 item 7: sanitizeValue never throws", () => {
  it("revoked Proxy, throwing getter, throwing or endless toJSON become markers", () => {
    const copy = sanitizeValue({ details: hostileDetails() }, { summarize: false }) as { details: Record<string, unknown> };
    expect(copy.details).toEqual({ revoked: "[unreadable]", getter: { boom: "[unreadable]" }, json: "[unreadable]", endless: "[…]" });
  });
  it("redacts secret key names it used to miss, case-insensitive, - and _ variants", () => {
    const value = {
      token: "t0k3n-value",
      access_token: "at",
      headers: { "X-Auth-Token": "xt", Cookie: "c=1", authorization: "Bearer abc" },
      private_key: "-----BEGIN",
      env: { ANTHROPIC_API_KEY: "k", aws_secret_access_key: "s" },
      maxTokens: 100,
    };
    expect(sanitizeValue(value)).toEqual({
      token: REDACTED,
      access_token: REDACTED,
      headers: { "X-Auth-Token": REDACTED, Cookie: REDACTED, authorization: REDACTED },
      private_key: REDACTED,
      env: { ANTHROPIC_API_KEY: REDACTED, aws_secret_access_key: REDACTED },
      maxTokens: 100,
    });
  });
  it("issue 35: OpenAI project keys and Google API keys in text are redacted, as Anthropic keys are", () => {
    const openai = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    const google = "AIzaSyA1234567890abcdefghijklmnopqrstuv";
    const out = JSON.stringify(sanitizeValue({ note: `keys ${openai} and ${google}.`, headers: { "x-goog-api-key": "g" } }));
    expect(out).not.toContain(openai);
    expect(out).not.toContain(google);
    expect(out).toBe(JSON.stringify({ note: `keys ${REDACTED} and ${REDACTED}.`, headers: { "x-goog-api-key": REDACTED } }));
  });
  it("a secret used as a property name is redacted", () => {
    const key = "sk-ant-api03-abcdefghijklmnop";
    const out = JSON.stringify(sanitizeValue({ byKey: { [key]: 1 } }));
    expect(out).not.toContain(key);
    expect(out).toContain(REDACTED);
  });
  it("image data starting with < is replaced by its size unless it is exactly the sanitized form", () => {
    const sneaky = `<${"sk-ant-api03-abcdefghijklmnop"} ${"A".repeat(5_000)}>`;
    const out = sanitizeValue({ type: "image", data: sneaky, mimeType: "image/png" }) as { data: string };
    expect(out.data).toMatch(/^<\d+ bytes>$/);
    // Idempotent: sanitizing the sanitized form keeps it.
    expect(sanitizeValue(out)).toEqual(out);
  });
});

describe("issue 15 item 7: observers never throw out of a run", () => {
  it("sanitizingObserver over a run whose tool details hold a revoked Proxy, a throwing getter and toJSON", async () => {
    const seen: InspectionEvent[] = [];
    const { events } = await runWithHostileDetails(sanitizingObserver((event) => void seen.push(event)));
    expect(events.at(-1)?.type).toBe("agent_end");
    expect(seen.length).toBeGreaterThan(0);
    expect(JSON.stringify(seen.map((event) => ("snapshot" in event ? event.snapshot : null)))).toContain("[unreadable]");
  });
  it("a target observer that throws does not break the run", async () => {
    const { events } = await runWithHostileDetails(sanitizingObserver(() => { throw new Error("observer bug"); }));
    expect(events.at(-1)?.type).toBe("agent_end");
  });
  it("connectWebSocketInspector streams the run (hostile details as markers) and the process survives", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(server, "listening");
    const raw: string[] = [];
    server.on("connection", (connection) => connection.on("message", (data) => raw.push(data.toString())));
    const inspect = connectWebSocketInspector({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}` });
    await once(server, "connection");
    const { events } = await runWithHostileDetails(inspect);
    await inspect.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(events.at(-1)?.type).toBe("agent_end");
    expect(raw.length).toBeGreaterThan(0);
    expect(raw.join("\n")).toContain("[unreadable]");
  });
});

describe("issue 15 item 7: the trace recorder", () => {
  it("without `secrets` still redacts secret key names (details included) and never throws", async () => {
    const lines: string[] = [];
    const recorder = createTraceRecorder({ write: (line) => void lines.push(line) });
    const leaky = tool("leaky", async () =>
      ok("done", { details: { ...hostileDetails(), headers: { "x-auth-token": "hunter2-token", cookie: "sid=hunter2" }, ANTHROPIC_API_KEY: "hunter2-key", log: "sent Bearer hunter2hunter2" } }),
    );
    await runAgentLoop(
      [user("hi")],
      { messages: [], tools: [leaky] },
      baseConfig(),
      (event) => recorder.recordEvent(event),
      undefined,
      scriptedStreamFn([{ content: [toolCall("leaky", { note: "plain" })] }, { content: [text("ok")] }]),
      { inspect: recorder.inspect },
    );
    const trace = lines.join("");
    expect(trace).not.toContain("hunter2");
    expect(trace).toContain("[redacted]");
    expect(trace).toContain("[unreadable]");
    const events = lines.map((line) => JSON.parse(line) as { type: string; event?: { type: string } }).filter((r) => r.type === "event");
    expect(events.at(-1)).toMatchObject({ event: { type: "agent_end" } });
  });
});
