import type { AgentMessage, AgentTool } from "../types.js";
import { isSystemMessage, systemMessageFor } from "../transcript/index.js";
import { toolDeclaration } from "../tools/index.js";

/**
 * R50: `systemPrompt` and `tools` become the leading system message (timestamp 0, as the
 * reference does) unless `messages` already starts with a system message, which then wins.
 * Nothing is added for an empty prompt without tools.
 */
export function initialTranscript(systemPrompt: string | undefined, tools: readonly AgentTool[], messages: readonly AgentMessage[]): AgentMessage[] {
  const transcript = messages.slice();
  if (transcript.length > 0 && isSystemMessage(transcript[0])) return transcript;
  const leading = systemMessageFor(systemPrompt ?? "", tools.map(toolDeclaration));
  return leading ? [leading, ...transcript] : transcript;
}
