/**
 * `--otel`: the session's spans (SPEC R110) exported by OTLP/HTTP, configured by the standard
 * environment variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`; default http://localhost:4318),
 * `OTEL_EXPORTER_OTLP_TRACES_HEADERS` / `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`), and
 * `OTEL_SERVICE_NAME` (default `xstate-agent`); the exporter reads the others (timeout,
 * compression) itself.
 *
 * The SDK and the exporter are optional peer dependencies, loaded only for `--otel`: without them
 * the CLI says what to install and runs without telemetry.
 */
import type { OtelObserver } from "../../otel/index.js";

export const OTEL_INSTALL_HINT = "npm install @opentelemetry/api @opentelemetry/sdk-trace-base @opentelemetry/resources @opentelemetry/exporter-trace-otlp-http";

export interface OtelExport {
  observer: OtelObserver;
  /** Where the spans go. */
  url: string;
  /** Exports what is left and stops (at the end of the session). */
  shutdown(): Promise<void>;
}

/** The traces endpoint the standard variables name. */
export function tracesUrl(env: Record<string, string | undefined>): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || "http://localhost:4318";
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/** `k=v,k2=v2` (values URL-encoded), the traces variable's entries over the general one's. */
export function otlpHeaders(env: Record<string, string | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const list of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
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
    import("../../otel/index.js"),
  ]);

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
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { otelObserver }] = modules;
  const url = tracesUrl(env);
  const exporter = new OTLPTraceExporter({ url, headers: otlpHeaders(env) });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME?.trim() || "xstate-agent" }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const observer = otelObserver({ tracer: provider.getTracer("xstate-agent-loop"), agentName: "xstate-agent", secrets });
  return { observer, url, shutdown: () => provider.shutdown().catch(() => {}) };
}
