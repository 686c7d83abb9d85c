/**
 * `SanitizeOptions` resolved to their defaults, once per options object, together with the
 * sanitizer's memory of what it already sanitized under them (`reused`, see sanitize.ts). An
 * options object the caller changes in place (a secret pushed onto `secrets`, a limit changed) is
 * noticed on the next call and resolved afresh, with an empty memory: a form sanitized before a
 * value became secret is never sent after it did.
 */
import { normalizeKeyName } from "../boundary/secret-keys.js";

export interface SanitizeOptions {
  /**
   * Summarize message histories and truncate tool `details` and long strings (default `true`).
   * `false` keeps the data as it is, minus secrets: redaction is always on.
   */
  summarize?: boolean;
  /** Characters of the last message kept in a history summary (default 80). */
  previewChars?: number;
  /** Longer strings are cut to this many characters (default 1,000). */
  maxStringChars?: number;
  /** Tool `details` whose JSON is longer are replaced by a preview string (default 200). */
  maxDetailsChars?: number;
  /** Arrays keep this many items, then a `"… N more"` marker (default 50). */
  maxArrayItems?: number;
  /** Deeper values become `"[…]"` (default 12). */
  maxDepth?: number;
  /** Extra keys whose values are always replaced by `"[redacted]"` (case-insensitive). */
  redactKeys?: readonly string[];
  /** Exact values that must never appear (e.g. the API key in use); replaced by `"[redacted]"`. */
  secrets?: readonly string[];
}

/** A sanitized form kept for reuse: valid wherever the walk is shallower than `maxDepth - height`. */
export interface Reused {
  out: unknown;
  /** How many object levels the sanitized input spans below itself (0: only primitives inside). */
  height: number;
  /**
   * An array's length when it was sanitized: the one kind of plain data that grows in place (the
   * Agent's transcript, appended to as messages end); a longer array is sanitized again.
   */
  length?: number;
}

export interface Resolved {
  summarize: boolean;
  previewChars: number;
  maxStringChars: number;
  maxDetailsChars: number;
  maxArrayItems: number;
  maxDepth: number;
  /** Extra key names, normalized; `isSecretKeyName` covers the built-in ones. */
  redactKeys: Set<string>;
  /** Memo of `isSecretKeyName(key) || redactKeys.has(key)`, by key. */
  redactedKeys: Map<string, boolean>;
  secrets: readonly string[];
  /** Sanitized forms of plain objects and arrays, by identity; `null`: sanitize everything afresh. */
  reused: WeakMap<object, Reused> | null;
  /** Whole sanitized events and snapshots, by identity (each is inspected several times). */
  events: WeakMap<object, object>;
  snapshots: WeakMap<object, Record<string, unknown>>;
  /** The caller's option values this was resolved from, to notice a change made in place. */
  source: readonly unknown[];
}

const SCALARS = ["summarize", "previewChars", "maxStringChars", "maxDetailsChars", "maxArrayItems", "maxDepth"] as const;

/** Every option value, arrays spread, in a fixed order (`undefined` marks an array's end). */
function sourceOf(options: SanitizeOptions): unknown[] {
  const values: unknown[] = SCALARS.map((key) => options[key]);
  for (const list of [options.redactKeys, options.secrets]) {
    values.push(list === undefined ? null : list.length);
    if (list) values.push(...list);
  }
  return values;
}

/** Whether `options` still holds the values `source` was taken from (no allocation: runs per call). */
function unchanged(source: readonly unknown[], options: SanitizeOptions): boolean {
  let i = 0;
  for (const key of SCALARS) if (source[i++] !== options[key]) return false;
  for (const list of [options.redactKeys, options.secrets]) {
    if (source[i++] !== (list === undefined ? null : list.length)) return false;
    if (list) for (const item of list) if (source[i++] !== item) return false;
  }
  return true;
}

function build(options: SanitizeOptions, source: unknown[], reuse: boolean): Resolved {
  return {
    summarize: options.summarize ?? true,
    previewChars: options.previewChars ?? 80,
    maxStringChars: options.maxStringChars ?? 1_000,
    maxDetailsChars: options.maxDetailsChars ?? 200,
    maxArrayItems: options.maxArrayItems ?? 50,
    maxDepth: options.maxDepth ?? 12,
    redactKeys: new Set((options.redactKeys ?? []).map(normalizeKeyName)),
    redactedKeys: new Map(),
    secrets: (options.secrets ?? []).filter((secret) => secret.length >= 4),
    reused: reuse ? new WeakMap() : null,
    events: new WeakMap(),
    snapshots: new WeakMap(),
    source,
  };
}

const resolvedByOptions = new WeakMap<SanitizeOptions, Resolved>();
const DEFAULTS: SanitizeOptions = {};

/** The resolved options, with their memory of sanitized forms (a fresh one if the options changed). */
export function resolve(options: SanitizeOptions = DEFAULTS): Resolved {
  const known = resolvedByOptions.get(options);
  if (known && unchanged(known.source, options)) return known;
  const fresh = build(options, sourceOf(options), true);
  resolvedByOptions.set(options, fresh);
  return fresh;
}

/** The same options with no memory: every value is sanitized afresh (tests compare the two). */
export function resolveWithoutReuse(options: SanitizeOptions = DEFAULTS): Resolved {
  return build(options, sourceOf(options), false);
}
