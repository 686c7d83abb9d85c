import type { JsonValue } from "../types.js";

/**
 * SPEC R13: what enters a run is kept as plain JSON data, so every snapshot serializes. Values
 * that JSON cannot hold are converted once, where they enter (tool results, messages from hooks
 * and queues), by `toJsonSafe` (below; the trace recorder uses it too). Plain JSON comes back as
 * the same object (no copy), so the common case costs one walk and no allocation.
 */
export function toPlainData<T>(value: T): T {
  // A value that is not an object is answered without the walk's set.
  if (typeof value !== "object" || value === null) return isPlain(value, idle) ? value : (toJsonSafe(value) as T);
  // The walk leaves its set empty (`finally`), so one set serves every walk; a walk that starts
  // inside another (a getter or Proxy trap read by `isPlain` calling back in) gets its own.
  const seen = walking ? new Set<object>() : idle;
  walking = true;
  try {
    return isPlain(value, seen) ? value : (toJsonSafe(value) as T);
  } finally {
    if (seen === idle) walking = false;
  }
}

/** The set of objects on the path of the walk in progress; empty between walks. */
const idle = new Set<object>();
let walking = false;

function isPlain(value: unknown, seen: Set<object>): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  const object = value as object;
  if (seen.has(object)) return false;
  let proto: object | null;
  try {
    proto = Object.getPrototypeOf(object);
  } catch {
    return false;
  }
  const isArray = Array.isArray(object);
  if (!isArray && proto !== Object.prototype && proto !== null) return false;
  seen.add(object);
  try {
    if (isArray) {
      for (const item of object as unknown[]) if (item === undefined || !isPlain(item, seen)) return false;
    } else {
      if (typeof (object as { toJSON?: unknown }).toJSON === "function") return false;
      for (const key in object) {
        const item = (object as Record<string, unknown>)[key];
        if (item !== undefined && !isPlain(item, seen)) return false;
      }
    }
  } catch {
    return false;
  } finally {
    seen.delete(object);
  }
  return true;
}

/** Nesting deeper than this becomes `"[…]"` (a `toJSON` returning fresh objects forever ends here). */
const MAX_DEPTH = 100;

/**
 * A JSON-safe deep copy: drops functions, symbols and `undefined` fields, turns `bigint` into a
 * string, an `Error` into `{ name, message }`, a `Date` into its ISO string, a `Map` into an
 * object, a `Set` or typed array into an array, non-finite numbers into `null`, a cycle into
 * `"[Circular]"` (a shared, non-cyclic reference is copied twice), and a value that cannot be read
 * (a revoked Proxy, a throwing getter or `toJSON`) into `"[unreadable]"`. Never throws.
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
  if (object instanceof Map) return toJsonSafe(Object.fromEntries(object), inner);
  if (object instanceof Set) return toJsonSafe([...object], inner);
  if (ArrayBuffer.isView(object) && !(object instanceof DataView)) return Array.from(object as unknown as ArrayLike<number>, (n) => toJsonSafe(n) ?? null);
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

/** Messages found plain already: a transcript enters the run on every run, each message is walked once. */
const plainMessages = new WeakSet<object>();

/**
 * R13, R14: a run's prompts or transcript as plain data, where they enter the run (the loop's entry
 * points, an embedded run's input, an Agent's run). The same array when every message is plain
 * (no copy, and a message seen before is not walked again); otherwise a new array in which each
 * message that is not is converted (`toJsonSafe`): the caller's array and messages are never changed.
 * (A message changed after it was found plain is the app's to keep plain.)
 */
export function toPlainMessages<T>(messages: readonly T[]): T[] {
  let copy: T[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (typeof message === "object" && message !== null && plainMessages.has(message)) continue;
    const plain = toPlainData(message);
    if (plain === message) {
      if (typeof message === "object" && message !== null) plainMessages.add(message);
      continue;
    }
    copy ??= messages.slice();
    copy[i] = plain;
  }
  return copy ?? (messages as T[]);
}
