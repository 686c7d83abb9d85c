/** The two reductions that keep traces small (src/trace/FORMAT.md, "Agent event"). */
import type { AgentEvent, JsonObject, JsonValue } from "../types.js";
import { toJsonSafe } from "./json.js";
import { isSecretKeyName } from "../boundary/secret-keys.js";

/**
 * A JSON-safe copy of `event` as the trace stores it: a `message_update` keeps its
 * `assistantMessageEvent` without `partial` and its `message` becomes
 * `{ role: "assistant", partial: true }`; every image's `data` becomes `"<N bytes>"`. Tool
 * `details` are kept as the tool returned them, except that, there as everywhere, the value of a
 * key named like a credential (`token`, `apiKey`, `authorization`, `cookie`, `*_API_KEY`, …) is
 * replaced by `"[redacted]"`: the recorder redacts those even when it was given no `secrets`.
 */
export function reduceEventForTrace(event: AgentEvent): JsonObject & { type: string } {
  const copy = toJsonSafe(event) as JsonObject & { type: string };
  if (copy.type === "message_update") {
    copy.message = { role: "assistant", partial: true };
    const inner = copy.assistantMessageEvent;
    if (inner && typeof inner === "object" && !Array.isArray(inner)) delete (inner as JsonObject).partial;
  }
  return replaceImageData(copy) as JsonObject & { type: string };
}

/** The reductions below a JSON-safe copy: image data, and credentials by key name. */
export function replaceImageData(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(replaceImageData);
  if (value === null || typeof value !== "object") return value;
  const object = value as JsonObject;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(object)) out[key] = reduceEntry(key, item);
  if (out.type === "image" && typeof out.data === "string") out.data = `<${base64Bytes(out.data)} bytes>`;
  return out;
}

/** `isSecretKeyName`, memoized: the same few key names come in every event. */
const secretKeyNames = new Map<string, boolean>();
export function isSecretKey(key: string): boolean {
  let secret = secretKeyNames.get(key);
  if (secret === undefined) {
    secret = isSecretKeyName(key);
    // Bounded: keys that are data (ids used as property names) must not grow it forever.
    if (secretKeyNames.size >= 10_000) secretKeyNames.clear();
    secretKeyNames.set(key, secret);
  }
  return secret;
}

/** The reduced value of `key` in an object. */
export function reduceEntry(key: string, item: JsonValue): JsonValue {
  if (isSecretKey(key)) return item === null || item === "" ? item : "[redacted]";
  // Tool details are the tool's own business (kept as returned, credentials aside).
  return key === "details" ? redactSecretKeys(item) : replaceImageData(item);
}

function redactSecretKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(redactSecretKeys);
  if (value === null || typeof value !== "object") return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value as JsonObject)) {
    out[key] = isSecretKey(key) ? (item === null || item === "" ? item : "[redacted]") : redactSecretKeys(item);
  }
  return out;
}

/** The decoded size of base64 text. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}
