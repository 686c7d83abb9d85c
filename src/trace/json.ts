/** JSON-safe copies of arbitrary values (tool details may hold anything) and secret redaction. */
import type { JsonValue } from "../types.js";
import { SECRET_PATTERNS } from "../boundary/secret-keys.js";

/** Nesting deeper than this becomes `"[…]"` (a `toJSON` returning fresh objects forever ends here). */
const MAX_DEPTH = 100;

/**
 * A JSON-safe deep copy: drops functions, symbols and `undefined` fields, turns `bigint` into a
 * string, an `Error` into `{ name, message }`, non-finite numbers into `null`, a cycle into
 * `"[Circular]"` (a shared, non-cyclic reference is copied twice), and a value that cannot be
 * read (a revoked Proxy, a throwing getter or `toJSON`) into `"[unreadable]"`. Never throws.
 */
export function toJsonSafe(value: unknown, ancestors: object[] = []): JsonValue | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "bigint":
      return value.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return null;
  try {
    return objectToJsonSafe(value as object, ancestors);
  } catch {
    return "[unreadable]";
  }
}

function objectToJsonSafe(object: object, ancestors: object[]): JsonValue | undefined {
  if (ancestors.includes(object)) return "[Circular]";
  if (ancestors.length >= MAX_DEPTH) return "[…]";
  if (object instanceof Error) return { name: object.name, message: object.message };
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
  const inner = [...ancestors, object];
  if (Array.isArray(object)) return object.map((item) => toJsonSafe(item, inner) ?? null);
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return toJsonSafe(toJSON.call(object), inner);
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(object)) {
    let item: unknown;
    try {
      item = (object as Record<string, unknown>)[key];
    } catch {
      item = "[unreadable]";
    }
    const copy = toJsonSafe(item, inner);
    if (copy !== undefined) out[key] = copy;
  }
  return out;
}

/**
 * Replaces every occurrence of the given secrets, and anything shaped like a credential (an
 * Anthropic or other `sk-` key, a bearer token; the inspector's sanitizer uses the same patterns).
 */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, "[redacted]");
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  }
  return out;
}
