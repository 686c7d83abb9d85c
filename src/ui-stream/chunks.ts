/**
 * The parts of the AI SDK's UI message stream (ai@7's `UIMessageChunk`) this route emits, declared
 * here so the subpath needs no `ai` at run time (test/ui-stream checks them against ai@7's own
 * type and reader).
 */
export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "interrupted" | "other";

/** What `useChat` cannot express travels as data parts (`data-agent-state`, `data-retry`). */
export interface AgentStateData {
  /** The session's phase, following its statechart: idle, running (preparing a turn), streaming, executingTools, awaitingApproval. */
  value: AgentPhase;
  /** Calls waiting for a decision now. */
  pendingApprovals: string[];
}
export type AgentPhase = "idle" | "running" | "streaming" | "executingTools" | "awaitingApproval";

export type UIStreamChunk =
  | { type: "start"; messageId?: string }
  | { type: "finish"; finishReason?: FinishReason }
  | { type: "abort"; reason?: string }
  | { type: "error"; errorText: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string }
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "reasoning-end"; id: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string; dynamic: true }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown; dynamic: true }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string; reason?: string }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string }
  | { type: "tool-output-available"; toolCallId: string; output: unknown; dynamic: true; preliminary?: boolean }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; dynamic: true }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "steering-message"; id: string; parts: { type: "text"; text: string }[] }
  | { type: "data-agent-state"; id: "agent-state"; data: AgentStateData }
  | { type: "data-retry"; data: { attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }; transient: true };
