/** The instruction text of one system message's `content`. */
import type { SystemMessage } from "../messages.js";

/**
 * A string is used as is; text blocks are joined with "\n" (as the reference does), and any
 * non-text block a loosely typed caller slipped in is skipped.
 */
export function systemContentText(content: SystemMessage["content"]): string {
  if (typeof content === "string") return content;
  let text = "";
  let first = true;
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    if (block.type !== "text") continue;
    text = first ? block.text : text + "\n" + block.text;
    first = false;
  }
  return text;
}
