/**
 * The normalized transcript as an AI SDK (`@ai-sdk/provider` v4) prompt: what `doStream` takes.
 * Types only: the spec package is never loaded at run time.
 */
import type {
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import type { AssistantMessage, ImageContent, Message, TextContent, ToolResultMessage, UserMessage } from "../../types.js";
import { replayTranscript } from "../../transcript/index.js";

/** Text sent in place of a tool result that the transcript does not hold (providers reject dangling calls). */
export const MISSING_TOOL_RESULT = "No result provided";

/**
 * A part's provider metadata (OpenAI's item id and encrypted reasoning, Gemini's thought signature)
 * travels in the block's `thinkingSignature` / `textSignature` as `ai-sdk:` + JSON, so the next
 * request to the same provider can echo it.
 */
const SIGNATURE_PREFIX = "ai-sdk:";

export function encodeSignature(metadata: SharedV4ProviderOptions | undefined): string | undefined {
  if (!metadata || Object.keys(metadata).length === 0) return undefined;
  return SIGNATURE_PREFIX + JSON.stringify(metadata);
}

function decodeSignature(signature: string | undefined): SharedV4ProviderOptions | undefined {
  if (!signature?.startsWith(SIGNATURE_PREFIX)) return undefined;
  try {
    const value: unknown = JSON.parse(signature.slice(SIGNATURE_PREFIX.length));
    return typeof value === "object" && value !== null ? (value as SharedV4ProviderOptions) : undefined;
  } catch {
    return undefined;
  }
}

export interface AiSdkRequest {
  prompt: LanguageModelV4Prompt;
  tools: LanguageModelV4FunctionTool[];
}

type UserPart = Extract<LanguageModelV4Message, { role: "user" }>["content"][number];
type AssistantPart = Extract<LanguageModelV4Message, { role: "assistant" }>["content"][number];
type ToolPart = Extract<LanguageModelV4Message, { role: "tool" }>["content"][number];

const hasText = (text: string): boolean => text.trim().length > 0;

function imagePart(image: ImageContent): UserPart {
  return { type: "file", mediaType: image.mimeType, data: { type: "data", data: image.data } };
}

function mediaParts(content: string | (TextContent | ImageContent)[]): UserPart[] {
  if (typeof content === "string") return hasText(content) ? [{ type: "text", text: content }] : [];
  return content.flatMap((block): UserPart[] => {
    if (block.type === "image") return [imagePart(block)];
    return hasText(block.text) ? [{ type: "text", text: block.text }] : [];
  });
}

/**
 * - System messages are replayed (R30) into one leading system message and the tool list.
 * - Assistant content is echoed: text, reasoning (with its provider metadata when the message came
 *   from the same AI SDK provider), tool calls. An error/aborted message without content is dropped.
 * - Consecutive tool results share one `tool` message; a call without a result gets an error result
 *   and a result without its call is dropped, as providers reject both dangling ids.
 */
export function buildAiSdkRequest(messages: readonly Message[], api: string): AiSdkRequest {
  const replay = replayTranscript(messages);
  const prompt: LanguageModelV4Prompt = [];
  if (replay.systemPrompt.length > 0) prompt.push({ role: "system", content: replay.systemPrompt });

  let openCalls: { id: string; name: string }[] = [];
  const answered = new Set<string>();
  const pushTool = (part: ToolPart): void => {
    const last = prompt[prompt.length - 1];
    if (last?.role === "tool") last.content.push(part);
    else prompt.push({ role: "tool", content: [part] });
  };
  const closeOpenCalls = (): void => {
    for (const call of openCalls) {
      if (answered.has(call.id)) continue;
      pushTool({ type: "tool-result", toolCallId: call.id, toolName: call.name, output: { type: "error-text", value: MISSING_TOOL_RESULT } });
    }
    openCalls = [];
    answered.clear();
  };

  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user": {
        closeOpenCalls();
        const parts = mediaParts((message as UserMessage).content);
        if (parts.length > 0) prompt.push({ role: "user", content: parts });
        break;
      }
      case "assistant": {
        closeOpenCalls();
        if ((message.stopReason === "error" || message.stopReason === "aborted") && message.content.length === 0) break;
        const parts = assistantParts(message, api);
        if (parts.length > 0) prompt.push({ role: "assistant", content: parts });
        openCalls = message.content.flatMap((block) => (block.type === "toolCall" ? [{ id: block.id, name: block.name }] : []));
        break;
      }
      case "toolResult":
        if (!openCalls.some((call) => call.id === message.toolCallId) || answered.has(message.toolCallId)) break;
        answered.add(message.toolCallId);
        pushTool({ type: "tool-result", toolCallId: message.toolCallId, toolName: message.toolName, output: toolOutput(message) });
        break;
    }
  }
  closeOpenCalls();

  const tools = [...replay.tools.values()].map(
    (tool): LanguageModelV4FunctionTool => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      inputSchema: { ...tool.parameters, type: "object" },
    }),
  );
  return { prompt, tools };
}

function assistantParts(message: AssistantMessage, api: string): AssistantPart[] {
  const sameApi = message.api === api;
  const parts: AssistantPart[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "text": {
        if (!hasText(block.text)) break;
        const providerOptions = sameApi ? decodeSignature(block.textSignature) : undefined;
        parts.push({ type: "text", text: block.text, ...(providerOptions ? { providerOptions } : {}) });
        break;
      }
      case "thinking": {
        // Reasoning metadata (signatures, encrypted content) is only valid for the provider that made it.
        if (!sameApi) break;
        const providerOptions = decodeSignature(block.thinkingSignature);
        parts.push({ type: "reasoning", text: block.thinking, ...(providerOptions ? { providerOptions } : {}) });
        break;
      }
      case "toolCall":
        parts.push({ type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.arguments ?? {} });
        break;
    }
  }
  return parts;
}

/** Leads an error result that has images: the spec's `content` output has no error flag. */
const TOOL_ERROR_NOTE = "(The tool reported an error.)";

/**
 * A tool result as the spec's output. Text only: `text`, or `error-text` for an error. With images:
 * `content`, its parts in the tool's order; the spec has no error flag for it (`error-text` would
 * drop the images), so an error result's content is led by `TOOL_ERROR_NOTE`.
 */
function toolOutput(message: ToolResultMessage): LanguageModelV4ToolResultOutput {
  if (!message.content.some((block) => block.type === "image")) {
    const value = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
    return message.isError ? { type: "error-text", value } : { type: "text", value };
  }
  const value = message.content.map((block) =>
    block.type === "image"
      ? { type: "file" as const, mediaType: block.mimeType, data: { type: "data" as const, data: block.data } }
      : { type: "text" as const, text: block.text },
  );
  return { type: "content", value: message.isError ? [{ type: "text", text: TOOL_ERROR_NOTE }, ...value] : value };
}
