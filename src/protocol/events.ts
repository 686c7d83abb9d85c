/**
 * What a run emits (SPEC "Events"): pi-agent-core 1.6's `AgentEvent`s and the loop's own runtime
 * events (R66), with the plain data they carry.
 */
import type { AgentMessage, AssistantMessage, AssistantMessageEvent, ToolResultMessage, TransientFailureKind } from "./messages.js";

/**
 * SPEC R63: why a run ended, on every `agent_end` (additive to pi's event): `completed` (nothing
 * more to do), `aborted`/`error` (the last response, or a failure R56), `finish_turn_end`
 * (`finishTurn` said end), or a budget; R61 and R62 add `max_output_tokens` and `prompt_too_long`,
 * R100 `output_invalid` (the model's final answer did not validate in `output.maxAttempts` tries).
 */
export type AgentEndReason =
  | "completed"
  | "aborted"
  | "error"
  | "finish_turn_end"
  | "max_turns"
  | "max_tokens"
  | "max_cost"
  | "max_output_tokens"
  | "prompt_too_long"
  | "output_invalid";

/** A call waiting for approval, as plain data (`agent.pendingApprovals`, `tool_approval_requested`). */
export interface ToolApprovalRequest {
  /** Unique within the session (the model's `toolCallId` may repeat). */
  approvalId: string;
  toolCallId: string;
  toolName: string;
  /** The validated arguments the call would execute with. */
  args: unknown;
  /** Why it waits: `beforeToolCall`'s `approval.reason`, or `Tool NAME requires approval` for `needsApproval`. */
  reason: string;
}

export type AgentEvent =
  | { type: "agent_start" }
  /** `output` (SPEC R100, additive): the validated final answer of a run with `output` configured (absent when none validated). */
  | { type: "agent_end"; messages: AgentMessage[]; reason?: AgentEndReason; output?: unknown }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: any }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: any; partialResult: any }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: any;
      isError: boolean;
      durationMs?: number;
    };

/**
 * SPEC R66: events of the loop's own mechanisms, additive to pi's `AgentEvent` and emitted only
 * when their mechanism is configured. They travel in the same ordered stream as `AgentEvent`s:
 * `agentEvents(actor)` and `config.onRuntimeEvent` see them, `Agent.subscribe` with
 * `{runtimeEvents: true}`; pi's surfaces (`agentLoop`'s stream, an `emit` sink) never do.
 */
export type AgentRuntimeEvent =
  /** R60: a transient failure before content; the attempt was withheld and another follows after `delayMs`. */
  | { type: "retry_scheduled"; attempt: number; maxAttempts: number; delayMs: number; kind: TransientFailureKind | "unknown"; errorMessage: string; model: string }
  /** R61: the truncated response (closed with `message_end`) is discarded; the request goes again with `maxTokens`. */
  | { type: "output_limit_escalated"; fromMaxTokens: number | undefined; toMaxTokens: number }
  | { type: "message_discarded"; message: AssistantMessage; reason: "output_limit_escalated" }
  /**
   * R81: a durable run resumed after a crash retracts the provisional events from sequence number
   * `fromSeq` on (the start of a response that did not end, and what followed it while it streamed):
   * drop those you hold. The retracted events keep their numbers; this event has the next one
   * (above them). It carries no message: none had ended.
   */
  | { type: "message_discarded"; reason: "interrupted"; fromSeq: number; message?: undefined }
  /** R61: the recovery message (its `message_start`/`message_end` follow) asks the model to resume. */
  | { type: "output_limit_recovery"; attempt: number; maxRecoveries: number }
  /** R62: the transcript was compacted; the run's context is now `messages`. */
  | { type: "transcript_replaced"; messages: AgentMessage[]; reason: "overflow" | "threshold" }
  /** R82: a call waits for `approve(approvalId)` or `reject(approvalId, reason)`. */
  | ({ type: "tool_approval_requested" } & ToolApprovalRequest)
  /** R82: the wait ended: approved (with replacement `args`, when given) or rejected (also by an abort or a cancelled batch). */
  | { type: "tool_approval_resolved"; approvalId: string; toolCallId: string; decision: "approved" | "rejected"; reason?: string; args?: unknown };

export type AgentRuntimeEventType = AgentRuntimeEvent["type"];

/** Everything a run emits, in one order: pi's events and, when configured, the loop's own (R66). */
export type AnyAgentEvent = AgentEvent | AgentRuntimeEvent;

/** An awaited event sink: the loop takes no further step until the returned promise settles. */
export type AgentEventSink = (event: AgentEvent) => void | Promise<void>;
