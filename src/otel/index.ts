/**
 * `xstate-agent-loop/otel`: OpenTelemetry spans and metrics that mirror the statechart (SPEC R110),
 * by the GenAI semantic conventions. Needs `@opentelemetry/api` (an optional peer dependency).
 *
 * ```ts
 * import { otelObserver } from "xstate-agent-loop/otel";
 * const inspect = otelObserver({ tracer, meter });
 * await runAgentLoop(prompts, context, config, emit, signal, streamFn, { inspect });
 * ```
 */
export { otelObserver, INSTRUMENTATION_NAME, type OtelObserver, type OtelObserverOptions } from "./observer.js";
export { ATTR as OTEL_ATTRIBUTES } from "./attributes.js";
export type { ContentOptions } from "./content.js";
