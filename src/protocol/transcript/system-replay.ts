/**
 * Incremental replay of system messages into the current prompt and declared tools (R30, R50).
 * Rendering rule, matching the reference (`Agent.state.systemPrompt`):
 *
 *   systemPrompt = [c1, c2, ..., s1, s2, ...] without empty strings, joined by "\n\n"
 *
 * where c1..cn are the non-empty contents of the system messages in transcript order (the first is
 * the base prompt, the rest added instructions; text blocks joined by "\n") and s1..sm are the
 * values of the live sections in section order. Section order is plain-object order: first
 * declaration wins a position, replacing keeps it, `null` removes, re-adding appends; integer-like
 * names sort first (JSON objects reorder them anyway, so the order survives persistence).
 */
import type { SystemMessage, ToolDecl } from "../messages.js";
import { systemContentText } from "./content-text.js";
import { applyToolFields } from "./tool-fields.js";

/** Accumulated state of the system messages seen so far. Mutated by `replaySystemMessage`. */
export interface SystemReplay {
  /** Non-empty contents in order. */
  readonly contents: string[];
  /** Live sections (null-prototype object, so any name is a plain key). */
  readonly sections: Record<string, string>;
  /** Declared tools in declaration order. */
  readonly tools: Map<string, ToolDecl>;
  /** Timestamp of the first system message; undefined until one is seen. */
  timestamp: number | undefined;
}

const identity = (decl: ToolDecl): ToolDecl => decl;

/** An empty replay (no system message seen). */
export function createSystemReplay(): SystemReplay {
  return { contents: [], sections: Object.create(null) as Record<string, string>, tools: new Map(), timestamp: undefined };
}

/** Folds one system message into `replay` in place and returns it. */
export function replaySystemMessage(replay: SystemReplay, message: SystemMessage): SystemReplay {
  if (replay.timestamp === undefined) replay.timestamp = message.timestamp;
  const text = systemContentText(message.content);
  if (text !== "") replay.contents.push(text);
  const sections = message.sections;
  if (sections != null) {
    for (const name of Object.keys(sections)) {
      const value = sections[name];
      if (value === null) delete replay.sections[name];
      // undefined (not valid JSON, but possible in memory) means "no change" rather than a crash.
      else if (typeof value === "string") replay.sections[name] = value;
    }
  }
  applyToolFields(replay.tools, message, identity);
  return replay;
}

/** The accumulated content: non-empty contents joined by "\n\n" ("" when there are none). */
export function replayedContent(replay: SystemReplay): string {
  return replay.contents.join("\n\n");
}

/** Renders the system prompt per the rule in this file's header. */
export function renderSystemPrompt(replay: SystemReplay): string {
  let prompt = replayedContent(replay);
  const sections = replay.sections;
  for (const name in sections) {
    const value = sections[name];
    if (value === "") continue;
    prompt = prompt === "" ? value : prompt + "\n\n" + value;
  }
  return prompt;
}
