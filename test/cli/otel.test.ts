/**
 * SPEC R110, issue 37: `--otel` exports the session's spans and metrics by OTLP/HTTP to the endpoint the
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
import { OTEL_INSTALL_HINT, metricsUrl, otlpHeaders, startOtelExport, tracesUrl } from "../../src/node/cli/otel.js";
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

interface OtlpPoint {
  attributes: { key: string; value: Record<string, unknown> }[];
  count?: number | string;
  sum?: number;
  asInt?: number | string;
  asDouble?: number;
}
interface OtlpMetric {
  name: string;
  unit: string;
  histogram?: { dataPoints: OtlpPoint[] };
  sum?: { dataPoints: OtlpPoint[] };
}

/** An OTLP/HTTP receiver (traces and metrics): every span and metric of every request, with the request's path and headers. */
async function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const metrics: OtlpMetric[] = [];
  const requests: { url: string; contentType: string; auth: string | undefined; service: unknown }[] = [];
  const serviceOf = (resource: { attributes: { key: string; value: { stringValue?: string } }[] }) => resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
  const server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const seen = (service: unknown) => requests.push({ url: request.url!, contentType: String(request.headers["content-type"]), auth: request.headers.authorization, service });
    for (const resourceSpans of body.resourceSpans ?? []) {
      seen(serviceOf(resourceSpans.resource));
      for (const scope of resourceSpans.scopeSpans) spans.push(...scope.spans);
    }
    for (const resourceMetrics of body.resourceMetrics ?? []) {
      seen(serviceOf(resourceMetrics.resource));
      for (const scope of resourceMetrics.scopeMetrics) metrics.push(...scope.metrics);
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { port, spans, metrics, requests, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const attribute = (span: Pick<OtlpSpan, "attributes">, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : (value.stringValue ?? value.intValue ?? value.boolValue);
};

describe("R110: --otel", () => {
  it("the standard variables: each signal's endpoint, then the base endpoint's /v1/traces, /v1/metrics; headers URL-decoded", () => {
    expect(tracesUrl({})).toBe("http://localhost:4318/v1/traces");
    expect(metricsUrl({})).toBe("http://localhost:4318/v1/metrics");
    expect(metricsUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toBe("http://collector:4318/v1/metrics");
    expect(metricsUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b/traces", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://c/m" })).toBe("http://c/m");
    expect(otlpHeaders({ OTEL_EXPORTER_OTLP_HEADERS: "x-team=ai", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=agents", OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-team=meters" }, "metrics")).toEqual({ "x-team": "meters" });
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

  it("--otel --inspect --trace together: the offline demo's spans and metrics arrive at the receiver, the trace and the inspector get the session too", async () => {
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
      expect(stdout()).toContain(`otel: exporting the session's spans by OTLP/HTTP to http://127.0.0.1:${receiver.port}/v1/traces, its metrics to http://127.0.0.1:${receiver.port}/v1/metrics`);

      // The exporters' wire: OTLP/HTTP JSON on /v1/traces and /v1/metrics, with the configured headers and service.
      expect(new Set(receiver.requests.map((r) => JSON.stringify([r.url, r.contentType, r.auth, r.service])))).toEqual(
        new Set(["/v1/traces", "/v1/metrics"].map((url) => JSON.stringify([url, "application/json", "Bearer t0ken", "demo-agent"]))),
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

      // The metrics, collected once more as the session ended (the periodic export is a minute away):
      // tokens per request by type, durations of requests and tool calls, the run's end.
      const points = (name: string) => receiver.metrics.filter((metric) => metric.name === name).flatMap((metric) => (metric.histogram ?? metric.sum)!.dataPoints);
      const by = (point: OtlpPoint, ...keys: string[]) => keys.map((key) => attribute(point, key)).join(" ");
      expect(new Set(points("gen_ai.client.token.usage").map((point) => by(point, "gen_ai.operation.name", "gen_ai.request.model", "gen_ai.token.type")))).toEqual(
        new Set(["chat offline-demo input", "chat offline-demo output"]),
      );
      expect(new Set(points("gen_ai.client.operation.duration").map((point) => by(point, "gen_ai.operation.name", "gen_ai.tool.name")))).toEqual(
        new Set(["chat ", "execute_tool list_files", "execute_tool read_file", "execute_tool search_text", "execute_tool write_file"]),
      );
      const requests = points("gen_ai.client.operation.duration").filter((point) => attribute(point, "gen_ai.operation.name") === "chat");
      expect(requests.reduce((sum, point) => sum + Number(point.count), 0)).toBe(spans.filter((span) => span.name.startsWith("chat ")).length);
      expect(points("xstate_agent_loop.runs").map((point) => [by(point, "xstate_agent_loop.end_reason"), Number(point.asInt ?? point.asDouble)])).toEqual([["completed", runs.length]]);

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
