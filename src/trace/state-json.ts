/**
 * The line of a `state` record (src/trace/FORMAT.md), redacted. A run writes about fifty per five
 * turns, and their variable parts (actor, value, status, cause) come from a few dozen strings: each
 * part's redacted JSON is kept by its text, so a record costs its state value's JSON and a few
 * lookups, not a copy of the line and three scans of it. Output is byte-for-byte what
 * `redact(JSON.stringify(record), secrets)` gives (test/boundary/inspect-cost.test.ts).
 */
import { redact, toJsonSafe } from "./json.js";
import { writtenAsIs } from "./plain-json.js";
import { splittable } from "./event-json.js";
import { boundedMemo, secretsWatch } from "./memo.js";

export interface StateFields {
  seq: number;
  /** `t` as the line holds it (`msJson`). */
  tJson: string;
  run: number;
  actor: string;
  value: unknown;
  status: string;
  cause: string;
}

/** The record's own text between its variable parts: a secret inside it is redacted line-wise. */
const FIXED_WORDS = "type state seq run actor value status cause";

/** A part's text is kept while there are at most this many (state names and event types recur). */
const MEMO_LIMIT = 1_000;

/** `JSON.stringify` of a number as the line holds it (`seq`, `run`). */
export const numberJson = (n: number): string => (Number.isFinite(n) ? `${n}` : "null");

/** ".001" … ".999" without trailing zeros, and "" for 0: the fractions of a time in whole µs. */
const FRACTIONS = Array.from({ length: 1000 }, (_, i) => (i === 0 ? "" : `.${String(i).padStart(3, "0").replace(/0+$/, "")}`));

/**
 * `JSON.stringify(us / 1000)` for a time in whole microseconds, written from integers: finding a
 * double's shortest form is slow, and every record has one. Below 2^43 µs (101 days) doubles near
 * the quotient are far closer together than 0.001, so its shortest form is its three decimals,
 * trimmed (test/boundary/inspect-cost.test.ts compares the two).
 */
export function msJson(us: number): string {
  if (!(us >= 0 && us < 2 ** 43) || !Number.isInteger(us)) return JSON.stringify(us / 1000);
  const fraction = us % 1000;
  return `${(us - fraction) / 1000}${FRACTIONS[fraction]}`;
}

export function createStateJson(secrets: readonly string[]): (fields: StateFields) => string {
  const splitsHere = () => splittable(secrets) && secrets.every((secret) => secret.length < 4 || !FIXED_WORDS.includes(secret));
  let piecewise = splitsHere();
  const secretsChanged = secretsWatch(secrets);
  /** Raw string (actor, status, cause) or a value's JSON -> its redacted JSON. */
  const stringJson = boundedMemo((text) => redact(JSON.stringify(text), secrets), MEMO_LIMIT);
  const valueJson = boundedMemo((json) => redact(json, secrets), MEMO_LIMIT);

  /** A caller may change its `secrets` array in place: then nothing kept is reused. */
  const checkSecrets = () => {
    if (!secretsChanged()) return;
    piecewise = splitsHere();
    stringJson.clear();
    valueJson.clear();
  };

  /**
   * A state value as XState makes it (a state name, or objects of them), from the kept names, or
   * `undefined` for anything else (the general path writes it).
   */
  const treeJson = (value: unknown, depth: number): string | undefined => {
    if (typeof value === "string") return stringJson(value);
    if (typeof value !== "object" || value === null || Array.isArray(value) || depth > 16) return undefined;
    const proto = Object.getPrototypeOf(value) as unknown;
    if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
    const record = value as Record<string, unknown>;
    let out = "{";
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const inner = treeJson(record[key], depth + 1);
      if (inner === undefined) return undefined;
      out += `${out.length === 1 ? "" : ","}${stringJson(key)}:${inner}`;
    }
    return `${out}}`;
  };

  /** The general path: a state value that is not only names, as the recorder always wrote it. */
  const anyValueJson = (value: unknown): string => {
    let json: string | undefined;
    try {
      if (value !== undefined && writtenAsIs(value, 0, true)) json = JSON.stringify(value);
    } catch {
      // A getter or Proxy trap that threw: `toJsonSafe` copes.
    }
    // A function or symbol has no JSON at all: `null`, as for any value JSON leaves out.
    return json ?? JSON.stringify(toJsonSafe(value) ?? null);
  };

  const tree = (value: unknown): string | undefined => {
    try {
      return treeJson(value, 0);
    } catch {
      return undefined; // a getter or Proxy trap that threw: the general path copes.
    }
  };

  return ({ seq, tJson, run, actor, value, status, cause }) => {
    checkSecrets();
    const head = `{"type":"state","seq":${numberJson(seq)},"t":${tJson},"run":${numberJson(run)},"actor":`;
    if (!piecewise) return redact(`${head}${JSON.stringify(actor)},"value":${anyValueJson(value)},"status":${JSON.stringify(status)},"cause":${JSON.stringify(cause)}}`, secrets);
    const names = tree(value);
    return `${head}${stringJson(actor)},"value":${names ?? valueJson(anyValueJson(value))},"status":${stringJson(status)},"cause":${stringJson(cause)}}`;
  };
}
