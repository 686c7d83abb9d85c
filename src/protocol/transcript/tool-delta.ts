/** The difference between declared tools and executable tools, as R30 announces it. */
import type { ToolDecl, ToolReference } from "../messages.js";
import type { KeyedToolDecl } from "./declaration-key.js";

/** Tool changes that turn one declared set into another (never both lists empty). */
export interface ToolDelta {
  /** New or changed declarations, in `tools` order. */
  toolsAdded: ToolDecl[];
  /** Gone or changed names, in previously declared order. */
  toolsRemoved: ToolReference[];
}

/**
 * What must be announced so that replaying `declared` plus the delta (removals, then additions)
 * yields exactly `tools`; undefined when they already match. A changed definition is a removal
 * plus an addition. Tools sharing a name count once, the first winning (the one a by-name lookup
 * executes). Allocation-free when the declared set lists the tools in the same order, the
 * common case on every request after the first.
 */
export function diffDeclaredTools(declared: ReadonlyMap<string, string>, tools: readonly KeyedToolDecl[]): ToolDelta | undefined {
  if (sameInOrder(declared, tools)) return undefined;

  const current = new Map<string, KeyedToolDecl>();
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    if (!current.has(tool.decl.name)) current.set(tool.decl.name, tool);
  }
  const toolsAdded: ToolDecl[] = [];
  for (const tool of current.values()) {
    if (declared.get(tool.decl.name) !== tool.key) toolsAdded.push(tool.decl);
  }
  const toolsRemoved: ToolReference[] = [];
  for (const [name, key] of declared) {
    if (current.get(name)?.key !== key) toolsRemoved.push({ name });
  }
  return toolsAdded.length === 0 && toolsRemoved.length === 0 ? undefined : { toolsAdded, toolsRemoved };
}

// Same size and same keys position by position means no delta (duplicate names in `tools`
// cannot pass: they would need the same name twice in the map).
function sameInOrder(declared: ReadonlyMap<string, string>, tools: readonly KeyedToolDecl[]): boolean {
  if (declared.size !== tools.length) return false;
  let i = 0;
  for (const key of declared.values()) {
    if (tools[i++].key !== key) return false;
  }
  return true;
}
