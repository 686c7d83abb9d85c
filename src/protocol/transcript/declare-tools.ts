/**
 * R30: before pending messages are injected, announce the difference between the tools the
 * transcript declares and `context.tools`, so replaying the transcript always yields the tools
 * that can execute.
 */
import type { AgentMessage, SystemMessage } from "../messages.js";
import type { KeyedToolDecl } from "./declaration-key.js";
import { applySystemMessage, type DeclaredToolSet } from "./declared-set.js";
import { hasToolFields, isSystemMessage } from "./system-message-guard.js";
import { diffDeclaredTools, type ToolDelta } from "./tool-delta.js";

export interface DeclareToolChangesArgs {
  /** Tools declared by the transcript so far (`createDeclaredToolSet(context.messages)`, kept up to date). */
  transcriptDeclared: ReadonlyMap<string, string>;
  /** Messages about to be injected, in order. Not mutated. */
  pending: readonly AgentMessage[];
  /** `context.tools` as keyed declarations, in order (see `keyedToolDecl`). */
  tools: readonly KeyedToolDecl[];
  /** Timestamp for an inserted declaration message. */
  now: number;
}

/**
 * Returns the pending list to inject (always a new array; `pending` is left untouched):
 * - The last pending system message, if any, carries exactly the delta between the tools declared
 *   by the transcript plus every pending message (its own tool fields ignored) and `tools`. The
 *   caller's object is returned as is when there is no delta and it declared nothing (missing or
 *   empty lists); otherwise it is replaced by a shallow copy whose tool fields are the delta,
 *   empty lists omitted. Earlier pending system messages are left alone and count as declared.
 * - Without a pending system message, a delta is announced by `{role:"system", content:"",
 *   toolsAdded?, toolsRemoved?, timestamp: now}` inserted first, i.e. before the first non-system
 *   pending message; with nothing pending it is the only injected message (as the reference does,
 *   e.g. on `agentLoopContinue` or a later turn).
 * - Otherwise nothing changes.
 */
export function declareToolChanges(args: DeclareToolChangesArgs): AgentMessage[] {
  const { pending, tools } = args;
  let last = -1;
  for (let i = pending.length - 1; i >= 0; i--) {
    if (isSystemMessage(pending[i])) {
      last = i;
      break;
    }
  }

  // Earlier pending system messages keep their tool fields and therefore count; copy the
  // transcript's set only when one of them actually changes it.
  let declared: ReadonlyMap<string, string> = args.transcriptDeclared;
  let copy: DeclaredToolSet | undefined;
  for (let i = 0; i < last; i++) {
    const message = pending[i];
    if (isSystemMessage(message) && hasToolFields(message)) {
      copy ??= new Map(args.transcriptDeclared);
      applySystemMessage(copy, message);
    }
  }
  if (copy !== undefined) declared = copy;

  const delta = diffDeclaredTools(declared, tools);
  if (last >= 0) {
    const out = pending.slice();
    const message = pending[last] as SystemMessage;
    if (delta !== undefined || hasToolFields(message)) out[last] = withToolFields(message, delta);
    return out;
  }
  if (delta === undefined) return pending.slice();
  return [{ role: "system", content: "", ...toolFields(delta), timestamp: args.now }, ...pending];
}

/** A shallow copy of `message` whose tool fields are exactly `delta` (none when undefined). */
function withToolFields(message: SystemMessage, delta: ToolDelta | undefined): SystemMessage {
  const { toolsAdded: _added, toolsRemoved: _removed, ...rest } = message;
  return delta === undefined ? rest : { ...rest, ...toolFields(delta) };
}

/** The delta as message fields, empty lists omitted. */
function toolFields(delta: ToolDelta): Pick<SystemMessage, "toolsAdded" | "toolsRemoved"> {
  const fields: Pick<SystemMessage, "toolsAdded" | "toolsRemoved"> = {};
  if (delta.toolsAdded.length > 0) fields.toolsAdded = delta.toolsAdded;
  if (delta.toolsRemoved.length > 0) fields.toolsRemoved = delta.toolsRemoved;
  return fields;
}
