/**
 * A provider message as plain text for the summary request (SPEC R62). The conversation goes to the
 * summarizer as text inside one user message rather than as structured messages: a chunk may then
 * start or end anywhere without breaking the provider's call/result pairing, and the request
 * declares no tools (Anthropic refuses tool blocks in a request without tools).
 */
import type { ImageContent, Message, TextContent, ThinkingContent, ToolCall } from "../types.js";

/**
 * `[user]`, `[assistant]`, `[tool call NAME id=ID] {args}`, `[tool result NAME id=ID]` (plus
 * ` error`) headers above the message's text. Thinking is left out (it is the model's scratch
 * work; a redacted block is opaque), an image is `[image MIME]`. Undefined for a system message:
 * the prompt and tool declarations are kept as they are, not summarized.
 */
export function renderMessage(message: Message): string | undefined {
  switch (message.role) {
    case "user":
      return `[user]\n${blocksText(message.content)}`;
    case "assistant": {
      const lines = ["[assistant]"];
      for (const block of message.content ?? []) {
        if (block?.type === "text") lines.push(block.text);
        else if (block?.type === "toolCall") lines.push(toolCallLine(block));
      }
      return lines.join("\n");
    }
    case "toolResult":
      return `[tool result ${message.toolName} id=${message.toolCallId}${message.isError ? " error" : ""}]\n${blocksText(message.content)}`;
    default:
      return undefined;
  }
}

function toolCallLine(call: ToolCall): string {
  let args: string;
  try {
    args = JSON.stringify(call.arguments ?? {}) ?? "{}";
  } catch {
    args = "{}";
  }
  return `[tool call ${call.name} id=${call.id}] ${args}`;
}

function blocksText(content: string | readonly (TextContent | ImageContent | ThinkingContent)[]): string {
  if (typeof content === "string") return content;
  const parts: string[] = [];
  for (const block of content ?? []) {
    if (block?.type === "text") parts.push(block.text);
    else if (block?.type === "image") parts.push(`[image ${block.mimeType}]`);
  }
  return parts.join("\n");
}
