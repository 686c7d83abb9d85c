/**
 * A JSON Schema prepared once for @cfworker/json-schema: cloned, dereferenced, with dangling
 * `$ref`s neutralised. Cached per schema object, because tools are validated on every call and
 * dereferencing walks the whole schema.
 */
import {
  dereference,
  schemaArrayKeyword,
  schemaKeyword,
  schemaMapKeyword,
  validate,
  type OutputUnit,
  type Schema,
  type SchemaDraft,
} from "@cfworker/json-schema";
import { isPlainObject } from "./json-kind.js";
import { MAX_JSON_ITEMS } from "../boundary/bounded-text.js";

export interface CompiledSchema {
  /** Our private clone: cfworker annotates schema objects while dereferencing, and we patch refs. */
  readonly root: Schema | boolean;
  readonly draft: SchemaDraft;
  /** Absolute URI → schema, for `$ref` targets. */
  readonly lookup: Record<string, Schema | boolean>;
}

/** Marks a node whose `$ref` named nothing; it then rejects every value at its place. */
export const UNRESOLVED_REF = "__unresolved_ref__";

const compiled = new WeakMap<object, CompiledSchema>();
const compiledBooleans = new Map<boolean, CompiledSchema>();

/** The compiled form of `schema`, built on first use. Throws for a schema cfworker rejects. */
export function compileSchema(schema: object | boolean): CompiledSchema {
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null)) {
    throw new TypeError(`a schema must be an object or a boolean, got ${schema === null ? "null" : typeof schema}`);
  }
  if (typeof schema === "boolean") {
    let entry = compiledBooleans.get(schema);
    if (!entry) compiledBooleans.set(schema, (entry = build(schema)));
    return entry;
  }
  let entry = compiled.get(schema);
  if (!entry) compiled.set(schema, (entry = build(schema)));
  return entry;
}

/**
 * Validates `value` against the whole compiled schema with every error collected (no short
 * circuit), so a failure message can list all problems at once.
 */
export function validateAll(schema: CompiledSchema, value: unknown): { valid: boolean; errors: OutputUnit[] } {
  return validate(value, schema.root, schema.draft, schema.lookup, false);
}

/** Whether `value` passes `node`, a subschema of the compiled schema. Never throws. */
export function accepts(schema: CompiledSchema, node: unknown, value: unknown): boolean {
  if (node === true || node === undefined) return true;
  if (node === false) return false;
  try {
    return validate(value, node as Schema, schema.draft, schema.lookup, true).valid;
  } catch {
    // cfworker throws for values JSON cannot hold (undefined, functions): such a value fails.
    return false;
  }
}

/** The target of `node.$ref`, or undefined when `node` has none (or it names nothing). */
export function refTarget(schema: CompiledSchema, node: Record<string, unknown>): unknown {
  if (typeof node.$ref !== "string") return undefined;
  const uri = (node as Schema).__absolute_ref__ ?? node.$ref;
  return schema.lookup[uri];
}

/** The `draft` argument cfworker needs, read from `$schema`; 2020-12 when undeclared. */
function draftOf(schema: unknown): SchemaDraft {
  const declared = isPlainObject(schema) && typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("draft-04")) return "4";
  if (declared.includes("draft-06") || declared.includes("draft-07")) return "7";
  if (declared.includes("2019-09")) return "2019-09";
  return "2020-12";
}

function build(schema: object | boolean): CompiledSchema {
  // A JSON copy: the schema is what the model is shown (JSON), and the copy is ours to annotate.
  const root = typeof schema === "boolean" ? schema : (JSON.parse(JSON.stringify(schema)) as Schema);
  const lookup = dereference(root);
  const entry: CompiledSchema = { root, draft: draftOf(root), lookup };
  neutraliseDanglingRefs(entry, root, new Set());
  shortenEnumTexts(root);
  return entry;
}

/**
 * cfworker words every failed `enum` as `Instance does not match any of ${JSON.stringify(enum)}`:
 * with 10⁴ failing items against a 10⁴-value enum that is 800 MB of text (and, larger, an
 * `Invalid string length` crash). Our clone's large enum arrays get a `toJSON` that lists the
 * first values and a count, so that text stays short; matching still uses every value.
 */
function shortenEnumTexts(root: unknown): void {
  const stack: unknown[] = [root];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    if (isPlainObject(node) && Array.isArray(node.enum) && node.enum.length > MAX_JSON_ITEMS) {
      const values = node.enum;
      const shown = MAX_JSON_ITEMS - 1;
      Object.defineProperty(values, "toJSON", { value: () => [...values.slice(0, shown), `… ${values.length - shown} more`], enumerable: false });
    }
    for (const child of Object.values(node)) if (typeof child === "object" && child !== null && child !== (node as { enum?: unknown }).enum) stack.push(child);
  }
}

/**
 * cfworker throws in the middle of validation when a `$ref` names nothing. Tools' schemas do
 * dangle sometimes, so such a node is rewritten to reject only the values at its place (with a
 * readable reason), and the rest of the schema keeps working. (An MCP server's tool with one is
 * left out instead: `unusableKeyword` reads the mark left here.)
 */
function neutraliseDanglingRefs(schema: CompiledSchema, node: unknown, seen: Set<object>): void {
  if (!isPlainObject(node) || seen.has(node)) return;
  seen.add(node);
  if (typeof node.$ref === "string" && refTarget(schema, node) === undefined) {
    Object.defineProperty(node, UNRESOLVED_REF, { value: node.$ref, enumerable: false });
    delete node.$ref;
    node.not = {};
  }
  for (const key of Object.keys(node)) {
    const child = node[key];
    if (schemaKeyword[key] || schemaArrayKeyword[key]) {
      // `items` is a schema or (draft 7) an array of them.
      if (Array.isArray(child)) for (const item of child) neutraliseDanglingRefs(schema, item, seen);
      else neutraliseDanglingRefs(schema, child, seen);
    } else if ((schemaMapKeyword[key] || key === "dependencies") && isPlainObject(child)) {
      for (const value of Object.values(child)) neutraliseDanglingRefs(schema, value, seen);
    }
  }
}
