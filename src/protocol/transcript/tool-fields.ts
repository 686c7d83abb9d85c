/**
 * The one replay rule for tool fields (R30), shared by every tool-set representation so they
 * cannot drift apart: per message, `toolsRemoved` first, then `toolsAdded`, keyed by name.
 */
import type { SystemMessage, ToolDecl } from "../messages.js";

/**
 * Applies one system message's tool changes to `set` in place. Removing an unknown name is a
 * no-op; adding a known name without removing it first replaces the entry where it stands
 * (Map order), while remove-then-add moves it to the end, as the reference does.
 */
export function applyToolFields<V>(set: Map<string, V>, message: SystemMessage, valueOf: (decl: ToolDecl) => V): void {
  const removed = message.toolsRemoved;
  if (removed !== undefined) for (let i = 0; i < removed.length; i++) set.delete(removed[i].name);
  const added = message.toolsAdded;
  if (added !== undefined) for (let i = 0; i < added.length; i++) set.set(added[i].name, valueOf(added[i]));
}
