/**
 * The tools a transcript declares, as name → declaration key: the incremental form the loop keeps
 * beside `context.messages` so R30 never replays the whole transcript before a request.
 */
import type { AgentMessage, SystemMessage } from "../messages.js";
import { toolDeclKey } from "./declaration-key.js";
import { isSystemMessage } from "./system-message-guard.js";
import { applyToolFields } from "./tool-fields.js";

/** Declared tools in declaration order: name → `toolDeclKey` of the declaration. */
export type DeclaredToolSet = Map<string, string>;

/** Replays every system message of `messages` into a new declared set. O(messages + declarations). */
export function createDeclaredToolSet(messages: readonly AgentMessage[]): DeclaredToolSet {
  return applySystemMessages(new Map(), messages);
}

/**
 * Applies one system message's tool fields to `set` **in place** and returns it. Copy first
 * (`new Map(set)`) where the set must stay immutable (e.g. in machine context).
 */
export function applySystemMessage(set: DeclaredToolSet, message: SystemMessage): DeclaredToolSet {
  applyToolFields(set, message, toolDeclKey);
  return set;
}

/**
 * Applies the system messages among `messages` (others are skipped) to `set` in place and
 * returns it: call it with the messages just appended to the transcript (e.g. the injected
 * pending list returned by `declareToolChanges`). If `context.messages` is replaced wholesale
 * (a hook returns a new context), rebuild with `createDeclaredToolSet` instead.
 */
export function applySystemMessages(set: DeclaredToolSet, messages: readonly AgentMessage[]): DeclaredToolSet {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (isSystemMessage(message)) applyToolFields(set, message, toolDeclKey);
  }
  return set;
}
