/**
 * The trace's JSON of plain data in one pass: what `JSON.stringify(replaceImageData(toJsonSafe(v)))`
 * writes (or, below a `details` key, `redactSecretKeys` instead of `replaceImageData`), without the
 * two intermediate copies. Plain means what R13 keeps in a run: objects with `Object.prototype` or
 * no prototype and no `toJSON`, arrays, strings, finite or not numbers, booleans, null. Anything
 * else (a cycle, a `Date`, a getter that throws, nesting deeper than `MAX_DEPTH`) throws
 * `NOT_PLAIN`, and the caller takes the general path, which knows how to write it.
 */
import { base64Bytes, isSecretKey } from "./reduce.js";

export const NOT_PLAIN: unique symbol = Symbol("not plain");

/** Well under `toJsonSafe`'s own limit (100), so its `"[…]"` never has to be reproduced here. */
const MAX_DEPTH = 64;

/** `JSON.stringify(key)`, memoized: the same few key names come in every event. */
let keys = new Map<string, string>();
function keyJson(key: string): string {
  let json = keys.get(key);
  if (json === undefined) {
    json = JSON.stringify(key);
    // Bounded: keys that are data (ids used as property names) must not grow it forever.
    if (keys.size >= 10_000) keys = new Map();
    keys.set(key, json);
  }
  return json;
}

/** The JSON of `value` at `depth`, or `undefined` where `JSON.stringify` would write nothing. */
export function plainJson(value: unknown, depth: number, details: boolean): string | undefined {
  // Most values need no reduction at all: then the native serializer writes the same, faster.
  return writtenAsIs(value, depth, details) ? JSON.stringify(value) : writeJson(value, depth, details, []);
}

/**
 * Whether `JSON.stringify(value)` writes what `writeJson` would: plain data with no credential
 * key (holding more than `null` or `""`), no image data to shorten and no bigint, within
 * `MAX_DEPTH` (a cycle runs into it, and `writeJson` then finds the cycle). Reads, never builds.
 */
export function writtenAsIs(value: unknown, depth: number, details: boolean): boolean {
  if (typeof value !== "object") return typeof value !== "bigint";
  if (value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) if (!writtenAsIs(value[i], depth + 1, details)) return false;
    return true;
  }
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  if (!details && record.type === "image" && typeof record.data === "string") return false;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (isSecretKey(key) && item !== null && item !== "" && item !== undefined) return false;
    if (!writtenAsIs(item, depth + 1, details || key === "details")) return false;
  }
  return true;
}

function writeJson(value: unknown, depth: number, details: boolean, ancestors: object[]): string | undefined {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return JSON.stringify(value.toString());
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return "null";
  if (depth >= MAX_DEPTH || ancestors.includes(value as object)) throw NOT_PLAIN;
  const proto = Object.getPrototypeOf(value) as unknown;
  ancestors.push(value as object);
  try {
    if (Array.isArray(value)) {
      if (proto !== Array.prototype) throw NOT_PLAIN;
      let out = "[";
      for (let i = 0; i < value.length; i++) out += `${i === 0 ? "" : ","}${writeJson(value[i], depth + 1, details, ancestors) ?? "null"}`;
      return `${out}]`;
    }
    if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === "function") throw NOT_PLAIN;
    const record = value as Record<string, unknown>;
    const image = !details && record.type === "image" && typeof record.data === "string";
    let out = "{";
    for (const key of Object.keys(record)) {
      let json = writeJson(record[key], depth + 1, details || key === "details", ancestors);
      if (json === undefined) continue;
      // As `reduceEntry`: a credential's value is redacted unless it is empty.
      if (isSecretKey(key)) json = json === "null" || json === '""' ? json : '"[redacted]"';
      else if (image && key === "data") json = `"<${base64Bytes(record.data as string)} bytes>"`;
      out += `${out.length === 1 ? "" : ","}${keyJson(key)}:${json}`;
    }
    return `${out}}`;
  } finally {
    ancestors.pop();
  }
}
