/**
 * `--otel`: the session's spans and metrics (SPEC R110) exported by OTLP/HTTP, configured by the
 * standard environment variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (+
 * `/v1/traces`, `/v1/metrics`; default http://localhost:4318), `OTEL_EXPORTER_OTLP_HEADERS` and
 * the per-signal `…_TRACES_HEADERS` / `…_METRICS_HEADERS` (`k=v,k2=v2`), `OTEL_METRIC_EXPORT_INTERVAL`
 * (ms, default 60000: the session's end exports what is left in any case), and `OTEL_SERVICE_NAME`
 * (default `xstate-agent`); the exporters read the others (timeout, compression) themselves.
 *
 * The SDK and the exporter are optional peer dependencies, loaded only for `--otel`: without them
 * the CLI says what to install and runs without telemetry.
 */
import type { OtelObserver } from "../../otel/index.js";

export const OTEL_INSTALL_HINT =
  "npm install @opentelemetry/api @opentelemetry/sdk-trace-base @opentelemetry/resources @opentelemetry/exporter-trace-otlp-http @opentelemetry/sdk-metrics @opentelemetry/exporter-metrics-otlp-http";

export interface OtelExport {
  observer: OtelObserver;
  /** Where the spans go. */
  url: string;
  /** Where the metrics go. */
  metricsUrl: string;
  /** Exports what is left (spans and a last collection of the metrics) and stops (at the end of the session). */
  shutdown(): Promise<void>;
}

type Signal = "traces" | "metrics";
const SIGNAL_VARIABLE = { traces: "TRACES", metrics: "METRICS" } as const;

/** A signal's endpoint the standard variables name: its own variable as is, else the base one's `/v1/{signal}`. */
function signalUrl(env: Record<string, string | undefined>, signal: Signal): string {
  const own = env[`OTEL_EXPORTER_OTLP_${SIGNAL_VARIABLE[signal]}_ENDPOINT`]?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || "http://localhost:4318";
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/** The traces endpoint the standard variables name. */
export const tracesUrl = (env: Record<string, string | undefined>): string => signalUrl(env, "traces");
/** The metrics endpoint the standard variables name. */
export const metricsUrl = (env: Record<string, string | undefined>): string => signalUrl(env, "metrics");

/** `k=v,k2=v2` (values URL-encoded), the signal's variable's entries over the general one's. */
export function otlpHeaders(env: Record<string, string | undefined>, signal: Signal = "traces"): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const list of [env.OTEL_EXPORTER_OTLP_HEADERS, env[`OTEL_EXPORTER_OTLP_${SIGNAL_VARIABLE[signal]}_HEADERS`]]) {
    for (const entry of (list ?? "").split(",")) {
      const at = entry.indexOf("=");
      if (at <= 0) continue;
      try {
        headers[decodeURIComponent(entry.slice(0, at).trim())] = decodeURIComponent(entry.slice(at + 1).trim());
      } catch {
        // A malformed entry is skipped, as the SDK does.
      }
    }
  }
  return headers;
}

const loadModules = () =>
  Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/sdk-metrics"),
    import("@opentelemetry/exporter-metrics-otlp-http"),
    import("../../otel/index.js"),
  ]);

/** `OTEL_METRIC_EXPORT_INTERVAL` in ms (default 60000, as the SDK's); the reader wants its export timeout no longer. */
function exportTiming(env: Record<string, string | undefined>): { exportIntervalMillis: number; exportTimeoutMillis: number } {
  const ms = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  const interval = Number.isFinite(ms) && ms > 0 ? ms : 60_000;
  return { exportIntervalMillis: interval, exportTimeoutMillis: Math.min(30_000, interval) };
}

/** Starts the export, or says why it cannot (the packages are missing). `load` is for tests. */
export async function startOtelExport(
  env: Record<string, string | undefined>,
  secrets: readonly string[],
  load: () => Promise<unknown> = loadModules,
): Promise<OtelExport | { error: string }> {
  let modules: Awaited<ReturnType<typeof loadModules>>;
  try {
    modules = (await load()) as typeof modules;
  } catch (error) {
    return { error: `--otel needs the OpenTelemetry SDK (${(error as Error).message.split("\n")[0]}): ${OTEL_INSTALL_HINT}` };
  }
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { MeterProvider, PeriodicExportingMetricReader }, { OTLPMetricExporter }, { otelObserver, INSTRUMENTATION_NAME }] =
    modules;
  const resource = resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME?.trim() || "xstate-agent" });
  const url = tracesUrl(env);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url, headers: otlpHeaders(env, "traces") }))] });
  const metrics = metricsUrl(env);
  const meters = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: metrics, headers: otlpHeaders(env, "metrics") }), ...exportTiming(env) })],
  });
  const observer = otelObserver({ tracer: provider.getTracer(INSTRUMENTATION_NAME), meter: meters.getMeter(INSTRUMENTATION_NAME), agentName: "xstate-agent", secrets });
  return {
    observer,
    url,
    metricsUrl: metrics,
    // A provider's shutdown exports what it holds (the reader collects once more); a failure to export is not the session's.
    shutdown: async () => {
      await Promise.all([provider.shutdown().catch(() => {}), meters.shutdown().catch(() => {})]);
    },
  };
}
