/**
 * One canonical serialization of a tool declaration, shared by both sides of the R30 comparison
 * (tools declared in the transcript and tools in `context.tools`), so "same declaration" means
 * "same string". Computed once per declaration object: these comparisons run before every request.
 */
import type { ToolDecl } from "../messages.js";

/** A declaration paired with its key, so hot paths compare strings instead of serializing. */
export interface KeyedToolDecl {
  readonly decl: ToolDecl;
  /** `toolDeclKey(decl)`. */
  readonly key: string;
}

// Weak so declarations dropped from a transcript do not stay alive through the cache.
const keys = new WeakMap<ToolDecl, string>();
const keyed = new WeakMap<ToolDecl, KeyedToolDecl>();

/**
 * The declaration key: `JSON.stringify({name, description, parameters})`, in that key order.
 * Extra fields (labels, `execute`) are ignored, as is anything JSON drops (undefined values,
 * non-enumerable schema markers). Memoized per object, so treat declarations as immutable.
 * Any other producer of keys (e.g. `declarationKey(tool)` in src/tools) must use this exact format.
 */
export function toolDeclKey(decl: ToolDecl): string {
  let key = keys.get(decl);
  if (key === undefined) {
    key = JSON.stringify({ name: decl.name, description: decl.description, parameters: decl.parameters });
    keys.set(decl, key);
  }
  return key;
}

/** `{decl, key}` for a declaration; the same object is returned for the same declaration. */
export function keyedToolDecl(decl: ToolDecl): KeyedToolDecl {
  let entry = keyed.get(decl);
  if (entry === undefined) {
    entry = { decl, key: toolDeclKey(decl) };
    keyed.set(decl, entry);
  }
  return entry;
}
