/** Recognizing system messages among app-defined messages (the loop carries `AgentMessage`s). */
import type { AgentMessage, SystemMessage } from "../messages.js";

/** Whether a message is a system message (the only role that carries prompt and tool state). */
export function isSystemMessage(message: AgentMessage): message is SystemMessage {
  return (message as { role?: unknown }).role === "system";
}

/** Whether a system message carries any tool change (a non-empty `toolsAdded` or `toolsRemoved`). */
export function hasToolFields(message: SystemMessage): boolean {
  return (message.toolsAdded?.length ?? 0) > 0 || (message.toolsRemoved?.length ?? 0) > 0;
}
