/**
 * The conversation, drawn from the Agent's events (the pi-compatible `subscribe` API): messages
 * as they start, stream and end, and a card per tool call with its progress and result. The
 * loop's own events (retries, output-limit recovery, compaction) and an unusual end reason are
 * small notes between the messages.
 */
import type { AgentEndReason, AgentEvent, AgentMessage, AgentRuntimeEvent, AssistantMessage } from "xstate-agent-loop";

/** How a user message entered the conversation (set by the composer on the objects it sends). */
export type UserMessageKind = "prompt" | "steering" | "follow-up";

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("")
      : "";

const FAILURE_KINDS: Record<Extract<AgentRuntimeEvent, { type: "retry_scheduled" }>["kind"], string> = {
  overloaded: "overloaded",
  rate_limited: "rate limited",
  server_error: "server error",
  connection: "connection error",
  stall: "stall",
  unknown: "transient error",
};

/** Why a run stopped, for the reasons its last message does not already show (completed, aborted, error). */
const END_REASONS: Partial<Record<AgentEndReason, string>> = {
  finish_turn_end: "finishTurn ended the run",
  max_turns: "turn limit",
  max_tokens: "token limit",
  max_cost: "cost limit",
  max_output_tokens: "output limit",
  prompt_too_long: "prompt too long",
};

export class TranscriptView {
  /** The assistant message being streamed. */
  private streaming: { item: HTMLLIElement; body: HTMLElement; tools: HTMLElement } | undefined;
  private lastAssistant: { item: HTMLLIElement; tools: HTMLElement } | undefined;
  private readonly cards = new Map<string, HTMLElement>();
  /** The note of a scheduled retry, until the next attempt streams. */
  private retryNote: HTMLElement | undefined;
  private recoveryCount = "";

  constructor(
    private readonly list: HTMLOListElement,
    /** The kind of the user messages the app sent (by identity; the loop passes them through). */
    private readonly kinds: WeakMap<object, UserMessageKind>,
  ) {}

  handle(event: AgentEvent): void {
    switch (event.type) {
      case "message_start":
        return this.startMessage(event.message);
      case "message_update":
        return this.updateAssistant(event.message as AssistantMessage);
      case "message_end":
        if ((event.message as { role?: string }).role === "assistant") this.endAssistant(event.message as AssistantMessage);
        return;
      case "tool_execution_start": {
        const card = this.card(event.toolCallId, event.toolName, event.args);
        card.dataset.status = "running";
        return;
      }
      case "tool_execution_update": {
        const card = this.card(event.toolCallId, event.toolName, event.args);
        const progress = (event.partialResult as { details?: { progress?: unknown } })?.details?.progress;
        if (typeof progress === "number") card.querySelector("progress")!.value = progress;
        card.querySelector(".progress-text")!.textContent = textOf((event.partialResult as { content?: unknown })?.content);
        return;
      }
      case "tool_execution_end": {
        const card = this.card(event.toolCallId, event.toolName, undefined);
        card.dataset.status = event.isError ? "error" : "done";
        card.querySelector("progress")!.value = 1;
        card.querySelector(".progress-text")!.textContent = "";
        card.querySelector(".result")!.textContent = textOf((event.result as { content?: unknown })?.content);
        if (event.durationMs !== undefined) card.querySelector(".duration")!.textContent = `${Math.round(event.durationMs)} ms`;
        return;
      }
      case "agent_end": {
        this.clearRetry();
        const reason = event.reason && END_REASONS[event.reason];
        if (reason) this.note(`stopped: ${reason}`, "end-reason");
        return;
      }
      default:
        return;
    }
  }

  /** The loop's own events (SPEC R66); they arrive only when the Agent's recovery is configured. */
  handleRuntime(event: AgentRuntimeEvent): void {
    switch (event.type) {
      case "retry_scheduled": {
        const text = `retrying in ${Math.ceil(event.delayMs / 1000)} s (${FAILURE_KINDS[event.kind]}, attempt ${event.attempt} of ${event.maxAttempts})`;
        if (this.retryNote) this.retryNote.textContent = text;
        else this.retryNote = this.note(text, "retry");
        return;
      }
      case "output_limit_escalated":
        return void this.note(`output limit hit: asking again with up to ${event.toMaxTokens} output tokens`, "output-limit");
      case "message_discarded":
        if (this.lastAssistant) this.lastAssistant.item.dataset.status = "discarded";
        return;
      case "output_limit_recovery":
        // The recovery message follows (its message_start), drawn as the loop's note with this count.
        this.recoveryCount = ` (${event.attempt} of ${event.maxRecoveries})`;
        return;
      case "transcript_replaced":
        return void this.note(`context compacted (now ${event.messages.length} messages)`, "compaction");
    }
  }

  /** Messages already in the transcript (the leading system message of prompt and tools). */
  restore(messages: readonly AgentMessage[]): void {
    for (const message of messages) {
      this.startMessage(message);
      if ((message as { role?: string }).role === "assistant") this.endAssistant(message as AssistantMessage);
    }
  }

  /** A line of the app's or the loop's (e.g. a rejected prompt, a retry). */
  note(text: string, kind?: string): HTMLElement {
    const item = el("li", `message note${kind ? ` ${kind}` : ""}`, text);
    this.append(item);
    return item;
  }

  private clearRetry(): void {
    this.retryNote?.remove();
    this.retryNote = undefined;
  }

  private startMessage(message: AgentMessage): void {
    const role = (message as { role?: string }).role;
    if (role === "user" && (message as { recovery?: string }).recovery === "output_limit") {
      // SPEC R61: the loop's message, not the user's.
      this.note(`output limit hit: the loop asked the model to continue where it stopped${this.recoveryCount}`, "recovery");
    } else if (role === "user") {
      const kind = this.kinds.get(message) ?? "prompt";
      const item = el("li", `message user ${kind}`);
      item.dataset.kind = kind;
      if (kind !== "prompt") item.append(el("span", "label", kind));
      item.append(el("div", "body", textOf((message as { content: unknown }).content)));
      this.append(item);
    } else if (role === "assistant") {
      // R60: the next attempt streams.
      this.clearRetry();
      const item = el("li", "message assistant");
      item.dataset.status = "streaming";
      const body = el("div", "body");
      const tools = el("div", "tools");
      item.append(body, tools);
      this.streaming = { item, body, tools };
      this.lastAssistant = { item, tools };
      this.append(item);
    } else if (role === "system") {
      const sys = message as { toolsAdded?: { name: string }[] };
      const tools = sys.toolsAdded?.map((tool) => tool.name).join(", ");
      this.append(el("li", "message system", `system prompt${tools ? ` · tools declared: ${tools}` : ""}`));
    }
    // Tool results are shown on their call's card.
  }

  private updateAssistant(message: AssistantMessage): void {
    if (!this.streaming) return;
    this.streaming.body.textContent = textOf(message.content);
    this.scroll();
  }

  private endAssistant(message: AssistantMessage): void {
    const current = this.streaming;
    if (!current) return;
    this.streaming = undefined;
    current.body.textContent = textOf(message.content);
    current.item.dataset.status = message.stopReason;
    if (message.stopReason === "aborted" || message.stopReason === "error") {
      current.item.append(el("div", "stop-reason", message.stopReason === "aborted" ? "aborted" : `error: ${message.errorMessage ?? ""}`));
    }
    for (const block of message.content) if (block.type === "toolCall") this.card(block.id, block.name, block.arguments);
  }

  /** The card of a tool call, under the assistant message that asked for it. */
  private card(id: string, name: string, args: unknown): HTMLElement {
    let card = this.cards.get(id);
    if (!card) {
      card = el("div", "tool");
      card.dataset.toolCallId = id;
      card.dataset.status = "requested";
      const head = el("div", "head");
      head.append(el("span", "name", name), el("code", "args", args === undefined ? "" : JSON.stringify(args)), el("span", "duration"));
      card.append(head, el("progress"), el("div", "progress-text"), el("div", "result"));
      card.querySelector("progress")!.value = 0;
      this.cards.set(id, card);
      (this.lastAssistant?.tools ?? this.list).append(card);
    }
    return card;
  }

  private append(item: HTMLElement): void {
    this.list.append(item);
    this.scroll();
  }

  private scroll(): void {
    this.list.scrollTop = this.list.scrollHeight;
  }
}
