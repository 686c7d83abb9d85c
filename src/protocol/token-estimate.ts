/**
 * The transcript's size in tokens without a tokenizer (SPEC R62): the last response's usage covers
 * everything up to and including that response; what was added since counts one token per 4
 * characters. What the proactive check (`CompactSettings.thresholdTokens`) compares.
 */
import type { AgentMessage, Usage } from "./messages.js";

/** Characters per token of the estimate. */
export const CHARS_PER_TOKEN = 4;
/** What one image counts for (Anthropic bills a ~1.15 megapixel image at about 1,600 tokens; most are smaller). */
export const IMAGE_TOKENS = 1_200;

const IMAGE_CHARS = IMAGE_TOKENS * CHARS_PER_TOKEN;

export interface EstimateTokensOptions {
  /**
   * Only assistant messages at this index or later may provide the usage base. After a
   * `transcript_replaced`, pass the replacement's length: the kept messages' usage was measured
   * against the transcript before compaction. Default 0.
   */
  usageFrom?: number;
}

/** Estimated tokens of `messages` (see the file header). */
export function estimateTokens(messages: readonly AgentMessage[], options: EstimateTokensOptions = {}): number {
  const floor = Math.max(0, Math.floor(options.usageFrom ?? 0));
  let base = 0;
  let from = 0;
  for (let i = messages.length - 1; i >= floor; i--) {
    const tokens = responseTokens(messages[i]);
    if (tokens > 0) {
      base = tokens;
      from = i + 1;
      break;
    }
  }
  let chars = 0;
  for (let i = from; i < messages.length; i++) chars += messageChars(messages[i]);
  return base + Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The tokens a response's usage accounts for: its prompt (input and cache) plus its output; 0 for anything else. */
function responseTokens(message: AgentMessage): number {
  const { role, usage } = message as { role?: unknown; usage?: Partial<Usage> };
  if (role !== "assistant" || typeof usage !== "object" || usage === null) return 0;
  return count(usage.input) + count(usage.output) + count(usage.cacheRead) + count(usage.cacheWrite);
}

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0);

/** The characters a message puts into a request, roughly: texts, tool arguments, declarations; an image as `IMAGE_TOKENS`. */
export function messageChars(message: AgentMessage): number {
  const m = message as { role?: unknown; content?: unknown; sections?: unknown; toolsAdded?: unknown; toolsRemoved?: unknown; toolName?: unknown };
  switch (m.role) {
    case "user":
    case "assistant":
    case "toolResult":
      return contentChars(m.content) + (typeof m.toolName === "string" ? m.toolName.length : 0);
    case "system": {
      let chars = contentChars(m.content);
      if (typeof m.sections === "object" && m.sections !== null) {
        for (const value of Object.values(m.sections)) if (typeof value === "string") chars += value.length;
      }
      return chars + jsonChars(m.toolsAdded) + jsonChars(m.toolsRemoved);
    }
    default:
      // An app-defined message: what convertToLlm makes of it is unknown, so count all of it.
      return jsonChars(message);
  }
}

function contentChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let chars = 0;
  for (const block of content as { type?: unknown; text?: unknown; thinking?: unknown; name?: unknown; arguments?: unknown }[]) {
    if (typeof block !== "object" || block === null) continue;
    if (block.type === "text" && typeof block.text === "string") chars += block.text.length;
    else if (block.type === "thinking" && typeof block.thinking === "string") chars += block.thinking.length;
    else if (block.type === "toolCall") chars += (typeof block.name === "string" ? block.name.length : 0) + jsonChars(block.arguments);
    else if (block.type === "image") chars += IMAGE_CHARS;
  }
  return chars;
}

function jsonChars(value: unknown): number {
  if (value === undefined) return 0;
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0; // a cycle or a throwing getter: not worth failing an estimate over
  }
}
