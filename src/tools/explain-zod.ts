/**
 * zod issues → failure lines worded like the JSON Schema ones (and the reference's), so a model
 * sees the same vocabulary whichever way a tool declared its parameters. Issues are read
 * loosely (as records) so that minor zod 4 releases adding fields do not break the wording.
 */
import type { $ZodIssue } from "zod/v4/core";
import { dedupeLines, type FailureLine } from "./failure-line.js";
import { jsonKind } from "./json-kind.js";
import { boundJson, boundValues } from "../boundary/bounded-text.js";

/** Values quoted in a failure line (enum lists, literals) are cut to this many characters. */
const VALUE_CHARS = 300;
const jsonText = (value: unknown): string => (Array.isArray(value) ? boundValues(value) : boundJson(value, VALUE_CHARS));
import { formatPath } from "./path.js";

type Issue = $ZodIssue & Record<string, unknown>;

export function explainZodIssues(issues: readonly $ZodIssue[]): FailureLine[] {
  const lines: FailureLine[] = [];
  for (const issue of issues) explain(issue as unknown as Issue, [], lines);
  return dedupeLines(lines);
}

function explain(issue: Issue, prefix: readonly PropertyKey[], out: FailureLine[]): void {
  const at = [...prefix, ...issue.path];
  const path = formatPath(at);
  // Inputs are reported (reportInput); a missing key has none, whatever schema expected it.
  if (issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value" || issue.code === "invalid_union")) {
    out.push({ path, problem: "missing" });
    return;
  }
  switch (issue.code) {
    case "invalid_type":
      out.push({ path, problem: `expected ${typeName(issue.expected)}, got ${jsonKind(issue.input)}` });
      return;
    case "invalid_value": {
      const values = issue.values as readonly unknown[];
      out.push({ path, problem: values.length === 1 ? `expected ${jsonText(values[0])}` : `expected one of ${jsonText(values)}` });
      return;
    }
    case "too_small":
    case "too_big":
      out.push({ path, problem: boundProblem(issue) ?? lowerFirst(issue.message) });
      return;
    case "not_multiple_of":
      out.push({ path, problem: `expected a multiple of ${String(issue.divisor)}` });
      return;
    case "unrecognized_keys":
      for (const key of issue.keys as readonly string[]) out.push({ path: formatPath([...at, key]), problem: "unknown field" });
      return;
    case "invalid_format":
      out.push({ path, problem: formatProblem(issue) });
      return;
    case "invalid_union":
      explainUnion(issue, at, out);
      return;
    case "invalid_key":
    case "invalid_element": {
      const nested = issue.issues as unknown as readonly Issue[] | undefined;
      if (!nested?.length) break;
      for (const inner of nested) explain(inner, at, out);
      return;
    }
  }
  out.push({ path, problem: lowerFirst(issue.message) });
}

/** zod's union issue lists every branch's issues; blame the branch the value most likely meant. */
function explainUnion(issue: Issue, at: readonly PropertyKey[], out: FailureLine[]): void {
  const branches = (issue.errors as readonly (readonly Issue[])[] | undefined) ?? [];
  if (Array.isArray(issue.matches)) {
    out.push({ path: formatPath(at), problem: "matches more than one alternative" });
    return;
  }
  if (branches.length === 0) {
    // A discriminated union whose tag matched no option: the issue sits at the tag.
    const options = issue.options as readonly unknown[] | undefined;
    out.push({ path: formatPath(at), problem: options ? `expected one of ${jsonText(options)}` : lowerFirst(issue.message) });
    return;
  }
  // Prefer a branch of the right kind, then one whose tag (a literal property) matched, then the fewest issues.
  const score = (errs: readonly Issue[]): number[] => [
    errs.some((e) => e.code === "invalid_type" && e.path.length === 0) ? 1 : 0,
    errs.some((e) => e.code === "invalid_value" && e.path.length === 1) ? 1 : 0,
    errs.length,
  ];
  let best = 0;
  let bestScore = score(branches[0]);
  for (let i = 1; i < branches.length; i++) {
    const s = score(branches[i]);
    if (lexicallyLess(s, bestScore)) {
      best = i;
      bestScore = s;
    }
  }
  for (const inner of branches[best]) explain(inner, at, out);
}

function lexicallyLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

function boundProblem(issue: Issue): string | undefined {
  const small = issue.code === "too_small";
  const bound = String(small ? issue.minimum : issue.maximum);
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case "number":
    case "int":
    case "bigint":
    case "date":
      return `expected ${small ? ">" : "<"}${inclusive ? "=" : ""} ${bound}`;
    case "string":
      return `expected ${small ? "at least" : "at most"} ${bound} characters`;
    case "array":
    case "set":
      return `expected ${small ? "at least" : "at most"} ${bound} items`;
    case "object":
      return `expected ${small ? "at least" : "at most"} ${bound} properties`;
    default:
      return undefined;
  }
}

function formatProblem(issue: Issue): string {
  switch (issue.format) {
    case "regex": {
      // zod reports the regex as `/source/flags`; the JSON Schema wording prints the source.
      const pattern = String(issue.pattern ?? "");
      return `expected to match ${/^\/(.*)\/[a-z]*$/s.exec(pattern)?.[1] ?? pattern}`;
    }
    case "starts_with":
      return `expected to start with ${jsonText(issue.prefix)}`;
    case "ends_with":
      return `expected to end with ${jsonText(issue.suffix)}`;
    case "includes":
      return `expected to include ${jsonText(issue.includes)}`;
    default:
      return `expected format ${String(issue.format)}`;
  }
}

/** zod says "int" where JSON Schema (and the rest of our messages) say "integer". */
function typeName(expected: unknown): string {
  return expected === "int" ? "integer" : String(expected);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
