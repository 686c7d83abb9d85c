/**
 * SPEC R66: telling the loop's own events from pi's, and routing them. pi's surfaces (an `emit`
 * sink, `agentLoop`'s stream) see `AgentEvent`s only; `onRuntimeEvent` and opted-in listeners see the rest.
 */
import type { AgentEvent, AgentEventSink, AgentRuntimeEvent, AnyAgentEvent } from "../types.js";

const RUNTIME_EVENT_TYPES: ReadonlySet<string> = new Set<AgentRuntimeEvent["type"]>([
  "retry_scheduled",
  "output_limit_escalated",
  "message_discarded",
  "output_limit_recovery",
  "transcript_replaced",
  "tool_approval_requested",
  "tool_approval_resolved",
]);

export function isRuntimeEvent(event: AnyAgentEvent): event is AgentRuntimeEvent {
  // (A stream's updates, most of a run's events, are answered without the set lookup.)
  return event.type !== "message_update" && RUNTIME_EVENT_TYPES.has(event.type);
}

export type RuntimeEventSink = (event: AgentRuntimeEvent) => void | Promise<void>;

/** One sink for both kinds: pi's events to `sink`, the loop's to `onRuntime` (each awaited, in order). */
export function routeEvents(sink: AgentEventSink, onRuntime: RuntimeEventSink | undefined): (event: AnyAgentEvent) => void | Promise<void> {
  return (event) => (isRuntimeEvent(event) ? onRuntime?.(event) : sink(event as AgentEvent));
}
