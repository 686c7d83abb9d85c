/**
 * The trace's JSON of plain data in one pass: what `JSON.stringify(replaceImageData(toJsonSafe(v)))`
 * writes (or, below a `details` key, `redactSecretKeys` instead of `replaceImageData`), without the
 * two intermediate copies. Plain means what R13 keeps in a run: objects with `Object.prototype` or
 * no prototype and no `toJSON`, arrays, strings, finite or not numbers, booleans, null. Anything
 * else (a cycle, a `Date`, a getter that throws, nesting deeper than `MAX_DEPTH`) throws
 * `NOT_PLAIN`, and the caller takes the general path, which knows how to write it.
 */
import { base64Bytes, isSecretKey } from "./reduce.js";
import { boundedMemo } from "./memo.js";

export const NOT_PLAIN: unique symbol = Symbol("not plain");

/** Well under `toJsonSafe`'s own limit (100), so its `"[…]"` never has to be reproduced here. */
const MAX_DEPTH = 64;

/** A key's JSON with its `:`, and whether it names a credential: one lookup for both. */
interface KeyInfo {
  prefix: string;
  secret: boolean;
}

/** Memoized: the same few key names come in every event; bounded, as keys that are data (ids used as property names) must not grow it forever. */
const keyInfo = boundedMemo((key): KeyInfo => ({ prefix: `${JSON.stringify(key)}:`, secret: isSecretKey(key) }), 10_000);

/** The JSON of `value` at `depth`, or `undefined` where `JSON.stringify` would write nothing. */
export function plainJson(value: unknown, depth: number, details: boolean): string | undefined {
  // One pass that reduces as it writes: on Node 20 it is faster than the native serializer
  // alone, which needed a pass of `writtenAsIs` before it besides.
  return writeJson(value, depth, details);
}

/** Strings that JSON writes between quotes as they are (no quote, backslash, control character or surrogate). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const stringJson = (text: string): string => (text.length <= 256 && !NEEDS_ESCAPE.test(text) ? `"${text}"` : JSON.stringify(text));

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

/**
 * `JSON.stringify` of the reduced value. A cycle runs into `MAX_DEPTH`, as anything nested deeper
 * does: `NOT_PLAIN`, and the caller's general path finds the cycle.
 */
function writeJson(value: unknown, depth: number, details: boolean): string | undefined {
  switch (typeof value) {
    case "string":
      return stringJson(value);
    case "number":
      // As JSON writes a finite number (its shortest form), and null for the others.
      return Number.isFinite(value) ? `${value}` : "null";
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
  if (depth >= MAX_DEPTH) throw NOT_PLAIN;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) throw NOT_PLAIN;
    let out = "[";
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? "" : ","}${writeJson(value[i], depth + 1, details) ?? "null"}`;
    return `${out}]`;
  }
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === "function") throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const image = !details && record.type === "image" && typeof record.data === "string";
  let out = "{";
  for (const key of Object.keys(record)) {
    let json = writeJson(record[key], depth + 1, details || key === "details");
    if (json === undefined) continue;
    const info = keyInfo(key);
    // As `reduceEntry`: a credential's value is redacted unless it is empty.
    if (info.secret) json = json === "null" || json === '""' ? json : '"[redacted]"';
    else if (image && key === "data") json = `"<${base64Bytes(record.data as string)} bytes>"`;
    out += out.length === 1 ? `${info.prefix}${json}` : `,${info.prefix}${json}`;
  }
  return `${out}}`;
}
