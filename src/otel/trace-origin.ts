/**
 * R110: a run's trace as the plain data its input carries (`TraceOrigin`: a W3C `traceparent`
 * string and the conversation id), and back as the span link of a run that continues it.
 */
import { isValidSpanId, isValidTraceId, type Link, type Span } from "@opentelemetry/api";
import type { TraceOrigin } from "../../machines/run.types.js";

/** The run span's ids as plain strings. */
export function originOf(span: Span, conversationId: string | undefined): TraceOrigin {
  const { traceId, spanId, traceFlags } = span.spanContext();
  const origin: TraceOrigin = { traceparent: `00-${traceId}-${spanId}-0${traceFlags & 1}` };
  if (conversationId !== undefined) origin.conversationId = conversationId;
  return origin;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The link to the span `origin` names; undefined when it names none (the input came from a
 * journal or snapshot, which the app may have edited: bad ids cost the link, never the run).
 */
export function linkTo(origin: TraceOrigin | null | undefined): Link | undefined {
  const match = typeof origin?.traceparent === "string" ? TRACEPARENT.exec(origin.traceparent) : null;
  if (!match || !isValidTraceId(match[1]!) || !isValidSpanId(match[2]!)) return undefined;
  return { context: { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) & 1, isRemote: true } };
}
