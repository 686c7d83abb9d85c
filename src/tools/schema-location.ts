/** Where a cfworker error points: the schema node holding its keyword, and the value it judged. */
import { refTarget, type CompiledSchema } from "./compiled-schema.js";
import { isPlainObject } from "./json-kind.js";
import { pointerSegments } from "./path.js";

/**
 * The schema object that holds the failing keyword, found by walking `keywordLocation` from the
 * root (through `$ref` targets, which the location passes as a `$ref` segment).
 */
export function parentNode(schema: CompiledSchema, keywordLocation: string): Record<string, unknown> | undefined {
  const segments = pointerSegments(keywordLocation);
  let node: unknown = schema.root;
  for (const segment of segments.slice(0, -1)) {
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    if (segment === "$ref" && isPlainObject(node) && typeof node.$ref === "string") node = refTarget(schema, node);
    else node = Object.hasOwn(node, segment) ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return isPlainObject(node) ? node : undefined;
}

export function valueAt(instance: unknown, segments: readonly string[]): unknown {
  let value = instance;
  for (const segment of segments) {
    if (!isPlainObject(value) && !Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return value;
}
