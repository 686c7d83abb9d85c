/**
 * The conversation, drawn from the Agent's events (the pi-compatible `subscribe` API): messages
 * as they start, stream and end, and a card per tool call with its progress and result.
 */
import type { AgentEvent, AgentMessage, AssistantMessage } from "xstate-agent-loop";

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

export class TranscriptView {
  /** The assistant message being streamed. */
  private streaming: { item: HTMLLIElement; body: HTMLElement; tools: HTMLElement } | undefined;
  private lastAssistant: { item: HTMLLIElement; tools: HTMLElement } | undefined;
  private readonly cards = new Map<string, HTMLElement>();

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
      default:
        return;
    }
  }

  /** Messages already in the transcript (the leading system message of prompt and tools). */
  restore(messages: readonly AgentMessage[]): void {
    for (const message of messages) {
      this.startMessage(message);
      if ((message as { role?: string }).role === "assistant") this.endAssistant(message as AssistantMessage);
    }
  }

  /** An error the app itself hit (e.g. a rejected prompt). */
  note(text: string): void {
    this.append(el("li", "message note", text));
  }

  private startMessage(message: AgentMessage): void {
    const role = (message as { role?: string }).role;
    if (role === "user") {
      const kind = this.kinds.get(message) ?? "prompt";
      const item = el("li", `message user ${kind}`);
      item.dataset.kind = kind;
      if (kind !== "prompt") item.append(el("span", "label", kind));
      item.append(el("div", "body", textOf((message as { content: unknown }).content)));
      this.append(item);
    } else if (role === "assistant") {
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
