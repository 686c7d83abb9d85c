/** Whole-transcript replay of system messages: the Agent's `systemPrompt` and `reset()` (R50, R54). */
import type { AgentMessage, SystemMessage, ToolDecl } from "../messages.js";
import { isSystemMessage } from "./system-message-guard.js";
import { createSystemReplay, renderSystemPrompt, replayedContent, replaySystemMessage, type SystemReplay } from "./system-replay.js";

/** The current prompt and declared tools after every system message of a transcript. */
export interface TranscriptReplay {
  /** The rendered prompt (see system-replay.ts): contents, then sections, "\n\n"-separated. */
  systemPrompt: string;
  /** Contents only, "\n\n"-joined: what a collapsed leading message carries as `content`. */
  content: string;
  /** Live sections in order (a fresh plain object). */
  sections: Record<string, string>;
  /** Declared tools by name, in declaration order. */
  tools: Map<string, ToolDecl>;
  /** Timestamp of the first system message; undefined when there is none. */
  timestamp: number | undefined;
}

function foldTranscript(messages: readonly AgentMessage[]): SystemReplay {
  const replay = createSystemReplay();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (isSystemMessage(message)) replaySystemMessage(replay, message);
  }
  return replay;
}

/**
 * Replays every system message of `messages` in order (other roles are skipped, so agent
 * transcripts with custom messages can be passed as they are).
 */
export function replayTranscript(messages: readonly AgentMessage[]): TranscriptReplay {
  const replay = foldTranscript(messages);
  return {
    systemPrompt: renderSystemPrompt(replay),
    content: replayedContent(replay),
    sections: { ...replay.sections },
    tools: replay.tools,
    timestamp: replay.timestamp,
  };
}

/**
 * The replayed state as one leading system message (what `Agent.reset()` keeps, R54): content
 * joined, sections kept as sections so later messages can still replace them by name, every
 * declared tool in `toolsAdded`, and the first system message's timestamp. Undefined when the
 * transcript has no system message. Empty `sections`/`toolsAdded` are omitted.
 */
export function currentSystemMessage(messages: readonly AgentMessage[]): SystemMessage | undefined {
  const replay = foldTranscript(messages);
  if (replay.timestamp === undefined) return undefined;
  let hasSections = false;
  for (const _ in replay.sections) {
    hasSections = true;
    break;
  }
  // Built in a hand-written message's key order, so JSON output and snapshots read naturally.
  return {
    role: "system",
    content: replayedContent(replay),
    ...(hasSections ? { sections: { ...replay.sections } } : {}),
    ...(replay.tools.size > 0 ? { toolsAdded: [...replay.tools.values()] } : {}),
    timestamp: replay.timestamp,
  };
}
