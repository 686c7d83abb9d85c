/**
 * The JSON of an agent event as the trace stores it (`reduceEventForTrace`, then `redact`), with
 * the JSON of each message kept by identity: a message is written in its `message_start`,
 * `message_end`, `turn_end` and `agent_end`, and `agent_end` carries the whole run, so without this
 * the recorder serialized every message about four times. Messages that reached an event are
 * immutable (R13: plain data, appended, never edited in place); one mutated anyway is written as
 * it was when first recorded, never with a secret put into it later. Output is byte-for-byte what
 * `redact(JSON.stringify(reduceEventForTrace(event)), secrets)` gives (test/cli/trace.test.ts).
 * The top-level `replaceImageData` of `reduceEventForTrace` is applied here key by key, and the
 * `partial` of a `message_update` is never copied (it was copied, then deleted, on every delta).
 */
import type { AgentEvent, JsonValue } from "../types.js";
import { redact, toJsonSafe } from "./json.js";
import { isSecretKey, reduceEntry, replaceImageData } from "./reduce.js";
import { plainJson } from "./plain-json.js";
import { boundedMemo, secretsWatch } from "./memo.js";

/**
 * Whether redacting each piece of a line gives what redacting the line whole does. The patterns
 * cannot match across JSON punctuation; a secret can if it holds some, or if it could be part of
 * the record's own fields (`"type":"event","seq":12,…`). With such a secret, lines are redacted
 * whole, as before.
 */
export function splittable(secrets: readonly string[]): boolean {
  return secrets.every((secret) => secret.length < 4 || !(/[\s"\\,:{}[\]]/.test(secret) || /^[\d.eE+-]+$/.test(secret) || "type event seq run".includes(secret)));
}

/**
 * The event's JSON, reduced and redacted, or `undefined` when the line must be built and redacted
 * whole (see `splittable`; events that are not plain objects).
 */
export type EventJson = (event: AgentEvent) => string | undefined;

export function createEventJson(secrets: readonly string[]): EventJson {
  let fragments = new WeakMap<object, string>();
  let piecewise = splittable(secrets);
  const secretsChanged = secretsWatch(secrets);

  /** A caller may change its `secrets` array in place: then nothing written before is reused. */
  const checkSecrets = () => {
    if (!secretsChanged()) return;
    fragments = new WeakMap();
    keyJson.clear();
    piecewise = splittable(secrets);
  };

  const json = (value: JsonValue) => redact(JSON.stringify(value), secrets);

  /** A top-level key's (or a short string's) JSON, redacted; the same dozen come in every event. */
  const keyJson = boundedMemo((key) => redact(JSON.stringify(key), secrets), 1_000);

  /** The general path: a JSON-safe copy, reduced, at its real place (cycles, depth). */
  const general = (value: unknown, ancestors: object[]): string | undefined => {
    const copy = toJsonSafe(value, ancestors);
    return copy === undefined ? undefined : json(replaceImageData(copy));
  };

  /** The reduced JSON of a value at `ancestors` (redacted), or `undefined` when JSON has none. */
  const piece = (value: unknown, ancestors: object[]): string | undefined => {
    // An event's type and other short names recur: their JSON is kept as the keys' is.
    if (typeof value === "string" && value.length <= 64) return keyJson(value);
    try {
      if (!isMessage(value)) {
        const plain = plainJson(value, ancestors.length, false);
        return plain === undefined ? undefined : redact(plain, secrets);
      }
      let fragment = fragments.get(value);
      if (fragment === undefined) {
        // Written as if at the deepest place a message has in an event, so valid at any.
        fragment = redact(plainJson(value, 2, false)!, secrets);
        fragments.set(value, fragment);
      }
      return fragment;
    } catch {
      // NOT_PLAIN, or a getter or Proxy trap that threw: the general path copes with both.
      return general(value, ancestors);
    }
  };

  return (event) => {
    checkSecrets();
    if (!piecewise || !isPlainRecord(event) || (event as { type: unknown }).type === "image") return undefined;
    const record = event as unknown as Record<string, unknown>;
    const update = event.type === "message_update";
    if (update && record.message === undefined) return undefined;
    // An event that holds no message (nothing to reuse): its reduced JSON whole, in one pass.
    if (!update && holdsNoMessage(record)) {
      try {
        return redact(plainJson(record, 0, false)!, secrets);
      } catch {
        // NOT_PLAIN, or a getter or Proxy trap that threw: the path below reads key by key.
      }
    }
    const ancestors = [record];
    // Concatenated, not joined: the line stays a rope of the kept fragments (no copy of them).
    let body = "";
    for (const key of Object.keys(record)) {
      let value: unknown;
      try {
        value = record[key];
      } catch {
        value = "[unreadable]";
      }
      let out: string | undefined;
      if (update && key === "message") out = '{"role":"assistant","partial":true}';
      else if (update && key === "assistantMessageEvent") out = withoutPartial(value, ancestors, secrets);
      else if (isSecretKey(key) || key === "details") {
        const copy = toJsonSafe(value, ancestors);
        out = copy === undefined ? undefined : json(reduceEntry(key, copy));
      } else if (Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype) {
        const inner = [record, value];
        out = "[";
        for (let i = 0; i < value.length; i++) out += `${i === 0 ? "" : ","}${piece(value[i], inner) ?? "null"}`;
        out += "]";
      } else out = piece(value, ancestors);
      if (out !== undefined) body += `${body === "" ? "" : ","}${keyJson(key)}:${out}`;
    }
    return `{${body}}`;
  };
}

/** `assistantMessageEvent` without its `partial` (never copied: it is the whole message so far). */
function withoutPartial(value: unknown, ancestors: object[], secrets: readonly string[]): string | undefined {
  if (!isPlainRecord(value)) {
    const copy = toJsonSafe(value, ancestors);
    if (copy === undefined) return undefined;
    if (copy && typeof copy === "object" && !Array.isArray(copy)) delete (copy as { partial?: unknown }).partial;
    return redact(JSON.stringify(replaceImageData(copy)), secrets);
  }
  const inner = [...ancestors, value];
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    if (key === "partial") continue;
    let item: unknown;
    try {
      item = value[key];
    } catch {
      item = "[unreadable]";
    }
    const copy = toJsonSafe(item, inner);
    if (copy !== undefined) out[key] = copy;
  }
  return redact(JSON.stringify(replaceImageData(out)), secrets);
}

/** No message at its top level, nor an array (which may hold messages). */
function holdsNoMessage(record: Record<string, unknown>): boolean {
  try {
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const value = record[key];
      if (Array.isArray(value) || isMessage(value)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

function isMessage(value: unknown): value is object {
  return isPlainRecord(value) && typeof value.role === "string";
}
