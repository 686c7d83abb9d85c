/**
 * Our events as UI message stream parts: one run is one assistant UI message, one turn one step.
 * Stateful and deterministic: encoding a run's events from its `agent_start` always gives the
 * same parts, so a response that continues a run (after an approval, after a reconnect) encodes
 * the earlier events again and drops their parts (see `response.ts`).
 */
import type { AgentEndReason, AnyAgentEvent } from "../protocol/events.js";
import type { AssistantMessage } from "../protocol/messages.js";
import type { AgentPhase, FinishReason, UIStreamChunk } from "./chunks.js";

const finishReasons: Partial<Record<AgentEndReason, FinishReason>> = {
  completed: "stop",
  finish_turn_end: "stop",
  error: "error",
  max_output_tokens: "length",
};

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { type?: string; text?: string }) => (part?.type === "text" ? (part.text ?? "") : "")).join("");
}

export class UIStreamEncoder {
  private turn = 0;
  private assistantSeen = false;
  private steered = 0;
  /** Parts of the assistant message streaming now, by content index. */
  private open = new Map<number, { id: string; kind: "text" | "reasoning" }>();
  private streamed = new Set<number>();
  private inputs = new Set<string>();
  private readonly openCalls = new Set<string>();
  /** approvalId → toolCallId of the calls that wait for a decision. */
  private readonly awaiting = new Map<string, string>();
  private readonly rejected = new Set<string>();
  private phase: AgentPhase = "idle";
  private ended = false;
  /** `run-<seq of its agent_start>`: the same for every response that carries this run. */
  private messageId = "run";

  /** True while the run waits for decisions only: every call still open waits for an approval. */
  get waitingForDecision(): boolean {
    if (this.awaiting.size === 0) return false;
    const waiting = new Set(this.awaiting.values());
    return [...this.openCalls].every((id) => waiting.has(id));
  }

  /** True after the run's `agent_end`. */
  get runEnded(): boolean {
    return this.ended;
  }

  encode(event: AnyAgentEvent, seq: number): UIStreamChunk[] {
    const out: UIStreamChunk[] = [];
    switch (event.type) {
      case "agent_start":
        this.messageId = `run-${seq}`;
        out.push({ type: "start", messageId: this.messageId });
        this.setPhase(out, "running");
        break;
      case "turn_start":
        this.turn++;
        out.push({ type: "start-step" });
        break;
      case "message_start":
        if (event.message.role === "assistant") {
          this.open = new Map();
          this.streamed = new Set();
          this.setPhase(out, "streaming");
        } else if (event.message.role === "user" && this.assistantSeen) {
          // R53: a steering or follow-up message the run took in.
          out.push({ type: "steering-message", id: `${this.messageId}-steer-${++this.steered}`, parts: [{ type: "text", text: textOf(event.message.content) }] });
        }
        break;
      case "message_update":
        this.update(out, event.assistantMessageEvent);
        break;
      case "message_end":
        if (event.message.role === "assistant") this.endAssistant(out, event.message as AssistantMessage);
        break;
      case "tool_execution_start":
        this.openCalls.add(event.toolCallId);
        break;
      case "tool_execution_update":
        out.push({ type: "tool-output-available", toolCallId: event.toolCallId, output: event.partialResult, dynamic: true, preliminary: true });
        break;
      case "tool_execution_end":
        this.openCalls.delete(event.toolCallId);
        if (this.rejected.has(event.toolCallId)) out.push({ type: "tool-output-denied", toolCallId: event.toolCallId });
        else if (event.isError) out.push({ type: "tool-output-error", toolCallId: event.toolCallId, errorText: textOf(event.result?.content) || "Tool failed", dynamic: true });
        else out.push({ type: "tool-output-available", toolCallId: event.toolCallId, output: event.result, dynamic: true });
        if (this.openCalls.size === 0) this.setPhase(out, "running");
        break;
      case "tool_approval_requested":
        this.awaiting.set(event.approvalId, event.toolCallId);
        out.push({ type: "tool-approval-request", approvalId: event.approvalId, toolCallId: event.toolCallId, reason: event.reason });
        this.setPhase(out, this.waitingForDecision ? "awaitingApproval" : "executingTools", true);
        break;
      case "tool_approval_resolved": {
        this.awaiting.delete(event.approvalId);
        const approved = event.decision === "approved";
        if (!approved) this.rejected.add(event.toolCallId);
        out.push({ type: "tool-approval-response", approvalId: event.approvalId, approved, ...(event.reason ? { reason: event.reason } : {}) });
        this.setPhase(out, "executingTools", true);
        break;
      }
      case "turn_end":
        out.push({ type: "finish-step" });
        break;
      case "agent_end":
        this.ended = true;
        this.setPhase(out, "idle");
        if (event.reason === "aborted") out.push({ type: "abort", reason: "aborted" });
        else out.push({ type: "finish", finishReason: (event.reason && finishReasons[event.reason]) ?? "other" });
        break;
      case "retry_scheduled":
        out.push({ type: "data-retry", data: { attempt: event.attempt, maxAttempts: event.maxAttempts, delayMs: event.delayMs, errorMessage: event.errorMessage }, transient: true });
        break;
      default:
        break;
    }
    return out;
  }

  private setPhase(out: UIStreamChunk[], phase: AgentPhase, always = false): void {
    if (phase === this.phase && !always) return;
    this.phase = phase;
    const pendingApprovals = [...this.awaiting.keys()];
    out.push({ type: "data-agent-state", id: "agent-state", data: { value: phase, pendingApprovals } });
  }

  private update(out: UIStreamChunk[], event: Extract<AnyAgentEvent, { type: "message_update" }>["assistantMessageEvent"]): void {
    switch (event.type) {
      case "text_start":
      case "thinking_start": {
        const kind = event.type === "text_start" ? "text" : "reasoning";
        const id = `${kind}-${this.turn}-${event.contentIndex}`;
        this.open.set(event.contentIndex, { id, kind });
        this.streamed.add(event.contentIndex);
        out.push({ type: `${kind}-start`, id });
        break;
      }
      case "text_delta":
      case "thinking_delta": {
        const part = this.open.get(event.contentIndex);
        if (part) out.push({ type: `${part.kind}-delta`, id: part.id, delta: event.delta });
        break;
      }
      case "text_end":
      case "thinking_end":
        this.close(out, event.contentIndex);
        break;
      case "toolcall_start": {
        const call = event.partial.content[event.contentIndex];
        this.streamed.add(event.contentIndex);
        if (call?.type === "toolCall" && call.id && !this.inputs.has(call.id)) {
          this.open.set(event.contentIndex, { id: call.id, kind: "text" });
          out.push({ type: "tool-input-start", toolCallId: call.id, toolName: call.name, dynamic: true });
        }
        break;
      }
      case "toolcall_delta": {
        const call = event.partial.content[event.contentIndex];
        if (call?.type === "toolCall" && this.open.get(event.contentIndex)?.id === call.id) out.push({ type: "tool-input-delta", toolCallId: call.id, inputTextDelta: event.delta });
        break;
      }
      case "toolcall_end":
        this.open.delete(event.contentIndex);
        this.inputAvailable(out, event.toolCall);
        break;
      default:
        break;
    }
  }

  private close(out: UIStreamChunk[], index: number): void {
    const part = this.open.get(index);
    if (!part) return;
    this.open.delete(index);
    out.push({ type: `${part.kind}-end`, id: part.id } as UIStreamChunk);
  }

  private inputAvailable(out: UIStreamChunk[], call: { id: string; name: string; arguments: unknown }): void {
    if (this.inputs.has(call.id)) return;
    this.inputs.add(call.id);
    out.push({ type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.arguments, dynamic: true });
  }

  /** What the provider did not stream (a scripted or non-streaming model) is sent whole at the message's end. */
  private endAssistant(out: UIStreamChunk[], message: AssistantMessage): void {
    this.assistantSeen = true;
    message.content.forEach((part, index) => {
      if (part.type === "toolCall") return this.inputAvailable(out, part);
      if (this.open.get(index)) return this.close(out, index);
      if (this.streamed.has(index)) return;
      const text = part.type === "text" ? part.text : part.thinking;
      if (!text) return;
      const kind = part.type === "text" ? "text" : "reasoning";
      const id = `${kind}-${this.turn}-${index}`;
      out.push({ type: `${kind}-start`, id } as UIStreamChunk, { type: `${kind}-delta`, id, delta: text } as UIStreamChunk, { type: `${kind}-end`, id } as UIStreamChunk);
    });
    if (message.stopReason === "error") out.push({ type: "error", errorText: message.errorMessage ?? "The model request failed" });
    const calls = message.content.some((part) => part.type === "toolCall");
    this.setPhase(out, calls && message.stopReason === "toolUse" ? "executingTools" : "running");
  }
}

