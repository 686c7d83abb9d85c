/**
 * How the stores keep JSON: as text, serialized once on the way in. Both stores hold the same
 * text, so a record reads back the same from memory and from SQLite, and no caller can mutate
 * what was stored through a reference it kept.
 */
import { StoreInputError } from "./errors.js";
import type { Json } from "./run-store.js";

export function encodeJson(value: Json, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new StoreInputError(`${what} is not JSON-serializable: ${error instanceof Error ? error.message : String(error)}`);
  }
  // JSON.stringify returns undefined for undefined, a function or a symbol at the top level.
  if (typeof text !== "string") throw new StoreInputError(`${what} is not a JSON value (got ${typeof value})`);
  return text;
}

export function decodeJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/**
 * A session id: a non-empty string of at most 512 characters (it names a lock file's hash and a CLI
 * argument), of whole Unicode characters. A lone surrogate has no UTF-8: SQLite would store it as
 * U+FFFD, so two ids that differ only there would be listed alike and neither as given.
 */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== "string" || sessionId.length === 0 || sessionId.length > 512) {
    throw new StoreInputError(`a session id is a non-empty string of at most 512 characters (got ${describe(sessionId)})`);
  }
  // In a /u pattern a surrogate pair is one character: only a lone surrogate is \p{Cs}.
  if (/\p{Cs}/u.test(sessionId)) throw new StoreInputError(`a session id is a string of whole Unicode characters (got ${describe(sessionId)}, with a lone surrogate)`);
}

/** A sequence number argument: an integer from 0 to `max`. */
export function checkSeq(seq: unknown, max: number, what: string): asserts seq is number {
  if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0 || seq > max) {
    throw new StoreInputError(`${what} must be an integer from 0 to ${max} (got ${describe(seq)})`);
  }
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : String(value);
}
