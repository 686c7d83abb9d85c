/**
 * What the inspector sees of a run: plain, small, secret-free data. Context goes over the wire in
 * every snapshot (a 50-message transcript made 60 MB per 5,000 events), so message histories are
 * summarized, long strings and tool `details` truncated, and anything that looks like a credential
 * redacted. Node-free; every function here is pure and idempotent (sanitizing twice changes
 * nothing), because @statelyai/inspect may serialize a buffered event twice.
 */
import type { AnyEventObject, InspectionEvent } from "xstate";
import { isSecretKeyName, normalizeKeyName, SECRET_PATTERNS } from "../boundary/secret-keys.js";

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

/** A summarized message history. */
export interface MessagesSummary {
  count: number;
  last: { role: string; preview: string };
}

export const REDACTED = "[redacted]";

/** What a value that cannot be read (revoked Proxy, throwing getter or `toJSON`) becomes. */
export const UNREADABLE = "[unreadable]";

/** An image's `data` once sanitized; only this exact shape is kept as it is (idempotence). */
const IMAGE_SUMMARY = /^<\d+ bytes>$/;


interface Resolved {
  summarize: boolean;
  previewChars: number;
  maxStringChars: number;
  maxDetailsChars: number;
  maxArrayItems: number;
  maxDepth: number;
  /** Extra key names, normalized; `isSecretKeyName` covers the built-in ones. */
  redactKeys: Set<string>;
  secrets: readonly string[];
}

const cache = new WeakMap<SanitizeOptions, Resolved>();
const DEFAULTS: SanitizeOptions = {};

function resolve(options: SanitizeOptions = DEFAULTS): Resolved {
  let resolved = cache.get(options);
  if (!resolved) {
    resolved = {
      summarize: options.summarize ?? true,
      previewChars: options.previewChars ?? 80,
      maxStringChars: options.maxStringChars ?? 1_000,
      maxDetailsChars: options.maxDetailsChars ?? 200,
      maxArrayItems: options.maxArrayItems ?? 50,
      maxDepth: options.maxDepth ?? 12,
      redactKeys: new Set((options.redactKeys ?? []).map(normalizeKeyName)),
      secrets: (options.secrets ?? []).filter((secret) => secret.length >= 4),
    };
    cache.set(options, resolved);
  }
  return resolved;
}

/** Replaces secrets inside a string. */
export function redactString(value: string, options?: SanitizeOptions): string {
  const { secrets } = resolve(options);
  let out = value;
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** At most `max` characters, marker included, so truncating twice changes nothing. */
function truncate(value: string, max: number): string {
  if (value.length <= max) return value;
  const marker = `… (${value.length} chars)`;
  return `${value.slice(0, Math.max(0, max - marker.length))}${marker}`;
}

type Message = { role: string; content?: unknown; stopReason?: unknown; toolName?: unknown };

function isMessage(value: unknown): value is Message {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as Message).role === "string";
}

const isHistory = (value: readonly unknown[]) => value.length > 0 && value.every(isMessage);

/** One line of text for a message: its text, else its tool calls, else its role's details. */
function previewOf(message: Message, chars: number, options: SanitizeOptions | undefined): string {
  const parts: string[] = [];
  const content = message.content;
  if (typeof content === "string") parts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content as { type?: string; text?: string; thinking?: string; name?: string }[]) {
      if (!block || typeof block !== "object") continue;
      if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
      else if (block.type === "toolCall") parts.push(`[toolCall ${String(block.name)}]`);
      else if (block.type === "thinking") parts.push("[thinking]");
      else if (block.type === "image") parts.push("[image]");
    }
  }
  if (message.role === "toolResult" && typeof message.toolName === "string") parts.unshift(`${message.toolName}:`);
  if (parts.length === 0 && typeof message.stopReason === "string") parts.push(`(${message.stopReason})`);
  return truncate(redactString(parts.join(" ").replace(/\s+/g, " ").trim(), options), chars);
}

/** `{ count, last: { role, preview } }` for a message history. */
export function summarizeMessages(messages: readonly unknown[], options?: SanitizeOptions): MessagesSummary {
  const { previewChars } = resolve(options);
  const last = messages[messages.length - 1];
  return {
    count: messages.length,
    last: isMessage(last) ? { role: last.role, preview: previewOf(last, previewChars, options) } : { role: "?", preview: "" },
  };
}

/**
 * A plain, JSON-safe, sanitized copy of any value: message histories (arrays of `{role}` objects)
 * summarized, `details` truncated, long strings and arrays cut, image data replaced by its size,
 * credentials redacted (by key and by shape), actor refs reduced to their `toJSON`, functions
 * dropped, cycles marked.
 */
export function sanitizeValue(value: unknown, options?: SanitizeOptions): unknown {
  return walk(value, resolve(options), options, 0, []);
}

function walk(value: unknown, o: Resolved, options: SanitizeOptions | undefined, depth: number, ancestors: object[]): unknown {
  switch (typeof value) {
    case "string":
      return o.summarize ? truncate(redactString(value, options), o.maxStringChars) : redactString(value, options);
    case "number":
      return Number.isFinite(value) ? value : null;
    case "boolean":
      return value;
    case "bigint":
      return value.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return null;
  // Anything may be in context or tool details: an immer draft revoked after its producer, a
  // getter or `toJSON` that throws. The observer runs inside the inspector (often in a deferred
  // callback), where a throw would crash the host: such a value becomes a marker instead.
  try {
    return walkObject(value as object, o, options, depth, ancestors);
  } catch {
    return UNREADABLE;
  }
}

function walkObject(value: object, o: Resolved, options: SanitizeOptions | undefined, depth: number, ancestors: object[]): unknown {
  let object = value;
  if (ancestors.includes(object)) return "[Circular]";
  if (depth >= o.maxDepth) return "[…]";
  if (object instanceof Error) {
    return { name: walk(object.name, o, options, depth + 1, ancestors), message: walk(object.message, o, options, depth + 1, ancestors) };
  }
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
  if (object instanceof Map) object = Object.fromEntries(object);
  else if (object instanceof Set) object = [...object];
  else {
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const json = toJSON.call(object) as unknown;
      // One level deeper: a `toJSON` that returns a fresh object with a `toJSON` must end.
      if (json !== object) return walk(json, o, options, depth + 1, ancestors);
    }
  }
  const inner = [...ancestors, object];
  if (Array.isArray(object)) {
    if (o.summarize && isHistory(object)) return summarizeMessages(object, options);
    const limit = o.summarize ? o.maxArrayItems : Infinity;
    const out = object.slice(0, limit).map((item) => {
      const copy = walk(item, o, options, depth + 1, inner);
      return copy === undefined ? null : copy;
    });
    if (object.length > limit) out.push(`… ${object.length - limit} more`);
    return out;
  }
  const out: Record<string, unknown> = {};
  const record = object as Record<string, unknown>;
  const keys = Object.keys(record);
  const limit = o.summarize ? o.maxArrayItems * 4 : Infinity;
  for (const key of keys.slice(0, limit)) {
    let item: unknown;
    try {
      item = record[key];
    } catch {
      item = UNREADABLE;
    }
    // A key is data too: a secret used as a property name is redacted like any string.
    const name = o.summarize ? truncate(redactString(key, options), o.maxStringChars) : redactString(key, options);
    if (isSecretKeyName(key) || o.redactKeys.has(normalizeKeyName(key))) {
      if (item !== undefined) out[name] = item === null || item === "" ? item : REDACTED;
      continue;
    }
    let copy: unknown;
    if (key === "data" && record.type === "image" && typeof item === "string") copy = IMAGE_SUMMARY.test(item) ? item : `<${base64Bytes(item)} bytes>`;
    else if (key === "details" && o.summarize) copy = truncateDetails(walk(item, o, options, depth + 1, inner), o.maxDetailsChars);
    else copy = walk(item, o, options, depth + 1, inner);
    if (copy !== undefined) out[name] = copy;
  }
  if (keys.length > limit) out["…"] = `${keys.length - limit} more keys`;
  return out;
}

/** Tool details as given when small; otherwise a one-line preview of their JSON. */
function truncateDetails(details: unknown, max: number): unknown {
  if (details === undefined || typeof details === "string") return typeof details === "string" ? truncate(details, max) : details;
  const json = JSON.stringify(details);
  if (json === undefined || json.length <= max) return details;
  return truncate(json, max);
}

function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** A sanitized machine context (for @statelyai/inspect's `sanitizeContext`). */
export function sanitizeContext<T>(context: T, options?: SanitizeOptions): T {
  return sanitizeValue(context, options) as T;
}

/** A sanitized event (for @statelyai/inspect's `sanitizeEvent`); keeps `type`. */
export function sanitizeEvent<T extends AnyEventObject>(event: T, options?: SanitizeOptions): T {
  if (!event || typeof event !== "object") return event;
  const copy = sanitizeValue(event, options) as T;
  return { ...copy, type: typeof event.type === "string" ? redactString(event.type, options) : event.type };
}

/** The fields of any actor snapshot worth showing, sanitized (machine internals dropped). */
export function sanitizeSnapshot(snapshot: unknown, options?: SanitizeOptions): Record<string, unknown> {
  if (!snapshot || typeof snapshot !== "object") return { status: "active" };
  const source = snapshot as Record<string, unknown>;
  const out: Record<string, unknown> = { status: source.status ?? "active" };
  if ("value" in source) out.value = sanitizeValue(source.value, options);
  if ("context" in source) out.context = sanitizeValue(source.context, options);
  if ("input" in source && source.input !== undefined) out.input = sanitizeValue(source.input, options);
  if ("output" in source && source.output !== undefined) out.output = sanitizeValue(source.output, options);
  if ("error" in source && source.error !== undefined) out.error = sanitizeValue(source.error, options);
  if (source.tags instanceof Set || Array.isArray(source.tags)) out.tags = [...(source.tags as Iterable<unknown>)].map(String);
  if (source.children && typeof source.children === "object") {
    // Child actor ids only: a live ref is not data.
    out.children = Object.fromEntries(Object.keys(source.children).map((id) => [id, { id }]));
  }
  return out;
}

/**
 * A sanitized copy of an XState inspection event, usable with any inspection observer:
 * `snapshot`, `event` and action params become plain sanitized data; `actorRef`/`sourceRef` stay
 * (observers read ids from them). `@xstate.actor` events pass unchanged (they carry only refs).
 *
 * ```ts
 * createActor(machine, { inspect: (e) => myObserver(sanitizeInspectionEvent(e)) });
 * ```
 */
export function sanitizeInspectionEvent<E extends InspectionEvent>(event: E, options?: SanitizeOptions): E {
  switch (event.type) {
    case "@xstate.snapshot":
    case "@xstate.transition":
    case "@xstate.microstep":
      return {
        ...event,
        event: sanitizeEvent(event.event, options),
        snapshot: sanitizeSnapshot(event.snapshot, options) as never,
      };
    case "@xstate.event":
      return { ...event, event: sanitizeEvent(event.event, options) };
    case "@xstate.action":
      return { ...event, action: { type: event.action.type, params: sanitizeValue(event.action.params, options) } };
    default:
      return event;
  }
}

/** The wire events of @statelyai/inspect (`StatelyInspectionEvent`), loosely typed. */
export interface StatelyWireEvent {
  type: string;
  snapshot?: unknown;
  event?: unknown;
  definition?: unknown;
  [key: string]: unknown;
}

/**
 * Sanitizes a @statelyai/inspect wire event in full: snapshot (context, input, output, error),
 * event, and the machine definition string (redacted only: the inspector draws the chart from it).
 * Used as the inspector's `serialize` option, the last step before the wire.
 */
export function sanitizeStatelyEvent<E extends StatelyWireEvent>(event: E, options?: SanitizeOptions): E {
  const out: StatelyWireEvent = { ...event };
  if ("snapshot" in event) out.snapshot = sanitizeSnapshot(event.snapshot, options);
  if (event.event && typeof event.event === "object") out.event = sanitizeEvent(event.event as AnyEventObject, options);
  if (typeof event.definition === "string") out.definition = redactString(event.definition, options);
  for (const key of Object.keys(out)) {
    if (key === "snapshot" || key === "event" || key === "definition") continue;
    const value = out[key];
    if (typeof value === "string") out[key] = redactString(value, options);
  }
  return out as E;
}
