/**
 * Rebuilds full `AssistantMessageEvent`s from the proxy's partial-less events: one live
 * `AssistantMessage` grows with each event and rides along as `partial` (as a provider's does).
 */
import { parse as parsePartialJson } from "partial-json";
import type { AssistantMessage, AssistantMessageEvent, JsonObject, Model, ToolCall } from "../types.js";
import { emptyUsage } from "../providers/assistant-stream.js";
import type { ProxyAssistantMessageEvent } from "./wire.js";

/** A wire event that does not fit the message built so far (a protocol violation by the server). */
export class ProxyProtocolError extends Error {
  override readonly name = "ProxyProtocolError";
}

export class ProxyMessageBuilder {
  readonly message: AssistantMessage;
  /** Raw argument text of each streaming tool call, by content index. */
  private readonly argumentText = new Map<number, string>();

  constructor(model: Model, startedAt: number) {
    this.message = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: startedAt,
    };
  }

  /** The full event for `wire`, or undefined for an event type this protocol version does not know. */
  apply(wire: ProxyAssistantMessageEvent): AssistantMessageEvent | undefined {
    const partial = this.message;
    switch (wire.type) {
      case "start":
        return { type: "start", partial };
      case "text_start":
        partial.content[this.index(wire)] = { type: "text", text: "" };
        return { type: "text_start", contentIndex: wire.contentIndex, partial };
      case "thinking_start":
        partial.content[this.index(wire)] = { type: "thinking", thinking: "" };
        return { type: "thinking_start", contentIndex: wire.contentIndex, partial };
      case "toolcall_start": {
        partial.content[this.index(wire)] = { type: "toolCall", id: String(wire.id), name: String(wire.toolName), arguments: {} };
        this.argumentText.set(wire.contentIndex, "");
        return { type: "toolcall_start", contentIndex: wire.contentIndex, partial };
      }
      case "text_delta": {
        const block = this.block(wire, "text");
        block.text += String(wire.delta);
        return { type: "text_delta", contentIndex: wire.contentIndex, delta: String(wire.delta), partial };
      }
      case "thinking_delta": {
        const block = this.block(wire, "thinking");
        block.thinking += String(wire.delta);
        return { type: "thinking_delta", contentIndex: wire.contentIndex, delta: String(wire.delta), partial };
      }
      case "toolcall_delta": {
        const block = this.block(wire, "toolCall");
        const text = (this.argumentText.get(wire.contentIndex) ?? "") + String(wire.delta);
        this.argumentText.set(wire.contentIndex, text);
        block.arguments = partialArguments(text) ?? block.arguments;
        return { type: "toolcall_delta", contentIndex: wire.contentIndex, delta: String(wire.delta), partial };
      }
      case "text_end": {
        const block = this.block(wire, "text");
        if (typeof wire.contentSignature === "string") block.textSignature = wire.contentSignature;
        return { type: "text_end", contentIndex: wire.contentIndex, content: block.text, partial };
      }
      case "thinking_end": {
        const block = this.block(wire, "thinking");
        if (typeof wire.contentSignature === "string") block.thinkingSignature = wire.contentSignature;
        return { type: "thinking_end", contentIndex: wire.contentIndex, content: block.thinking, partial };
      }
      case "toolcall_end": {
        this.block(wire, "toolCall");
        const toolCall = wire.toolCall as ToolCall;
        if (!toolCall || typeof toolCall !== "object") throw new ProxyProtocolError("toolcall_end without a toolCall");
        partial.content[wire.contentIndex] = toolCall;
        this.argumentText.delete(wire.contentIndex);
        return { type: "toolcall_end", contentIndex: wire.contentIndex, toolCall, partial };
      }
      case "done":
        partial.stopReason = wire.reason;
        if (wire.usage) partial.usage = wire.usage;
        return { type: "done", reason: wire.reason, message: partial };
      case "error":
        partial.stopReason = wire.reason;
        if (wire.usage) partial.usage = wire.usage;
        if (wire.errorMessage !== undefined) partial.errorMessage = wire.errorMessage;
        return { type: "error", reason: wire.reason, error: partial };
      default:
        return undefined;
    }
  }

  private index(wire: { contentIndex: number }): number {
    const index = wire.contentIndex;
    // Bounded: a hostile server must not make the client allocate a huge sparse array.
    if (!Number.isInteger(index) || index < 0 || index > this.message.content.length) {
      throw new ProxyProtocolError(`content index ${String(index)} out of order`);
    }
    return index;
  }

  private block<K extends AssistantMessage["content"][number]["type"]>(
    wire: { type: string; contentIndex: number },
    type: K,
  ): Extract<AssistantMessage["content"][number], { type: K }> {
    const block = this.message.content[wire.contentIndex];
    if (block?.type !== type) throw new ProxyProtocolError(`${wire.type} for content ${String(wire.contentIndex)}, which is not a ${type} block`);
    return block as Extract<AssistantMessage["content"][number], { type: K }>;
  }
}

/** The arguments parsed so far from incomplete JSON text (`{"path":"ab` → `{ path: "ab" }`), as the reference shows them. */
function partialArguments(text: string): JsonObject | undefined {
  try {
    const value: unknown = parsePartialJson(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}
