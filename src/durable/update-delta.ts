/**
 * Compact stream updates in the journal (R80: one record per response): each `message_update`
 * carries the whole partial message (twice: as `message` and in `assistantMessageEvent`), so a
 * response of n deltas would cost O(n²) bytes. Within one record, an update is stored as the
 * difference from the update before it (strings that grew, array items appended or changed,
 * object fields changed); decoding rebuilds every event exactly, so a replay's events are still
 * byte-identical (R83). The first update of a record is stored whole.
 *
 * A node is `{ $: "=" }` (unchanged), `{ $: "+", v }` (a string that grew by `v`), `{ $: "a", c, t }`
 * (an array: changed items by index, then the appended tail), `{ $: "o", c, d?, k? }` (an object:
 * changed and new fields, deleted keys, and the key order when it is not the old keys then the
 * new ones), or `{ $: "r", v }` (the value).
 */
import type { Json } from "../store/run-store.js";

export type DeltaNode =
  | { $: "=" }
  | { $: "+"; v: string }
  | { $: "a"; c: { [index: string]: DeltaNode }; t: Json[] }
  | { $: "o"; c: { [key: string]: DeltaNode }; d?: string[]; k?: string[] }
  | { $: "r"; v: Json };

const isObject = (value: unknown): value is { [key: string]: Json } => typeof value === "object" && value !== null && !Array.isArray(value);
const same = (a: Json, b: Json) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** `next` as a difference from `previous` (both plain JSON data). */
export function delta(previous: Json, next: Json): DeltaNode {
  if (same(previous, next)) return { $: "=" };
  if (typeof previous === "string" && typeof next === "string" && next.startsWith(previous)) return { $: "+", v: next.slice(previous.length) };
  if (Array.isArray(previous) && Array.isArray(next) && next.length >= previous.length) {
    const c: { [index: string]: DeltaNode } = Object.create(null);
    for (let i = 0; i < previous.length; i++) if (!same(previous[i], next[i])) c[i] = delta(previous[i], next[i]);
    return { $: "a", c, t: next.slice(previous.length) };
  }
  if (isObject(previous) && isObject(next)) {
    // Null prototype: a `__proto__` key is a field like any other.
    const c: { [key: string]: DeltaNode } = Object.create(null);
    const after = Object.keys(next);
    for (const key of after) {
      if (!Object.hasOwn(previous, key)) c[key] = { $: "r", v: next[key] };
      else if (!same(previous[key], next[key])) c[key] = delta(previous[key], next[key]);
    }
    const node: DeltaNode = { $: "o", c };
    const kept = Object.keys(previous).filter((key) => Object.hasOwn(next, key));
    if (kept.length < Object.keys(previous).length) node.d = Object.keys(previous).filter((key) => !Object.hasOwn(next, key));
    const natural = kept.concat(after.filter((key) => !Object.hasOwn(previous, key)));
    if (natural.some((key, i) => key !== after[i])) node.k = after;
    return node;
  }
  return { $: "r", v: next };
}

/** The value `node` describes, given the value before it. Unchanged parts are shared with `previous`. */
export function applyDelta(previous: Json, node: DeltaNode): Json {
  switch (node.$) {
    case "=":
      return previous;
    case "+":
      return (previous as string) + node.v;
    case "a": {
      const items = (previous as Json[]).map((item, i) => (Object.hasOwn(node.c, i) ? applyDelta(item, node.c[i]) : item));
      return items.concat(node.t);
    }
    case "o": {
      const before = previous as { [key: string]: Json };
      const deleted = new Set(node.d ?? []);
      const order = node.k ?? Object.keys(before).filter((key) => !deleted.has(key)).concat(Object.keys(node.c).filter((key) => !Object.hasOwn(before, key)));
      const object: { [key: string]: Json } = {};
      // defineProperty: a `__proto__` key (JSON.parse makes it an own field) stays a field.
      for (const key of order) {
        const value = Object.hasOwn(node.c, key) ? applyDelta(Object.hasOwn(before, key) ? before[key] : null, node.c[key]) : before[key];
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    case "r":
      return node.v;
  }
}
