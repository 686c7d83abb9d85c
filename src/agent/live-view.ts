import type { AgentEvent, AgentMessage } from "../types.js";

/** No tool call pending: one set for every idle Agent (the view replaces, never mutates, its set). */
const none: ReadonlySet<string> = new Set();

/**
 * What changes on every delta (`streamingMessage`) or tool start/end (`pendingToolCalls`): kept in
 * the runtime, not in the session machine, so stream deltas never become machine events.
 */
export class LiveView {
  /** The message between its `message_start` and `message_end` (partial, for an assistant). */
  streamingMessage: AgentMessage | undefined;
  /** Ids of the tool calls between `tool_execution_start` and `tool_execution_end`. */
  pendingToolCalls: ReadonlySet<string> = none;

  apply(event: AgentEvent): void {
    switch (event.type) {
      case "message_start":
      case "message_update":
        this.streamingMessage = event.message;
        break;
      case "message_end":
        this.streamingMessage = undefined;
        break;
      case "tool_execution_start": {
        const pending = new Set(this.pendingToolCalls);
        pending.add(event.toolCallId);
        this.pendingToolCalls = pending;
        break;
      }
      case "tool_execution_end": {
        const pending = new Set(this.pendingToolCalls);
        pending.delete(event.toolCallId);
        this.pendingToolCalls = pending;
        break;
      }
    }
  }

  clear(): void {
    this.streamingMessage = undefined;
    this.pendingToolCalls = none;
  }
}
