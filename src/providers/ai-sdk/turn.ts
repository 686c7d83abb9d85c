import type { LanguageModelV4FinishReason, LanguageModelV4StreamPart, LanguageModelV4Usage, SharedV4ProviderMetadata } from "@ai-sdk/provider";
import type { AssistantMessage, Model, TextContent, ThinkingContent, ToolCall } from "../../types.js";
import { emptyUsage, monotonicNow, type PushAssistantStream } from "../assistant-stream.js";
import { priceUsage } from "../pricing.js";
import { settleFailed } from "../failure.js";
import { redactSecrets } from "../retry-after.js";
import { parseToolArguments } from "../tool-arguments.js";
import { notRetryable, transient, type AiSdkFailure } from "./classify.js";
import { encodeSignature } from "./prompt.js";

type OpenText = { contentIndex: number; block: TextContent; metadata: SharedV4ProviderMetadata | undefined };
type OpenReasoning = { contentIndex: number; block: ThinkingContent; metadata: SharedV4ProviderMetadata | undefined };
type OpenTool = { contentIndex: number; block: ToolCall; json: string };

type StopMapping = { stopReason: "stop" | "length" | "toolUse" } | { error: string; failure: AiSdkFailure };

/**
 * The AI SDK's unified finish reason → ours. `tool-calls`, or `stop`/`other` on a response that
 * holds tool calls (Gemini says STOP), → toolUse; `length` → length (R61); `content-filter` and
 * `error` → an error; `interrupted` (the body ended without its completion signal) → a truncated
 * response, which R60 may retry while nothing was shown.
 */
export function mapFinishReason(given: unknown, hasToolCalls: boolean): StopMapping {
  const reason = readFinishReason(given);
  if (!reason) return { error: `The response's finish part has no readable finish reason (got ${describeReason(given)})`, failure: notRetryable() };
  switch (reason.unified) {
    case "tool-calls":
      return { stopReason: "toolUse" };
    case "stop":
    case "other":
      return { stopReason: hasToolCalls ? "toolUse" : "stop" };
    case "length":
      return { stopReason: "length" };
    case "content-filter":
      return { error: `The provider's content filter stopped the response (finish reason: ${reason.raw ?? "content-filter"})`, failure: notRetryable() };
    case "interrupted":
      return { error: "The response ended without its completion signal (response truncated)", failure: transient("connection") };
    case "error":
    default:
      return { error: `The response ended with finish reason ${reason.raw ?? reason.unified}`, failure: notRetryable() };
  }
}

const UNIFIED = new Set<string>(["stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"]);

/**
 * The spec's `{ unified, raw }`, or a bare unified string (the v2/v3 specs' shape, which a
 * provider package not quite on v4 may still send); anything else is unreadable.
 */
function readFinishReason(value: unknown): LanguageModelV4FinishReason | undefined {
  if (typeof value === "string") return UNIFIED.has(value) ? { unified: value as LanguageModelV4FinishReason["unified"], raw: value } : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const { unified, raw } = value as { unified?: unknown; raw?: unknown };
  if (typeof unified !== "string" || !UNIFIED.has(unified)) return undefined;
  return { unified: unified as LanguageModelV4FinishReason["unified"], raw: typeof raw === "string" ? raw : undefined };
}

function describeReason(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 200);
  } catch {
    return typeof value;
  }
}

/**
 * One response assembled from AI SDK stream parts into `output` (the live partial) and pushed to
 * `stream` as AssistantMessageEvents. Settles exactly once: `done` at the end of a stream that
 * sent `finish`, or `error` through `fail()`; after that every call is a no-op.
 */
export class AiSdkTurn {
  readonly output: AssistantMessage;
  /** Strings redacted from every error message (API keys a proxy may echo). */
  secrets: readonly string[] = [];
  private started = false;
  private settled = false;
  /** The first `finish` part's reason, as sent (read by `mapFinishReason`). */
  private finish: { reason: unknown } | undefined;
  private readonly texts = new Map<string, OpenText>();
  private readonly reasoning = new Map<string, OpenReasoning>();
  private readonly tools = new Map<string, OpenTool>();
  private readonly startedAt = monotonicNow();

  constructor(
    private readonly stream: PushAssistantStream,
    private readonly model: Model,
    api: string,
    provider: string,
  ) {
    this.output = {
      role: "assistant",
      content: [],
      api,
      provider,
      model: String(model?.id ?? ""),
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: Date.now(),
    };
  }

  get isSettled(): boolean {
    return this.settled;
  }

  /**
   * One part; an `error` part is returned to the caller, which classifies and fails the turn.
   * `finish` ends the response: whatever a provider sends after it (more text, a second finish
   * that would override the first's reason) is ignored.
   */
  handle(part: LanguageModelV4StreamPart): { error: unknown } | undefined {
    if (this.settled || this.finish) return undefined;
    switch (part.type) {
      case "response-metadata":
        // The first bytes of the response (`stream-start` comes before any, on some providers).
        this.ensureStarted();
        return undefined;
      case "text-start":
        this.startText(part.id, part.providerMetadata);
        return undefined;
      case "text-delta": {
        const open = this.texts.get(part.id) ?? this.startText(part.id, undefined);
        if (part.providerMetadata) open.metadata = mergeMetadata(open.metadata, part.providerMetadata);
        this.appendText(open, part.delta);
        return undefined;
      }
      case "text-end": {
        const open = this.texts.get(part.id);
        if (open) this.endText(part.id, open, part.providerMetadata);
        return undefined;
      }
      case "reasoning-start":
        this.startReasoning(part.id, part.providerMetadata);
        return undefined;
      case "reasoning-delta": {
        const open = this.reasoning.get(part.id) ?? this.startReasoning(part.id, part.providerMetadata);
        this.appendReasoning(open, part.delta, part.providerMetadata);
        return undefined;
      }
      case "reasoning-end": {
        const open = this.reasoning.get(part.id);
        if (open) this.endReasoning(part.id, open, part.providerMetadata);
        return undefined;
      }
      case "tool-input-start":
        // Tools the provider runs itself (web search, code interpreter) are not our content model.
        if (!part.providerExecuted) this.startTool(part.id, part.toolName);
        return undefined;
      case "tool-input-delta": {
        const open = this.tools.get(part.id);
        if (open && part.delta) {
          open.json += part.delta;
          this.stream.push({ type: "toolcall_delta", contentIndex: open.contentIndex, delta: part.delta, partial: this.output });
        }
        return undefined;
      }
      case "tool-input-end":
        // The call's final input comes with its `tool-call` part, which follows.
        return undefined;
      case "tool-call": {
        if (part.providerExecuted) return undefined;
        // Some providers send the whole call at once, without `tool-input-*` parts.
        const open = this.tools.get(part.toolCallId) ?? this.startTool(part.toolCallId, part.toolName);
        if (open.json.length === 0 && part.input) {
          open.json = part.input;
          this.stream.push({ type: "toolcall_delta", contentIndex: open.contentIndex, delta: part.input, partial: this.output });
        }
        this.endTool(part.toolCallId, open, part.input);
        return undefined;
      }
      case "finish":
        this.setUsage(part.usage);
        this.finish = { reason: part.finishReason };
        return undefined;
      case "error":
        return { error: part.error };
      default:
        // ping, raw, source, file, tool-result, tool-approval-request, custom: not our content model.
        return undefined;
    }
  }

  /** The body ended: `done` if the provider sent `finish`, else a truncated response. */
  end(): void {
    if (this.settled) return;
    if (!this.finish) {
      this.fail("error", `${this.output.provider} stream ended before its finish part (response truncated)`, transient("connection"));
      return;
    }
    this.closeOpenBlocks();
    const hasToolCalls = this.output.content.some((block) => block.type === "toolCall");
    const mapped = mapFinishReason(this.finish.reason, hasToolCalls);
    if ("error" in mapped) {
      this.fail("error", mapped.error, mapped.failure);
      return;
    }
    this.settled = true;
    this.ensureStarted();
    this.output.stopReason = mapped.stopReason;
    this.output.durationMs = monotonicNow() - this.startedAt;
    this.stream.push({ type: "done", reason: mapped.stopReason, message: this.output });
  }

  /**
   * Settles with `error`/`aborted`, keeping whatever content arrived (a tool call cut off keeps what
   * its JSON parses to). An error after content is never retryable: the caller has seen it.
   */
  fail(reason: "error" | "aborted", message: string, failure: AiSdkFailure = notRetryable()): void {
    if (this.settled) return;
    this.settled = true;
    for (const open of this.tools.values()) Object.assign(open.block, parseToolArguments(open.json));
    this.texts.clear();
    this.reasoning.clear();
    this.tools.clear();
    settleFailed(this.output, reason, redactSecrets(message, this.secrets), failure, this.startedAt, monotonicNow());
    this.stream.push({ type: "error", reason, error: this.output });
  }

  private ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    this.stream.push({ type: "start", partial: this.output });
  }

  private startText(id: string, metadata: SharedV4ProviderMetadata | undefined): OpenText {
    this.ensureStarted();
    const block: TextContent = { type: "text", text: "" };
    const open = { contentIndex: this.output.content.push(block) - 1, block, metadata };
    this.texts.set(id, open);
    this.stream.push({ type: "text_start", contentIndex: open.contentIndex, partial: this.output });
    return open;
  }

  private appendText(open: OpenText, delta: string): void {
    if (!delta) return;
    open.block.text += delta;
    this.stream.push({ type: "text_delta", contentIndex: open.contentIndex, delta, partial: this.output });
  }

  private endText(id: string, open: OpenText, metadata: SharedV4ProviderMetadata | undefined): void {
    this.texts.delete(id);
    const signature = encodeSignature(mergeMetadata(open.metadata, metadata));
    if (signature !== undefined) open.block.textSignature = signature;
    this.stream.push({ type: "text_end", contentIndex: open.contentIndex, content: open.block.text, partial: this.output });
  }

  private startReasoning(id: string, metadata: SharedV4ProviderMetadata | undefined): OpenReasoning {
    this.ensureStarted();
    const block: ThinkingContent = { type: "thinking", thinking: "" };
    const open = { contentIndex: this.output.content.push(block) - 1, block, metadata };
    this.reasoning.set(id, open);
    this.stream.push({ type: "thinking_start", contentIndex: open.contentIndex, partial: this.output });
    return open;
  }

  private appendReasoning(open: OpenReasoning, delta: string, metadata: SharedV4ProviderMetadata | undefined): void {
    if (metadata) open.metadata = mergeMetadata(open.metadata, metadata);
    if (!delta) return;
    open.block.thinking += delta;
    this.stream.push({ type: "thinking_delta", contentIndex: open.contentIndex, delta, partial: this.output });
  }

  private endReasoning(id: string, open: OpenReasoning, metadata: SharedV4ProviderMetadata | undefined): void {
    this.reasoning.delete(id);
    const signature = encodeSignature(mergeMetadata(open.metadata, metadata));
    if (signature !== undefined) open.block.thinkingSignature = signature;
    this.stream.push({ type: "thinking_end", contentIndex: open.contentIndex, content: open.block.thinking, partial: this.output });
  }

  private startTool(id: string, name: string): OpenTool {
    this.ensureStarted();
    const block: ToolCall = { type: "toolCall", id, name, arguments: {} };
    const open = { contentIndex: this.output.content.push(block) - 1, block, json: "" };
    this.tools.set(id, open);
    this.stream.push({ type: "toolcall_start", contentIndex: open.contentIndex, partial: this.output });
    return open;
  }

  /** The call is complete: `toolcall_end` now, while the response still streams (R70). */
  private endTool(id: string, open: OpenTool, input: string): void {
    this.tools.delete(id);
    const parsed = parseToolArguments(input || open.json);
    open.block.arguments = parsed.arguments;
    if (parsed.argumentsError !== undefined) open.block.argumentsError = parsed.argumentsError;
    this.stream.push({ type: "toolcall_end", contentIndex: open.contentIndex, toolCall: open.block, partial: this.output });
  }

  /** Blocks the provider never closed are closed at the end, in content order. */
  private closeOpenBlocks(): void {
    const pending = [
      ...[...this.texts].map(([id, open]) => ({ index: open.contentIndex, close: () => this.endText(id, open, undefined) })),
      ...[...this.reasoning].map(([id, open]) => ({ index: open.contentIndex, close: () => this.endReasoning(id, open, undefined) })),
      ...[...this.tools].map(([id, open]) => ({ index: open.contentIndex, close: () => this.endTool(id, open, open.json) })),
    ].sort((a, b) => a.index - b.index);
    for (const { close } of pending) close();
  }

  /**
   * The AI SDK's usage → ours: `input` counts the prompt tokens not read from or written to the
   * cache (as Anthropic reports them), so `input + cacheRead + cacheWrite` is the prompt.
   */
  private setUsage(usage: LanguageModelV4Usage | undefined): void {
    if (!usage) return;
    const target = this.output.usage;
    const cacheRead = usage.inputTokens?.cacheRead ?? 0;
    const cacheWrite = usage.inputTokens?.cacheWrite ?? 0;
    const total = usage.inputTokens?.total;
    target.input = usage.inputTokens?.noCache ?? (total !== undefined ? Math.max(0, total - cacheRead - cacheWrite) : 0);
    target.cacheRead = cacheRead;
    target.cacheWrite = cacheWrite;
    target.output = usage.outputTokens?.total ?? 0;
    target.totalTokens = target.input + target.output + target.cacheRead + target.cacheWrite;
    priceUsage(target, this.model?.cost);
  }
}

function mergeMetadata(
  a: SharedV4ProviderMetadata | undefined,
  b: SharedV4ProviderMetadata | undefined,
): SharedV4ProviderMetadata | undefined {
  if (!a) return b;
  if (!b) return a;
  const merged: SharedV4ProviderMetadata = { ...a };
  for (const [provider, values] of Object.entries(b)) merged[provider] = { ...(merged[provider] ?? {}), ...values };
  return merged;
}
