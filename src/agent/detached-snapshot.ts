import type { Snapshot } from "xstate";

/**
 * A session snapshot whose transcript is its own copy: the session appends to its transcript in
 * place (issue 19), so a snapshot handed out (R13) or taken in must not share that array with a
 * live session. Anything that is not a session snapshot with a transcript is returned as it is.
 */
export function detachedSnapshot(snapshot: unknown): Snapshot<unknown> {
  const context = (snapshot as { context?: { messages?: unknown } } | null)?.context;
  if (!context || !Array.isArray(context.messages)) return snapshot as Snapshot<unknown>;
  return { ...(snapshot as object), context: { ...context, messages: context.messages.slice() } } as unknown as Snapshot<unknown>;
}
