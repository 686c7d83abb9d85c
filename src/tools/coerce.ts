/**
 * R21 coercions: loosely typed model output nudged towards the tool's JSON Schema before it is
 * validated. Models often send `"5"` for a number, `5` for a string or one item where a list is
 * expected; rejecting those costs a whole round trip for no gain.
 *
 * Rules (applied recursively, guided by the schema; a value no rule applies to stays as it is, so
 * the validator reports it):
 * - `number`/`integer`: a decimal numeric string becomes a number (`integer` only if integral);
 * - `boolean`: `"true"`/`"false"` (any case) become booleans;
 * - `string`: finite numbers and booleans become their text;
 * - `array`: a single non-null value becomes a one-item array (never for tuples);
 * - an optional property set to `null` whose schema rejects `null` is dropped;
 * - `const`/`enum`: the member the value converts to, else the conversion by the node's type; `anyOf`/`oneOf`: a value some branch accepts
 *   stays, else the first branch conversion the union accepts; `allOf`: each member in turn;
 *   `$ref`: its target.
 *
 * Copy-on-write: only changed paths are copied, the input is never modified.
 */
import { deepCompareStrict } from "@cfworker/json-schema";
import { accepts, refTarget, type CompiledSchema } from "./compiled-schema.js";
import { hasJsonType, isPlainObject } from "./json-kind.js";

/** Deeper than any sane tool argument; guards the recursion against hostile or cyclic schemas. */
const MAX_DEPTH = 128;

/** A decimal number as a model writes one; no hex, no `Infinity`, no empty string. */
const NUMERIC = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

const NO = Symbol("no conversion");

interface Walk {
  readonly schema: CompiledSchema;
  /** (schema node, value) pairs being converted through a `$ref`: re-entering one would not end. */
  readonly entered: Array<readonly [unknown, unknown]>;
  depth: number;
}

/** `value` coerced towards `schema`'s root. */
export function coerceToSchema(schema: CompiledSchema, value: unknown): unknown {
  return convert({ schema, entered: [], depth: 0 }, schema.root, value);
}

function convert(walk: Walk, node: unknown, value: unknown): unknown {
  if (!isPlainObject(node) || walk.depth >= MAX_DEPTH) return value;
  walk.depth++;
  try {
    return convertNode(walk, node, value);
  } finally {
    walk.depth--;
  }
}

function convertNode(walk: Walk, node: Record<string, unknown>, value: unknown): unknown {
  let v = value;
  const target = refTarget(walk.schema, node);
  if (target !== undefined) v = reenter(walk, target, v);
  // A value no member converts to is still converted by the node's type, as the reference's
  // coercion does: then only the enum fails ("expected one of …"), not the type too.
  if ("const" in node) return toMemberOrOwn(walk, node, v, [node.const]);
  if (Array.isArray(node.enum)) return toMemberOrOwn(walk, node, v, node.enum);
  v = convertOwn(walk, node, v);
  if (Array.isArray(node.anyOf)) v = convertUnion(walk, node.anyOf, v, false);
  if (Array.isArray(node.oneOf)) v = convertUnion(walk, node.oneOf, v, true);
  if (Array.isArray(node.allOf)) for (const member of node.allOf) v = convert(walk, member, v);
  return v;
}

/** Follows a `$ref`, unless this very (target, value) pair is already being converted. */
function reenter(walk: Walk, target: unknown, value: unknown): unknown {
  if (walk.entered.some(([n, v]) => n === target && Object.is(v, value))) return value;
  walk.entered.push([target, value]);
  try {
    return convert(walk, target, value);
  } finally {
    walk.entered.pop();
  }
}

/** The node's own `type`, object and array keywords. */
function convertOwn(walk: Walk, node: Record<string, unknown>, value: unknown): unknown {
  let v = value;
  const types = typesOf(node);
  if (types && !types.some((t) => hasJsonType(v, t))) {
    for (const type of types) {
      const converted = convertScalar(type, v, isTuple(node));
      if (converted !== NO) {
        v = converted;
        break;
      }
    }
  }
  if (isPlainObject(v)) return convertObject(walk, node, v);
  if (Array.isArray(v)) return convertArray(walk, node, v);
  return v;
}

/** Declared types, or the one implied by object/array keywords; undefined when unconstrained. */
function typesOf(node: Record<string, unknown>): readonly unknown[] | undefined {
  if (Array.isArray(node.type)) return node.type;
  if (typeof node.type === "string") return [node.type];
  if ("properties" in node || "patternProperties" in node) return ["object"];
  if ("items" in node || "prefixItems" in node) return ["array"];
  return undefined;
}

function isTuple(node: Record<string, unknown>): boolean {
  return Array.isArray(node.prefixItems) || Array.isArray(node.items);
}

function convertScalar(type: unknown, value: unknown, tuple: boolean): unknown {
  switch (type) {
    case "number":
    case "integer": {
      if (typeof value !== "string" || !NUMERIC.test(value)) return NO;
      const n = Number(value);
      return type === "integer" && !Number.isInteger(n) ? NO : n;
    }
    case "boolean": {
      if (typeof value !== "string") return NO;
      const lower = value.toLowerCase();
      return lower === "true" ? true : lower === "false" ? false : NO;
    }
    case "string":
      return (typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean" ? String(value) : NO;
    case "array":
      // `null` stays: `[null]` would only move the complaint one level down.
      return tuple || value === null || value === undefined || Array.isArray(value) ? NO : [value];
    default:
      return NO;
  }
}

/** A member of `members` as is, else the first member `value` converts to, else `value`. */
function toMemberOrOwn(walk: Walk, node: Record<string, unknown>, value: unknown, members: readonly unknown[]): unknown {
  const member = toMember(value, members);
  return member === NO ? convertOwn(walk, node, value) : member;
}

/** The member `value` is or converts to; `NO` when there is none. */
function toMember(value: unknown, members: readonly unknown[]): unknown {
  if (members.length > INDEXED_MEMBERS && isPrimitive(value)) return toIndexedMember(value, members);
  if (members.some((m) => deepCompareStrict(m, value))) return value;
  for (const member of members) {
    const type = typeof member === "number" ? "number" : typeof member;
    if (type !== "number" && type !== "string" && type !== "boolean") continue;
    if (convertScalar(type, value, false) === member) return member;
  }
  return NO;
}

/** Enums longer than this are looked up through an index (10⁴ items × 10⁴ values took seconds). */
const INDEXED_MEMBERS = 32;
const memberIndexes = new WeakMap<readonly unknown[], Map<unknown, number>>();

const isPrimitive = (value: unknown): value is string | number | boolean | null =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/** `toMember` for a primitive value, in O(1): the same answer as the scan above. */
function toIndexedMember(value: string | number | boolean | null, members: readonly unknown[]): unknown {
  let index = memberIndexes.get(members);
  if (!index) {
    index = new Map();
    members.forEach((member, i) => {
      if (isPrimitive(member) && !index!.has(member)) index!.set(member, i);
    });
    memberIndexes.set(members, index);
  }
  if (index.has(value)) return value;
  // The first member, in source order, that the value converts to (one candidate per type).
  let best: { member: unknown; at: number } | undefined;
  for (const type of ["number", "string", "boolean"] as const) {
    const converted = convertScalar(type, value, false);
    if (converted === NO) continue;
    const at = index.get(converted);
    if (at !== undefined && typeof members[at] === type && (!best || at < best.at)) best = { member: members[at], at };
  }
  return best ? best.member : NO;
}

function convertUnion(walk: Walk, branches: readonly unknown[], value: unknown, exactlyOne: boolean): unknown {
  const unionAccepts = (v: unknown): boolean => {
    const matches = branches.filter((b) => accepts(walk.schema, b, v)).length;
    return exactlyOne ? matches === 1 : matches > 0;
  };
  if (branches.some((b) => accepts(walk.schema, b, value))) return value;
  for (const branch of branches) {
    const converted = convert(walk, branch, value);
    if (converted !== value && unionAccepts(converted)) return converted;
  }
  return value;
}

function convertObject(walk: Walk, node: Record<string, unknown>, obj: Record<string, unknown>): Record<string, unknown> {
  const required = Array.isArray(node.required) ? node.required : [];
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    const child = obj[key];
    const sub = propertySchema(node, key);
    if (sub === undefined) continue;
    if (child === null && !required.includes(key) && !accepts(walk.schema, sub, null)) {
      out ??= { ...obj };
      delete out[key];
      continue;
    }
    const converted = convert(walk, sub, child);
    if (converted !== child) setOwn((out ??= { ...obj }), key, converted);
  }
  return out ?? obj;
}

/** The schema of property `key`: `properties`, else the first matching `patternProperties`, else `additionalProperties`. */
function propertySchema(node: Record<string, unknown>, key: string): unknown {
  const properties = node.properties;
  if (isPlainObject(properties) && Object.hasOwn(properties, key)) return properties[key];
  const patterns = node.patternProperties;
  if (isPlainObject(patterns)) {
    for (const pattern of Object.keys(patterns)) {
      if (regex(pattern)?.test(key)) return patterns[pattern];
    }
  }
  return node.additionalProperties;
}

function convertArray(walk: Walk, node: Record<string, unknown>, arr: readonly unknown[]): readonly unknown[] {
  // 2020-12 tuples use `prefixItems` (+ `items` for the rest); draft 7 uses an `items` array.
  const prefix = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : [];
  const rest = Array.isArray(node.items) ? undefined : node.items;
  let out: unknown[] | undefined;
  for (let i = 0; i < arr.length; i++) {
    const sub = i < prefix.length ? prefix[i] : rest;
    if (sub === undefined) continue;
    const converted = convert(walk, sub, arr[i]);
    if (converted !== arr[i]) (out ??= arr.slice())[i] = converted;
  }
  return out ?? arr;
}

/** Defines rather than assigns, so a `"__proto__"` key stays a plain property. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

const regexes = new Map<string, RegExp | null>();

/** `patternProperties` keys are ECMAScript regexes with the `u` flag; an invalid one matches nothing. */
function regex(pattern: string): RegExp | null {
  let compiled = regexes.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, "u");
    } catch {
      compiled = null;
    }
    if (regexes.size > 1000) regexes.clear();
    regexes.set(pattern, compiled);
  }
  return compiled;
}
