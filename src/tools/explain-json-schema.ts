/**
 * @cfworker/json-schema errors → readable failure lines, worded like the reference's.
 *
 * cfworker reports every applicator on the way down ("Property "a" does not match schema.",
 * "A subschema had errors.") and every branch of a failed union. Only leaf errors help a model
 * fix its call, so applicators are dropped, a failed `anyOf`/`oneOf` is explained by the one
 * branch the value most likely meant, and repeats are removed. Messages are computed from the
 * schema keyword and the offending value, not from cfworker's texts, except where a text is the
 * only place a detail lives (the missing key of `required`).
 */
import type { OutputUnit } from "@cfworker/json-schema";
import { UNRESOLVED_REF, type CompiledSchema } from "./compiled-schema.js";
import { dedupeLines, type FailureLine } from "./failure-line.js";
import { jsonKind } from "./json-kind.js";
import { boundJson, boundText, boundValues } from "../boundary/bounded-text.js";
import { formatPath, pointerSegments } from "./path.js";
import { APPLICATORS } from "./applicators.js";
import { pruneUnions } from "./prune-unions.js";
import { parentNode, valueAt } from "./schema-location.js";

export function explainSchemaErrors(errors: readonly OutputUnit[], instance: unknown, schema: CompiledSchema): FailureLine[] {
  const { units, falseParents } = attachFalseSchemas(errors);
  const kept = dropPropertyNameDetails(pruneUnions(units, instance, schema));
  const lines: FailureLine[] = [];
  for (const error of kept) {
    const line = describe(error, falseParents.get(error), instance, schema);
    if (line) lines.push(line);
  }
  return dedupeLines(lines);
}

/**
 * A `false` subschema's error carries its instance location as its keyword location, so it
 * would escape the branch pruning below. cfworker pushes it right after the applicator that
 * reached it; re-home it under that applicator's location and remember the applicator.
 */
function attachFalseSchemas(errors: readonly OutputUnit[]): { units: OutputUnit[]; falseParents: Map<OutputUnit, string> } {
  const falseParents = new Map<OutputUnit, string>();
  const units = errors.map((error, i) => {
    const parent = errors[i - 1];
    if (error.keyword !== "false" || !parent || !APPLICATORS.has(parent.keyword)) return error;
    const unit = { ...error, keywordLocation: `${parent.keywordLocation}/false` };
    falseParents.set(unit, parent.keyword);
    return unit;
  });
  return { units, falseParents };
}

/** `propertyNames` is reported once per bad name; the errors below it describe the name as if it were the value. */
function dropPropertyNameDetails(errors: OutputUnit[]): OutputUnit[] {
  const prefixes = errors.filter((e) => e.keyword === "propertyNames").map((e) => `${e.keywordLocation}/`);
  return prefixes.length === 0 ? errors : errors.filter((e) => !prefixes.some((p) => e.keywordLocation.startsWith(p)));
}

function describe(error: OutputUnit, falseParent: string | undefined, instance: unknown, schema: CompiledSchema): FailureLine | undefined {
  const at = pointerSegments(error.instanceLocation);
  const path = formatPath(at);
  const node = parentNode(schema, error.keywordLocation);
  const value = valueAt(instance, at);
  switch (error.keyword) {
    case "required": {
      const key = quoted(error.error, /required property "(.*)"\.$/s);
      return key === undefined ? { path, problem: "missing" } : { path: formatPath([...at, key]), problem: "missing" };
    }
    case "dependentRequired":
    case "dependencies": {
      const match = /^Instance has "(.*)" but does not have "(.*)"\.$/s.exec(error.error);
      if (match) return { path: formatPath([...at, match[2]]), problem: `required when ${match[1]} is present` };
      return undefined; // the schema form: the errors of the dependent schema follow
    }
    case "propertyNames": {
      const key = quoted(error.error, /^Property name "(.*)" does not match schema\.$/s);
      return { path: key === undefined ? path : formatPath([...at, key]), problem: "invalid property name" };
    }
    case "false":
      return { path, problem: falseProblem(falseParent) };
    case "type": {
      const types = node && Array.isArray(node.type) ? node.type : node && node.type !== undefined ? [node.type] : typesFromText(error.error);
      return { path, problem: `expected ${types.join(" or ")}, got ${jsonKind(value)}` };
    }
    case "not": {
      const ref = node?.[UNRESOLVED_REF];
      return { path, problem: typeof ref === "string" ? `unresolved reference ${ref}` : "must not match the schema in not" };
    }
    case "oneOf":
      // Zero matches was pruned to a branch's errors; this is "more than one".
      return { path, problem: /\(0 matches\)/.test(error.error) ? "does not match any alternative" : "matches more than one alternative" };
    case "anyOf":
      return { path, problem: "does not match any alternative" };
    default:
      if (APPLICATORS.has(error.keyword)) return undefined;
      return { path, problem: node ? keywordProblem(error.keyword, node) ?? fallback(error) : fallback(error) };
  }
}

/** Characters of a schema value (enum list, const, pattern) quoted in a failure line. */
const VALUE_CHARS = 300;

/** The wording for a keyword that constrains the value itself. */
function keywordProblem(keyword: string, node: Record<string, unknown>): string | undefined {
  switch (keyword) {
    case "enum":
      // Bounded: a schema may list a million values, and this line is repeated per failing item.
      return `expected one of ${Array.isArray(node.enum) ? boundValues(node.enum) : boundJson(node.enum, VALUE_CHARS)}`;
    case "const":
      return `expected ${boundJson(node.const, VALUE_CHARS)}`;
    case "minimum":
      return `expected ${node.exclusiveMinimum === true ? ">" : ">="} ${node.minimum}`;
    case "maximum":
      return `expected ${node.exclusiveMaximum === true ? "<" : "<="} ${node.maximum}`;
    case "exclusiveMinimum":
      return `expected > ${node.exclusiveMinimum}`;
    case "exclusiveMaximum":
      return `expected < ${node.exclusiveMaximum}`;
    case "multipleOf":
      return `expected a multiple of ${node.multipleOf}`;
    case "minLength":
      return `expected at least ${node.minLength} characters`;
    case "maxLength":
      return `expected at most ${node.maxLength} characters`;
    case "pattern":
      return `expected to match ${boundText(String(node.pattern), VALUE_CHARS)}`;
    case "format":
      return `expected format ${node.format}`;
    case "minItems":
      return `expected at least ${node.minItems} items`;
    case "maxItems":
      return `expected at most ${node.maxItems} items`;
    case "uniqueItems":
      return "expected unique items";
    case "contains":
    case "minContains":
    case "maxContains": {
      const min = typeof node.minContains === "number" ? node.minContains : 1;
      if (typeof node.maxContains === "number") return `expected between ${min} and ${node.maxContains} matching items`;
      return `expected at least ${min} matching item${min === 1 ? "" : "s"}`;
    }
    case "minProperties":
      return `expected at least ${node.minProperties} properties`;
    case "maxProperties":
      return `expected at most ${node.maxProperties} properties`;
    default:
      return undefined;
  }
}

/** A `false` schema is reported by what put it there: an undeclared property is an "unknown field". */
function falseProblem(parentKeyword: string | undefined): string {
  if (parentKeyword === "additionalProperties" || parentKeyword === "unevaluatedProperties") return "unknown field";
  if (parentKeyword === "unevaluatedItems") return "unexpected item";
  return "no value is allowed here";
}

/** cfworker's own text, as a last resort for keywords we have no wording for. */
function fallback(error: OutputUnit): string {
  const text = error.error.replace(/\.$/, "");
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function quoted(text: string, pattern: RegExp): string | undefined {
  return pattern.exec(text)?.[1];
}

function typesFromText(text: string): string[] {
  const expected = /Expected (.*)\.$/s.exec(text)?.[1] ?? "";
  return [...expected.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
}
