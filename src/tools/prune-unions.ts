/**
 * A failed `anyOf`/`oneOf` makes cfworker report every branch's errors. Listing them all would
 * tell the model about alternatives it never meant; keep only the branch it most likely meant.
 */
import type { OutputUnit } from "@cfworker/json-schema";
import { refTarget, type CompiledSchema } from "./compiled-schema.js";
import { APPLICATORS } from "./applicators.js";
import { isPlainObject } from "./json-kind.js";
import { pointerSegments } from "./path.js";
import { parentNode, valueAt } from "./schema-location.js";

/**
 * Keeps, for each failed union (outermost first), only the errors of the branch to blame, and
 * drops every branch error of a `oneOf` that failed by matching more than once.
 */
export function pruneUnions(errors: readonly OutputUnit[], instance: unknown, schema: CompiledSchema): OutputUnit[] {
  const dropped = new Set<OutputUnit>();
  const unions = errors
    .filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf")
    .sort((a, b) => a.keywordLocation.length - b.keywordLocation.length);
  for (const union of unions) {
    if (dropped.has(union)) continue;
    const prefix = `${union.keywordLocation}/`;
    const below = errors.filter((e) => !dropped.has(e) && e.keywordLocation.startsWith(prefix));
    const manyMatched = union.keyword === "oneOf" && !/\(0 matches\)/.test(union.error);
    if (manyMatched) {
      for (const e of below) dropped.add(e);
      continue;
    }
    const byBranch = new Map<string, OutputUnit[]>();
    for (const e of below) {
      const branch = e.keywordLocation.slice(prefix.length).split("/")[0];
      byBranch.set(branch, [...(byBranch.get(branch) ?? []), e]);
    }
    if (byBranch.size === 0) continue;
    const blamed = blameBranch(union, byBranch, instance, schema);
    for (const [branch, branchErrors] of byBranch) {
      if (branch !== blamed) for (const e of branchErrors) dropped.add(e);
    }
    dropped.add(union); // the blamed branch's errors say what is wrong
  }
  return errors.filter((e) => !dropped.has(e));
}

/**
 * The branch the value most likely meant: first one whose kind fits (no type error at the union's
 * own place), then one whose tag matches (no `const`/`enum` error on a direct property), then the
 * one declaring most of the value's keys, then the fewest errors, then source order.
 */
function blameBranch(union: OutputUnit, byBranch: Map<string, OutputUnit[]>, instance: unknown, schema: CompiledSchema): string {
  const at = pointerSegments(union.instanceLocation);
  const value = valueAt(instance, at);
  const unionNode = parentNode(schema, union.keywordLocation);
  const branches = unionNode?.[union.keyword];
  const score = (branch: string, errs: OutputUnit[]): number[] => {
    const wrongKind = errs.some((e) => (e.keyword === "type" || e.keyword === "false") && e.instanceLocation === union.instanceLocation);
    const wrongTag = errs.some(
      (e) => (e.keyword === "const" || e.keyword === "enum") && pointerSegments(e.instanceLocation).length === at.length + 1,
    );
    const declared = Array.isArray(branches) ? declaredKeys(schema, branches[Number(branch)], value) : 0;
    const leaves = errs.filter((e) => !APPLICATORS.has(e.keyword)).length;
    return [wrongKind ? 1 : 0, wrongTag ? 1 : 0, -declared, leaves, Number(branch)];
  };
  let best: string | undefined;
  let bestScore: number[] | undefined;
  for (const [branch, errs] of byBranch) {
    const s = score(branch, errs);
    if (!bestScore || compareScores(s, bestScore) < 0) {
      best = branch;
      bestScore = s;
    }
  }
  return best as string;
}

function compareScores(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** How many keys of `value` the branch (through a `$ref`) declares in `properties`. */
function declaredKeys(schema: CompiledSchema, branch: unknown, value: unknown): number {
  let node = branch;
  if (isPlainObject(node) && typeof node.$ref === "string") node = refTarget(schema, node);
  if (!isPlainObject(node) || !isPlainObject(node.properties) || !isPlainObject(value)) return 0;
  const properties = node.properties;
  return Object.keys(value).filter((key) => Object.hasOwn(properties, key)).length;
}
