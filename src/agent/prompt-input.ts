import type { AgentMessage, ImageContent } from "../types.js";

/** `prompt()`'s argument as messages: text (and images) become one user message, as in the reference. */
export function promptMessages(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): AgentMessage[] {
  if (Array.isArray(input)) return input.slice();
  if (typeof input !== "string") return [input];
  return [{ role: "user", content: [{ type: "text", text: input }, ...(images ?? [])], timestamp: Date.now() }];
}
