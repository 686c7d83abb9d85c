/**
 * SPEC R110, issue 37: `--otel` exports the session's spans by OTLP/HTTP to the endpoint the
 * standard variables name, together with `--inspect` and `--trace` (observers compose). The
 * receiver is a local HTTP server on port 0 that decodes the OpenTelemetry JavaScript exporter's
 * real wire (OTLP/HTTP JSON).
 */
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { runCli } from "../../src/node/cli/app.js";
import { OTEL_INSTALL_HINT, otlpHeaders, startOtelExport, tracesUrl } from "../../src/node/cli/otel.js";
import { checkTrace, fakeIO, makeRepo } from "./fixture.js";

let root: string;
let cleanup: () => void;
beforeAll(() => ({ root, cleanup } = makeRepo()));
afterAll(() => cleanup());

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP traces receiver: every span of every request, with the request's path and headers. */
async function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const requests: { url: string; contentType: string; auth: string | undefined; service: unknown }[] = [];
  const server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    for (const resourceSpans of body.resourceSpans) {
      const service = resourceSpans.resource.attributes.find((a: { key: string }) => a.key === "service.name")?.value.stringValue;
      requests.push({ url: request.url!, contentType: String(request.headers["content-type"]), auth: request.headers.authorization, service });
      for (const scope of resourceSpans.scopeSpans) spans.push(...scope.spans);
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { port, spans, requests, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : (value.stringValue ?? value.intValue ?? value.boolValue);
};

describe("R110: --otel", () => {
  it("the standard variables: the traces endpoint, then the base endpoint's /v1/traces; headers URL-decoded", () => {
    expect(tracesUrl({})).toBe("http://localhost:4318/v1/traces");
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toBe("http://collector:4318/v1/traces");
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b/traces" })).toBe("http://b/traces");
    expect(otlpHeaders({ OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc, x-team=ai", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=agents,broken" })).toEqual({
      authorization: "Bearer abc",
      "x-team": "agents",
    });
  });

  it("without the SDK installed: an error naming the packages to install, never a crash", async () => {
    const missing = Object.assign(new Error("Cannot find package '@opentelemetry/sdk-trace-base' imported from cli\nmore"), { code: "ERR_MODULE_NOT_FOUND" });
    expect(await startOtelExport({}, [], () => Promise.reject(missing))).toEqual({
      error: `--otel needs the OpenTelemetry SDK (Cannot find package '@opentelemetry/sdk-trace-base' imported from cli): ${OTEL_INSTALL_HINT}`,
    });
  });

  it("--otel --inspect --trace together: the offline demo's spans arrive at the receiver, the trace and the inspector get the session too", async () => {
    const receiver = await otlpReceiver();
    const relay = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(relay, "listening");
    const relayMessages: string[] = [];
    relay.on("connection", (socket) => socket.on("message", (data) => relayMessages.push(data.toString())));
    const traceDir = mkdtempSync(path.join(tmpdir(), "xal-otel-trace-"));
    const tracePath = path.join(traceDir, "session.jsonl");
    try {
      const { io, stdout } = fakeIO(root, {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20t0ken", OTEL_SERVICE_NAME: "demo-agent" },
      });
      const relayPort = (relay.address() as AddressInfo).port;
      io.inspector = { url: `ws://127.0.0.1:${relayPort}`, startRelay: () => Promise.reject(new Error("must not start one")) };
      expect(await runCli(["--offline", "--otel", "--inspect=stately", "--trace", tracePath, "summarize this repository"], io)).toBe(0);
      expect(stdout()).toContain(`otel: exporting the session's spans by OTLP/HTTP to http://127.0.0.1:${receiver.port}/v1/traces`);

      // The exporter's wire: OTLP/HTTP JSON on /v1/traces, with the configured headers and service.
      expect(receiver.requests.length).toBeGreaterThan(0);
      expect(new Set(receiver.requests.map((r) => JSON.stringify([r.url, r.contentType, r.auth, r.service])))).toEqual(
        new Set([JSON.stringify(["/v1/traces", "application/json", "Bearer t0ken", "demo-agent"])]),
      );
      // The session's run: one run span, its turns, requests and the demo's tool calls under them.
      const spans = receiver.spans;
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const runs = spans.filter((span) => span.name === "invoke_agent xstate-agent");
      expect(runs.length).toBeGreaterThanOrEqual(1);
      const run = runs[0]!;
      expect(attribute(run, "xstate_agent_loop.end_reason")).toBe("completed");
      const names = new Set(spans.filter((span) => span.traceId === run.traceId).map((span) => span.name));
      // The demo: parallel reads, a write that waits for approval (answered by the demo), the Agent's queue polls.
      expect([...names].sort()).toEqual([
        "await_approval",
        "chat offline-demo",
        "execute_tool list_files",
        "execute_tool read_file",
        "execute_tool search_text",
        "execute_tool write_file",
        "hook getFollowUpMessages",
        "hook getSteeringMessages",
        "invoke_agent xstate-agent",
        "turn",
      ]);
      for (const tool of spans.filter((span) => span.name.startsWith("execute_tool"))) {
        const turn = byId.get(tool.parentSpanId!)!;
        expect(turn.name).toBe("turn");
        expect(byId.get(turn.parentSpanId!)?.name).toBe("invoke_agent xstate-agent");
      }
      const chat = spans.find((span) => span.name.startsWith("chat "))!;
      expect(attribute(chat, "gen_ai.operation.name")).toBe("chat");
      // The Agent's session (the CLI's durable session id) is the conversation.
      expect(attribute(chat, "gen_ai.conversation.id")).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
      expect(attribute(run, "gen_ai.conversation.id")).toBe(attribute(chat, "gen_ai.conversation.id"));

      // The other observers saw the same session.
      const trace = checkTrace(readFileSync(tracePath, "utf8"));
      expect(trace.states.some((record) => record.actor === "run" && record.status === "done")).toBe(true);
      expect(relayMessages.length).toBeGreaterThan(10);
    } finally {
      await receiver.stop();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      rmSync(traceDir, { recursive: true, force: true });
    }
  });
});
