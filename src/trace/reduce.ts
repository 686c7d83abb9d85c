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

function replaceImageData(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(replaceImageData);
  if (value === null || typeof value !== "object") return value;
  const object = value as JsonObject;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(object)) {
    if (isSecretKeyName(key)) out[key] = item === null || item === "" ? item : "[redacted]";
    // Tool details are the tool's own business (kept as returned, credentials aside).
    else out[key] = key === "details" ? redactSecretKeys(item) : replaceImageData(item);
  }
  if (out.type === "image" && typeof out.data === "string") out.data = `<${base64Bytes(out.data)} bytes>`;
  return out;
}

function redactSecretKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(redactSecretKeys);
  if (value === null || typeof value !== "object") return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value as JsonObject)) {
    out[key] = isSecretKeyName(key) ? (item === null || item === "" ? item : "[redacted]") : redactSecretKeys(item);
  }
  return out;
}

/** The decoded size of base64 text. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}
