/** An in-memory tracer for the OpenTelemetry suites, and the span tree as comparable text. */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, SpanStatusCode } from "@opentelemetry/api";

export function memoryTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer("test"), spans: () => exporter.getFinishedSpans() };
}

let contextManager: AsyncLocalStorageContextManager | undefined;
/** Registers an AsyncLocalStorage context manager once (the app's active context is a run's parent). */
export function useContextManager(): void {
  if (contextManager) return;
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
}

const statusOf = (span: ReadableSpan) => (span.status.code === SpanStatusCode.ERROR ? ` !${span.status.message ?? ""}` : "");

/**
 * The span tree as indented lines, `name [key attributes] !status`, children in start order (ties
 * by name, so parallel calls read the same every time).
 */
export function spanTree(spans: readonly ReadableSpan[], pick: (span: ReadableSpan) => string = () => ""): string[] {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const order = (a: ReadableSpan, b: ReadableSpan) => hr(a.startTime) - hr(b.startTime) || a.name.localeCompare(b.name);
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of (children.get(parent) ?? []).sort(order)) {
      const extra = pick(span);
      lines.push(`${"  ".repeat(depth)}${span.name}${extra ? ` ${extra}` : ""}${statusOf(span)}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

const hr = ([s, ns]: [number, number]) => s * 1e9 + ns;
