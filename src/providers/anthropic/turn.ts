import type { RawMessageStreamEvent, RefusalStopDetails } from "@anthropic-ai/sdk/resources/messages";
import type { AssistantMessage, JsonObject, Model, TextContent, ThinkingContent, ToolCall, Usage } from "../../types.js";
import { emptyUsage, monotonicNow, type PushAssistantStream } from "../assistant-stream.js";
import { redact } from "./errors.js";
import { notRetryable, type AnthropicFailure } from "./classify.js";
import { priceUsage } from "../pricing.js";
import { settleFailed } from "../failure.js";
import { isObject, parseToolArguments } from "../tool-arguments.js";

export { parseToolArguments };

type OpenBlock =
  | { kind: "text"; contentIndex: number; block: TextContent }
  | { kind: "thinking"; contentIndex: number; block: ThinkingContent }
  | { kind: "redacted"; contentIndex: number; block: ThinkingContent }
  | { kind: "toolCall"; contentIndex: number; block: ToolCall; json: string; initialInput: unknown };

type StopMapping = { stopReason: "stop" | "length" | "toolUse" } | { error: string };

/** stop_reason → our stop reason (end_turn/stop_sequence/pause_turn → stop, etc.). */
export function mapStopReason(reason: string | null, details: RefusalStopDetails | null): StopMapping {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
      return { stopReason: "stop" };
    case "max_tokens":
    case "model_context_window_exceeded":
      return { stopReason: "length" };
    case "tool_use":
      return { stopReason: "toolUse" };
    case "refusal":
      return { error: details?.explanation || "The model declined to respond (stop_reason: refusal)" };
    case null:
      return { error: "Anthropic response ended without a stop_reason" };
    default:
      return { error: `Anthropic response ended with an unknown stop_reason: ${reason}` };
  }
}

/**
 * One response being assembled from raw SSE events into `output` (the live partial) and pushed to
 * `stream` as AssistantMessageEvents. Settles exactly once: `done` on `message_stop`, or `error`
 * through `fail()`; after that every call is a no-op.
 */
export class AnthropicTurn {
  readonly output: AssistantMessage;
  /** The API key, redacted from every error message. */
  secret: string | undefined;
  private started = false;
  private settled = false;
  private stopReason: string | null = null;
  private stopDetails: RefusalStopDetails | null = null;
  private readonly open = new Map<number, OpenBlock>();
  private readonly startedAt = monotonicNow();

  constructor(
    private readonly stream: PushAssistantStream,
    private readonly model: Model,
  ) {
    this.output = {
      role: "assistant",
      content: [],
      api: "anthropic-messages",
      provider: "anthropic",
      model: String(model?.id ?? ""),
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: Date.now(),
    };
  }

  get isSettled(): boolean {
    return this.settled;
  }

  handle(event: RawMessageStreamEvent): void {
    if (this.settled) return;
    switch (event.type) {
      case "message_start": {
        const usage = event.message.usage;
        this.setUsage({
          input: usage.input_tokens,
          output: usage.output_tokens,
          cacheRead: usage.cache_read_input_tokens,
          cacheWrite: usage.cache_creation_input_tokens,
        });
        this.ensureStarted();
        return;
      }
      case "content_block_start":
        this.ensureStarted();
        this.startBlock(event.index, event.content_block);
        return;
      case "content_block_delta":
        this.delta(event.index, event.delta);
        return;
      case "content_block_stop": {
        const open = this.open.get(event.index);
        if (!open) return;
        this.open.delete(event.index);
        this.endBlock(open);
        return;
      }
      case "message_delta":
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        this.stopDetails = event.delta.stop_details ?? this.stopDetails;
        // Running totals: each field replaces the previous value.
        this.setUsage({
          input: event.usage.input_tokens,
          output: event.usage.output_tokens,
          cacheRead: event.usage.cache_read_input_tokens,
          cacheWrite: event.usage.cache_creation_input_tokens,
        });
        return;
      case "message_stop":
        this.complete();
        return;
    }
  }

  /**
   * Settles with `error`/`aborted`, keeping whatever content arrived. An `error` carries its
   * classification (R60/R62; default: not retryable), and is never retryable once content arrived:
   * the caller has seen it, so another attempt would not be the same response.
   */
  fail(reason: "error" | "aborted", message: string, failure: AnthropicFailure = notRetryable()): void {
    if (this.settled) return;
    this.settled = true;
    // Blocks cut off mid-stream keep their partial text; a tool call gets what its JSON parses to.
    for (const open of this.open.values()) {
      if (open.kind === "toolCall") Object.assign(open.block, parseToolArguments(open.json));
    }
    this.open.clear();
    settleFailed(this.output, reason, redact(message, this.secret), failure, this.startedAt, monotonicNow());
    this.stream.push({ type: "error", reason, error: this.output });
  }

  private complete(): void {
    // A block the server never closed is closed here, in index order.
    for (const index of [...this.open.keys()].sort((a, b) => a - b)) {
      const open = this.open.get(index)!;
      this.open.delete(index);
      this.endBlock(open);
    }
    const mapped = mapStopReason(this.stopReason, this.stopDetails);
    if ("error" in mapped) {
      this.fail("error", mapped.error);
      return;
    }
    this.settled = true;
    this.output.stopReason = mapped.stopReason;
    this.output.durationMs = monotonicNow() - this.startedAt;
    this.stream.push({ type: "done", reason: mapped.stopReason, message: this.output });
  }

  private ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    this.stream.push({ type: "start", partial: this.output });
  }

  private startBlock(index: number, block: Extract<RawMessageStreamEvent, { type: "content_block_start" }>["content_block"]): void {
    const contentIndex = this.output.content.length;
    const partial = this.output;
    switch (block.type) {
      case "text": {
        const content: TextContent = { type: "text", text: "" };
        partial.content.push(content);
        this.open.set(index, { kind: "text", contentIndex, block: content });
        this.stream.push({ type: "text_start", contentIndex, partial });
        if (block.text) this.appendText(content, contentIndex, block.text);
        return;
      }
      case "thinking": {
        const content: ThinkingContent = { type: "thinking", thinking: "" };
        if (block.signature) content.thinkingSignature = block.signature;
        partial.content.push(content);
        this.open.set(index, { kind: "thinking", contentIndex, block: content });
        this.stream.push({ type: "thinking_start", contentIndex, partial });
        if (block.thinking) this.appendThinking(content, contentIndex, block.thinking);
        return;
      }
      case "redacted_thinking": {
        // Complete at start: the opaque payload is kept to be echoed back, no deltas follow.
        const content: ThinkingContent = { type: "thinking", thinking: "", thinkingSignature: block.data, redacted: true };
        partial.content.push(content);
        this.open.set(index, { kind: "redacted", contentIndex, block: content });
        this.stream.push({ type: "thinking_start", contentIndex, partial });
        return;
      }
      case "tool_use": {
        const content: ToolCall = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
        partial.content.push(content);
        this.open.set(index, { kind: "toolCall", contentIndex, block: content, json: "", initialInput: block.input });
        this.stream.push({ type: "toolcall_start", contentIndex, partial });
        return;
      }
      default:
        // Server tool blocks (web search, code execution, ...) are not part of our content model.
        return;
    }
  }

  private delta(index: number, delta: Extract<RawMessageStreamEvent, { type: "content_block_delta" }>["delta"]): void {
    const open = this.open.get(index);
    if (!open) return;
    switch (delta.type) {
      case "text_delta":
        if (open.kind === "text") this.appendText(open.block, open.contentIndex, delta.text);
        return;
      case "thinking_delta":
        if (open.kind === "thinking") this.appendThinking(open.block, open.contentIndex, delta.thinking);
        return;
      case "signature_delta":
        if (open.kind === "thinking") open.block.thinkingSignature = (open.block.thinkingSignature ?? "") + delta.signature;
        return;
      case "input_json_delta":
        if (open.kind !== "toolCall" || !delta.partial_json) return;
        open.json += delta.partial_json;
        this.stream.push({ type: "toolcall_delta", contentIndex: open.contentIndex, delta: delta.partial_json, partial: this.output });
        return;
      default:
        return;
    }
  }

  private appendText(block: TextContent, contentIndex: number, text: string): void {
    if (!text) return;
    block.text += text;
    this.stream.push({ type: "text_delta", contentIndex, delta: text, partial: this.output });
  }

  private appendThinking(block: ThinkingContent, contentIndex: number, text: string): void {
    if (!text) return;
    block.thinking += text;
    this.stream.push({ type: "thinking_delta", contentIndex, delta: text, partial: this.output });
  }

  private endBlock(open: OpenBlock): void {
    const { contentIndex } = open;
    const partial = this.output;
    switch (open.kind) {
      case "text":
        this.stream.push({ type: "text_end", contentIndex, content: open.block.text, partial });
        return;
      case "thinking":
      case "redacted":
        this.stream.push({ type: "thinking_end", contentIndex, content: open.block.thinking, partial });
        return;
      case "toolCall": {
        // The API's `input` object is parsed JSON.
        const parsed: Pick<ToolCall, "arguments" | "argumentsError"> =
          open.json.length === 0 && isObject(open.initialInput) && Object.keys(open.initialInput).length > 0
            ? { arguments: open.initialInput as JsonObject }
            : parseToolArguments(open.json);
        open.block.arguments = parsed.arguments;
        if (parsed.argumentsError !== undefined) open.block.argumentsError = parsed.argumentsError;
        this.stream.push({ type: "toolcall_end", contentIndex, toolCall: open.block, partial });
        return;
      }
    }
  }

  private setUsage(tokens: { input: number | null; output: number | null; cacheRead: number | null; cacheWrite: number | null }): void {
    const usage: Usage = this.output.usage;
    if (typeof tokens.input === "number") usage.input = tokens.input;
    if (typeof tokens.output === "number") usage.output = tokens.output;
    if (typeof tokens.cacheRead === "number") usage.cacheRead = tokens.cacheRead;
    if (typeof tokens.cacheWrite === "number") usage.cacheWrite = tokens.cacheWrite;
    usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
    priceUsage(usage, this.model?.cost);
  }
}
