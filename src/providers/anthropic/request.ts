import type {
  Base64ImageSource,
  CacheControlEphemeral,
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type {
  AssistantMessage,
  ImageContent,
  Message,
  Model,
  SystemMessage,
  TextContent,
  ThinkingLevel,
  ToolDecl,
  ToolResultMessage,
  UserMessage,
} from "../../types.js";

/** Thinking budget (tokens) per level; `off` (or no level) sends no `thinking` parameter. */
export const THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingLevel, "off">, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32000,
  max: 64000,
};

/** The API's minimum thinking budget, and the room kept for the answer when a budget is capped. */
const MIN_THINKING_BUDGET = 1024;

/** Text sent in place of a tool result that the transcript does not hold. */
export const MISSING_TOOL_RESULT = "No result provided";

export interface BuildRequestOptions {
  maxTokens?: number;
  reasoning?: ThinkingLevel;
  promptCaching: boolean;
}

const EPHEMERAL: CacheControlEphemeral = { type: "ephemeral" };

/**
 * Maps a normalized transcript to a streaming Messages API request.
 *
 * - System messages are replayed in order into `system` (text after text, joined by blank lines;
 *   `sections` patched by name, `null` removing one, rendered after the text) and `tools`
 *   (per message `toolsRemoved` then `toolsAdded`, keyed by name). They never appear in `messages`.
 * - Consecutive tool results become one user message of `tool_result` blocks; consecutive messages of
 *   one role are merged, as the API requires alternation.
 * - Assistant content is echoed: text, `thinking` with its signature, redacted thinking as
 *   `redacted_thinking{data}`, tool calls as `tool_use`. Dropped, because the API rejects them:
 *   thinking without a signature (e.g. from an aborted stream), thinking produced by another API,
 *   empty or whitespace-only text, and error/aborted assistant messages left without content.
 * - A tool call with no result in the transcript gets an error `tool_result` ("No result provided"),
 *   and a tool result whose call is not in the preceding assistant message is dropped: the API
 *   rejects both dangling ids.
 */
export function buildRequest(
  model: Model,
  messages: readonly Message[],
  options: BuildRequestOptions,
): MessageCreateParamsStreaming {
  const { systemText, tools } = replaySystemMessages(messages);
  const converted = convertMessages(messages);
  const caching = options.promptCaching;

  const params: MessageCreateParamsStreaming = {
    model: model.id,
    max_tokens: Math.max(1, options.maxTokens ?? model.maxTokens),
    messages: converted,
    stream: true,
  };

  if (systemText.length > 0) {
    params.system = caching ? [{ type: "text", text: systemText, cache_control: EPHEMERAL }] : systemText;
  }
  if (tools.length > 0) {
    params.tools = tools.map(
      (tool, i): Tool => ({
        name: tool.name,
        description: tool.description,
        input_schema: toInputSchema(tool.parameters),
        ...(caching && i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
      }),
    );
  }
  if (caching) markLastBlock(converted);

  const level = options.reasoning;
  if (model.reasoning && level && level !== "off") {
    let budget = THINKING_BUDGETS[level];
    if (budget !== undefined) {
      // The API requires budget_tokens < max_tokens: raise max_tokens (within the model's limit) to
      // leave room for the answer, then cap the budget if the model's limit is still too small.
      if (params.max_tokens <= budget) {
        params.max_tokens = Math.min(model.maxTokens, budget + MIN_THINKING_BUDGET);
      }
      if (budget >= params.max_tokens) budget = params.max_tokens - MIN_THINKING_BUDGET;
      if (budget >= MIN_THINKING_BUDGET) params.thinking = { type: "enabled", budget_tokens: budget };
    }
  }
  return params;
}

// ---------------------------------------------------------------------------------------------
// System messages
// ---------------------------------------------------------------------------------------------

function contentText(content: string | TextContent[]): string {
  return typeof content === "string" ? content : content.map((block) => block.text).join("\n");
}

/** Replays every system message: the current prompt text and the declared tools, in order. */
export function replaySystemMessages(messages: readonly Message[]): { systemText: string; tools: ToolDecl[] } {
  const texts: string[] = [];
  const sections = new Map<string, string>();
  const tools = new Map<string, ToolDecl>();
  for (const message of messages) {
    if (message.role !== "system") continue;
    const system: SystemMessage = message;
    const text = contentText(system.content);
    if (text.length > 0) texts.push(text);
    for (const [name, value] of Object.entries(system.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    for (const removed of system.toolsRemoved ?? []) tools.delete(removed.name);
    for (const added of system.toolsAdded ?? []) tools.set(added.name, added);
  }
  const parts = [...texts, ...sections.values()].filter((part) => part.length > 0);
  return { systemText: parts.join("\n\n"), tools: [...tools.values()] };
}

function toInputSchema(parameters: object): Tool.InputSchema {
  return { ...parameters, type: "object" };
}

// ---------------------------------------------------------------------------------------------
// Conversation
// ---------------------------------------------------------------------------------------------

type Role = "user" | "assistant";
interface Turn {
  role: Role;
  content: ContentBlockParam[];
}

function convertMessages(messages: readonly Message[]): MessageParam[] {
  const turns: Turn[] = [];
  const push = (role: Role, blocks: ContentBlockParam[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: [...blocks] });
  };

  // Tool calls of the last assistant message that still wait for a result.
  let openCalls: string[] = [];
  const answered = new Set<string>();
  const closeOpenCalls = (): void => {
    const missing = openCalls.filter((id) => !answered.has(id));
    push(
      "user",
      missing.map((id) => ({ type: "tool_result", tool_use_id: id, is_error: true, content: MISSING_TOOL_RESULT })),
    );
    openCalls = [];
    answered.clear();
  };

  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        closeOpenCalls();
        push("user", userBlocks(message));
        break;
      case "assistant": {
        closeOpenCalls();
        if ((message.stopReason === "error" || message.stopReason === "aborted") && message.content.length === 0) break;
        const blocks = assistantBlocks(message);
        push("assistant", blocks);
        openCalls = blocks.flatMap((block) => (block.type === "tool_use" ? [block.id] : []));
        break;
      }
      case "toolResult":
        if (!openCalls.includes(message.toolCallId) || answered.has(message.toolCallId)) break;
        answered.add(message.toolCallId);
        push("user", [toolResultBlock(message)]);
        break;
    }
  }
  closeOpenCalls();
  return turns;
}

const hasText = (text: string): boolean => text.trim().length > 0;

function textBlock(text: string): TextBlockParam {
  return { type: "text", text };
}

function imageBlock(image: ImageContent): ImageBlockParam {
  return {
    type: "image",
    source: { type: "base64", media_type: image.mimeType as Base64ImageSource["media_type"], data: image.data },
  };
}

function mediaBlocks(content: (TextContent | ImageContent)[]): (TextBlockParam | ImageBlockParam)[] {
  return content.flatMap((block): (TextBlockParam | ImageBlockParam)[] => {
    if (block.type === "image") return [imageBlock(block)];
    return hasText(block.text) ? [textBlock(block.text)] : [];
  });
}

function userBlocks(message: UserMessage): ContentBlockParam[] {
  if (typeof message.content === "string") return hasText(message.content) ? [textBlock(message.content)] : [];
  return mediaBlocks(message.content);
}

function assistantBlocks(message: AssistantMessage): ContentBlockParam[] {
  const fromAnthropic = message.api === "anthropic-messages";
  const blocks: ContentBlockParam[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        if (hasText(block.text)) blocks.push(textBlock(block.text));
        break;
      case "thinking":
        // Signatures are only valid for the API that produced them; unsigned thinking is rejected.
        if (!fromAnthropic || !block.thinkingSignature) break;
        if (block.redacted) blocks.push({ type: "redacted_thinking", data: block.thinkingSignature });
        else blocks.push({ type: "thinking", thinking: block.thinking, signature: block.thinkingSignature });
        break;
      case "toolCall":
        blocks.push({ type: "tool_use", id: block.id, name: block.name, input: block.arguments ?? {} });
        break;
    }
  }
  return blocks;
}

function toolResultBlock(message: ToolResultMessage): ToolResultBlockParam {
  const content = mediaBlocks(message.content);
  return {
    type: "tool_result",
    tool_use_id: message.toolCallId,
    ...(content.length > 0 ? { content } : {}),
    is_error: message.isError,
  };
}

type CacheableBlock = Exclude<ContentBlockParam, { type: "thinking" } | { type: "redacted_thinking" }>;

function isCacheable(block: ContentBlockParam): block is CacheableBlock {
  return block.type !== "thinking" && block.type !== "redacted_thinking";
}

/** Puts a cache breakpoint on the last block of the last message that can carry one. */
function markLastBlock(messages: MessageParam[]): void {
  const last = messages[messages.length - 1];
  if (!last || typeof last.content === "string") return;
  for (let i = last.content.length - 1; i >= 0; i--) {
    const block = last.content[i];
    if (isCacheable(block)) {
      block.cache_control = EPHEMERAL;
      return;
    }
  }
}
