/**
 * What the inspector sees of a run: plain, small, secret-free data. Context goes over the wire in
 * every snapshot (a 50-message transcript made 60 MB per 5,000 events), so message histories are
 * summarized, long strings and tool `details` truncated, and anything that looks like a credential
 * redacted. Node-free; every function here is pure and idempotent (sanitizing twice changes
 * nothing), because @statelyai/inspect may serialize a buffered event twice.
 *
 * Reuse: a run reports a snapshot per transition, each with the whole context, and a transition
 * changes a few fields of it (XState's `assign` makes new objects only along the changed path). So
 * the sanitized form of each plain object and array is kept, by identity, per options object, and a
 * snapshot costs what changed in it. This relies on inspected data being immutable, as XState
 * requires of context and events (and R13 of the run's data): an object mutated in place after it
 * was first inspected keeps showing its first sanitized form, stale but never less sanitized, so a
 * secret written into it later is not sent. Only plain data is reused (objects whose prototype is
 * `Object.prototype` or `null`, arrays, with nothing unreadable, cyclic or cut by depth inside);
 * `Map`, `Set`, `Date`, `Error`, class instances and anything with `toJSON` are sanitized afresh
 * every time, and so is whatever holds one. Reused forms are frozen, so a consumer cannot change
 * what later events carry.
 */
import type { AnyEventObject, InspectionEvent } from "xstate";
import { isSecretKeyName, normalizeKeyName, SECRET_PATTERNS } from "../boundary/secret-keys.js";
import { resolve, resolveWithoutReuse, type Resolved, type SanitizeOptions } from "./sanitize-options.js";

export type { SanitizeOptions } from "./sanitize-options.js";

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

/** Replaces secrets inside a string. */
export function redactString(value: string, options?: SanitizeOptions): string {
  return redact(value, resolve(options));
}

/** Matches wherever one of the patterns does: one scan tells that most strings need none of them. */
const ANY_SECRET_PATTERN = new RegExp(SECRET_PATTERNS.map((pattern) => pattern.source).join("|"));

function redact(value: string, o: Resolved): string {
  let out = value;
  if (ANY_SECRET_PATTERN.test(out)) for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  for (const secret of o.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** At most `max` characters, marker included, so truncating twice changes nothing. */
function truncate(value: string, max: number): string {
  if (value.length <= max) return value;
  const marker = `… (${value.length} chars)`;
  return `${value.slice(0, Math.max(0, max - marker.length))}${marker}`;
}

const cleanString = (value: string, o: Resolved): string => (o.summarize ? truncate(redact(value, o), o.maxStringChars) : redact(value, o));

type Message = { role: string; content?: unknown; stopReason?: unknown; toolName?: unknown };

function isMessage(value: unknown): value is Message {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as Message).role === "string";
}

const isHistory = (value: readonly unknown[]) => value.length > 0 && value.every(isMessage);

/** One line of text for a message: its text, else its tool calls, else its role's details. */
function previewOf(message: Message, o: Resolved): string {
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
  return truncate(redact(parts.join(" ").replace(/\s+/g, " ").trim(), o), o.previewChars);
}

/** `{ count, last: { role, preview } }` for a message history. */
export function summarizeMessages(messages: readonly unknown[], options?: SanitizeOptions): MessagesSummary {
  return summarize(messages, resolve(options));
}

function summarize(messages: readonly unknown[], o: Resolved): MessagesSummary {
  const last = messages[messages.length - 1];
  return {
    count: messages.length,
    // The role is data too (a secret there is redacted like anywhere else).
    last: isMessage(last) ? { role: cleanString(last.role, o), preview: previewOf(last, o) } : { role: "?", preview: "" },
  };
}

/**
 * A plain, JSON-safe, sanitized copy of any value: message histories (arrays of `{role}` objects)
 * summarized, `details` truncated, long strings and arrays cut, image data replaced by its size,
 * credentials redacted (by key and by shape), actor refs reduced to their `toJSON`, functions
 * dropped, cycles marked. Plain objects and arrays already seen with the same options give back
 * the same (frozen) sanitized form; see "Reuse" above.
 */
export function sanitizeValue(value: unknown, options?: SanitizeOptions): unknown {
  return walk(value, resolve(options), 0, []);
}

/** `sanitizeValue` without reuse: what every call computed before reuse existed (tests compare). */
export function sanitizeValueAfresh(value: unknown, options?: SanitizeOptions): unknown {
  return walk(value, resolveWithoutReuse(options), 0, []);
}

/*
 * What the last `walk` learnt about the value it walked, read by its caller right after it returns
 * (module state instead of a result object: this runs for every node of every snapshot):
 * `walkedHeight`, the object levels below it (-1 for a primitive); `walkedReusable`, whether its
 * result depends on nothing but the value (plain data, nothing cut by depth, no cycle, nothing
 * unreadable).
 */
let walkedHeight = -1;
let walkedReusable = true;
/** Values walked (this one included), to keep only forms that cost more to make than to look up. */
let walkedWeight = 1;

function walked<T>(result: T, height: number, reusable: boolean, weight = 1): T {
  walkedHeight = height;
  walkedReusable = reusable;
  walkedWeight = weight;
  return result;
}

/**
 * Forms of fewer values than this are made again each time: a WeakMap entry costs more than
 * sanitizing `{ n: 1 }`, and such objects come and go with every event.
 */
const MIN_REUSED_WEIGHT = 8;

function walk(value: unknown, o: Resolved, depth: number, ancestors: object[]): unknown {
  switch (typeof value) {
    case "string":
      // Weighed by length too: redaction scans it.
      return walked(cleanString(value, o), -1, true, 1 + (value.length >> 5));
    case "number":
      return walked(Number.isFinite(value) ? value : null, -1, true);
    case "boolean":
      return walked(value, -1, true);
    case "bigint":
      return walked(value.toString(), -1, true);
    case "undefined":
    case "function":
    case "symbol":
      return walked(undefined, -1, true);
  }
  if (value === null) return walked(null, -1, true);
  // Anything may be in context or tool details: an immer draft revoked after its producer, a
  // getter or `toJSON` that throws. The observer runs inside the inspector (often in a deferred
  // callback), where a throw would crash the host: such a value becomes a marker instead.
  try {
    return walkObject(value as object, o, depth, ancestors);
  } catch {
    return walked(UNREADABLE, -1, false);
  }
}

function walkObject(value: object, o: Resolved, depth: number, ancestors: object[]): unknown {
  if (ancestors.includes(value)) return walked("[Circular]", -1, false);
  const reused = o.reused?.get(value);
  if (reused && depth + reused.height < o.maxDepth && (reused.length === undefined || reused.length === (value as unknown[]).length)) {
    return walked(reused.out, reused.height, true, MIN_REUSED_WEIGHT);
  }
  if (depth >= o.maxDepth) return walked("[…]", -1, false);
  const proto = Object.getPrototypeOf(value) as unknown;
  const isArray = Array.isArray(value);
  if (isArray ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) return walkOther(value, o, depth, ancestors);
  if (!isArray && typeof (value as { toJSON?: unknown }).toJSON === "function") return walkOther(value, o, depth, ancestors);
  ancestors.push(value);
  try {
    const out = isArray ? walkArray(value as unknown[], o, depth, ancestors) : walkRecord(value as Record<string, unknown>, o, depth, ancestors);
    if (walkedReusable && o.reused && walkedWeight >= MIN_REUSED_WEIGHT) {
      o.reused.set(value, isArray ? { out, height: walkedHeight, length: (value as unknown[]).length } : { out, height: walkedHeight });
      Object.freeze(out);
    }
    return out;
  } finally {
    ancestors.pop();
  }
}

/** `Error`, `Date`, `Map`, `Set`, `toJSON`, class instances: sanitized afresh every time. */
function walkOther(value: object, o: Resolved, depth: number, ancestors: object[]): unknown {
  if (isActorRef(value)) return walkActorRef(value, o, depth, ancestors);
  return walkAny(value, o, depth, ancestors);
}

/** An XState actor ref: its JSON form, `{ xstate$$type, id }`, is fixed when it is created. */
function isActorRef(value: object): boolean {
  const ref = value as { sessionId?: unknown; send?: unknown; getSnapshot?: unknown; toJSON?: unknown };
  return typeof ref.sessionId === "string" && typeof ref.send === "function" && typeof ref.getSnapshot === "function" && typeof ref.toJSON === "function";
}

/** Events and action params carry many actor refs: each one's form is kept, like plain data. */
function walkActorRef(ref: object, o: Resolved, depth: number, ancestors: object[]): unknown {
  const json = (ref as { toJSON: () => unknown }).toJSON();
  if (json === ref) return walkAny(ref, o, depth, ancestors);
  const out = walk(json, o, depth + 1, ancestors);
  const height = walkedHeight + 1;
  const reusable = walkedReusable;
  if (reusable && o.reused) {
    o.reused.set(ref, { out, height });
    if (typeof out === "object" && out !== null) Object.freeze(out);
  }
  return walked(out, height, reusable, 4);
}

function walkAny(value: object, o: Resolved, depth: number, ancestors: object[]): unknown {
  let object = value;
  if (object instanceof Error) {
    const name = walk(object.name, o, depth + 1, ancestors);
    return walked({ name, message: walk(object.message, o, depth + 1, ancestors) }, 0, false, 3);
  }
  if (object instanceof Date) return walked(Number.isNaN(object.getTime()) ? null : object.toISOString(), -1, false);
  if (object instanceof Map) object = Object.fromEntries(object);
  else if (object instanceof Set) object = [...object];
  else {
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const json = toJSON.call(object) as unknown;
      // One level deeper: a `toJSON` that returns a fresh object with a `toJSON` must end.
      if (json !== object) {
        const out = walk(json, o, depth + 1, ancestors);
        return walked(out, walkedHeight + 1, false, walkedWeight);
      }
    }
  }
  ancestors.push(object);
  try {
    const out = Array.isArray(object) ? walkArray(object, o, depth, ancestors) : walkRecord(object as Record<string, unknown>, o, depth, ancestors);
    return walked(out, walkedHeight, false, walkedWeight);
  } finally {
    ancestors.pop();
  }
}

function walkArray(array: unknown[], o: Resolved, depth: number, ancestors: object[]): object {
  // A summary reads the items' roles and the last message only; counted as one level for reuse.
  if (o.summarize && isHistory(array)) {
    const summary = summarize(array, o);
    Object.freeze(summary.last);
    return walked(summary, 1, true, array.length);
  }
  const limit = o.summarize ? o.maxArrayItems : Infinity;
  let height = 0;
  let reusable = true;
  let weight = 1;
  const out = array.slice(0, limit).map((item) => {
    const copy = walk(item, o, depth + 1, ancestors);
    height = Math.max(height, walkedHeight + 1);
    weight += walkedWeight;
    reusable &&= walkedReusable;
    return copy === undefined ? null : copy;
  });
  if (array.length > limit) out.push(`… ${array.length - limit} more`);
  return walked(out, height, reusable, weight);
}

function walkRecord(record: Record<string, unknown>, o: Resolved, depth: number, ancestors: object[]): object {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(record);
  const limit = o.summarize ? o.maxArrayItems * 4 : Infinity;
  let height = 0;
  let reusable = true;
  let weight = 1 + keys.length;
  const count = Math.min(keys.length, limit);
  for (let i = 0; i < count; i++) {
    const key = keys[i]!;
    let item: unknown;
    try {
      item = record[key];
    } catch {
      item = UNREADABLE;
      reusable = false;
    }
    // A key is data too: a secret used as a property name is redacted like any string.
    const name = cleanString(key, o);
    if (isRedactedKey(key, o)) {
      if (item !== undefined) out[name] = item === null || item === "" ? item : REDACTED;
      continue;
    }
    let copy: unknown;
    if (key === "data" && record.type === "image" && typeof item === "string") copy = IMAGE_SUMMARY.test(item) ? item : `<${base64Bytes(item)} bytes>`;
    else {
      copy = walk(item, o, depth + 1, ancestors);
      height = Math.max(height, walkedHeight + 1);
      reusable &&= walkedReusable;
        weight += walkedWeight - 1;
      if (key === "details" && o.summarize) copy = truncateDetails(copy, o.maxDetailsChars);
    }
    if (copy !== undefined) out[name] = copy;
  }
  if (keys.length > limit) out["…"] = `${keys.length - limit} more keys`;
  return walked(out, height, reusable, weight);
}

/** Whether a key's value is redacted; memoized per options, key names repeat in every snapshot. */
function isRedactedKey(key: string, o: Resolved): boolean {
  let redacted = o.redactedKeys.get(key);
  if (redacted === undefined) {
    redacted = isSecretKeyName(key) || o.redactKeys.has(normalizeKeyName(key));
    // Bounded: keys that are data (ids used as property names) must not grow it forever.
    if (o.redactedKeys.size >= 10_000) o.redactedKeys.clear();
    o.redactedKeys.set(key, redacted);
  }
  return redacted;
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
  return eventWith(event, resolve(options));
}

/*
 * An XState event or snapshot is inspected several times (`@xstate.event`, each
 * `@xstate.microstep`, `@xstate.snapshot`), so its whole sanitized form is kept too, whatever its
 * size, when everything in it is reusable.
 */

function eventWith<T extends AnyEventObject>(event: T, o: Resolved): T {
  if (!event || typeof event !== "object") return event;
  const known = o.reused && o.events.get(event);
  if (known) return known as T;
  const copy = walk(event, o, 0, []) as T;
  const out = { ...copy, type: typeof event.type === "string" ? redact(event.type, o) : event.type };
  if (walkedReusable && o.reused) o.events.set(event, Object.freeze(out));
  return out;
}

/** The fields of any actor snapshot worth showing, sanitized (machine internals dropped). */
export function sanitizeSnapshot(snapshot: unknown, options?: SanitizeOptions): Record<string, unknown> {
  return snapshotWith(snapshot, resolve(options));
}

function snapshotWith(snapshot: unknown, o: Resolved): Record<string, unknown> {
  if (!snapshot || typeof snapshot !== "object") return { status: "active" };
  const known = o.reused && o.snapshots.get(snapshot);
  if (known) return known;
  const source = snapshot as Record<string, unknown>;
  const out: Record<string, unknown> = { status: source.status ?? "active" };
  let reusable = true;
  const part = (value: unknown) => {
    const copy = walk(value, o, 0, []);
    reusable &&= walkedReusable;
    return copy;
  };
  if ("value" in source) out.value = part(source.value);
  if ("context" in source) out.context = part(source.context);
  if ("input" in source && source.input !== undefined) out.input = part(source.input);
  if ("output" in source && source.output !== undefined) out.output = part(source.output);
  if ("error" in source && source.error !== undefined) out.error = part(source.error);
  if (source.tags instanceof Set || Array.isArray(source.tags)) out.tags = [...(source.tags as Iterable<unknown>)].map(String);
  if (source.children && typeof source.children === "object") {
    // Child actor ids only: a live ref is not data.
    out.children = Object.fromEntries(Object.keys(source.children).map((id) => [id, { id }]));
  }
  // `status` is plain only when it is a string (it is, for XState snapshots).
  if (reusable && o.reused && typeof out.status === "string") o.snapshots.set(snapshot, Object.freeze(out));
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
  return inspectionEventWith(event, resolve(options));
}

/** `sanitizeInspectionEvent` without reuse (tests compare the two). */
export function sanitizeInspectionEventAfresh<E extends InspectionEvent>(event: E, options?: SanitizeOptions): E {
  return inspectionEventWith(event, resolveWithoutReuse(options));
}

function inspectionEventWith<E extends InspectionEvent>(event: E, o: Resolved): E {
  switch (event.type) {
    case "@xstate.snapshot":
    case "@xstate.transition":
    case "@xstate.microstep":
      return {
        ...event,
        event: eventWith(event.event, o),
        snapshot: snapshotWith(event.snapshot, o) as never,
      };
    case "@xstate.event":
      return { ...event, event: eventWith(event.event, o) };
    case "@xstate.action":
      return { ...event, action: { type: event.action.type, params: walk(event.action.params, o, 0, []) } };
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
