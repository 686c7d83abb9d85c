/**
 * Whether a compiled JSON Schema can validate anything at all: the keyword values that make
 * cfworker reject every value (`type: "bogus"`), throw on every call (`pattern: "("`), or that
 * compileSchema neutralised (a `$ref` naming nothing, a remote one: it is never fetched). A tool
 * from a source the app does not control (an MCP server) with such a schema would fail every call
 * that reaches the keyword, so it is left out with this reason instead.
 */
import { schemaArrayKeyword, schemaKeyword, schemaMapKeyword } from "@cfworker/json-schema";
import { describeValue } from "../boundary/describe-value.js";
import { fieldPath, type Problem } from "../boundary/problem.js";
import { UNRESOLVED_REF, type CompiledSchema } from "./compiled-schema.js";
import { isPlainObject } from "./json-kind.js";

const TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);

/** The first unusable keyword of `schema`, with its path from `path` (`inputSchema.properties.a.pattern`). */
export function unusableKeyword(schema: CompiledSchema, path: string): Problem | undefined {
  const seen = new Set<object>();
  const stack: { node: unknown; path: string }[] = [{ node: schema.root, path }];
  while (stack.length > 0) {
    const { node, path: at } = stack.pop()!;
    if (!isPlainObject(node) || seen.has(node)) continue;
    seen.add(node);
    const problem = nodeProblem(node, at);
    if (problem) return problem;
    // Pushed in reverse so that the first keyword's subschemas are looked at first.
    const children: { node: unknown; path: string }[] = [];
    for (const [key, child] of Object.entries(node)) {
      if (schemaKeyword[key] || schemaArrayKeyword[key]) {
        if (Array.isArray(child)) child.forEach((item, i) => children.push({ node: item, path: fieldPath(fieldPath(at, key), i) }));
        else children.push({ node: child, path: fieldPath(at, key) });
      } else if ((schemaMapKeyword[key] || key === "dependencies") && isPlainObject(child)) {
        for (const [name, value] of Object.entries(child)) children.push({ node: value, path: fieldPath(fieldPath(at, key), name) });
      }
    }
    stack.push(...children.reverse());
  }
  return undefined;
}

function nodeProblem(node: Record<string, unknown>, path: string): Problem | undefined {
  const unresolved = (node as Record<string, unknown>)[UNRESOLVED_REF];
  if (typeof unresolved === "string") {
    const remote = !unresolved.startsWith("#");
    return { field: fieldPath(path, "$ref"), problem: `${JSON.stringify(unresolved)} names no part of the schema${remote ? " (remote references are not fetched)" : ""}` };
  }
  const type = node.type;
  if (type !== undefined && !(Array.isArray(type) ? type.every(isTypeName) : isTypeName(type))) {
    return { field: fieldPath(path, "type"), problem: `must be a JSON Schema type (${[...TYPES].join(", ")}) or an array of them, got ${describe(type)}` };
  }
  const required = node.required;
  // Draft 3's boolean `required` is not supported by the validator either.
  if (required !== undefined && !(Array.isArray(required) && required.every((name) => typeof name === "string"))) {
    return { field: fieldPath(path, "required"), problem: `must be an array of property names, got ${describe(required)}` };
  }
  if (node.enum !== undefined && !Array.isArray(node.enum)) return { field: fieldPath(path, "enum"), problem: `must be an array, got ${describe(node.enum)}` };
  for (const keyword of ["properties", "patternProperties", "$defs", "definitions"]) {
    if (node[keyword] !== undefined && !isPlainObject(node[keyword])) return { field: fieldPath(path, keyword), problem: `must be an object of schemas, got ${describe(node[keyword])}` };
  }
  if (node.pattern !== undefined) {
    const problem = regexProblem(node.pattern);
    if (problem) return { field: fieldPath(path, "pattern"), problem };
  }
  if (isPlainObject(node.patternProperties)) {
    for (const pattern of Object.keys(node.patternProperties)) {
      const problem = regexProblem(pattern);
      if (problem) return { field: fieldPath(fieldPath(path, "patternProperties"), pattern), problem };
    }
  }
  return undefined;
}

const isTypeName = (value: unknown): boolean => typeof value === "string" && TYPES.has(value);

/** Why `pattern` is not a regular expression the validator can run (it compiles with the `u` flag). */
function regexProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== "string") return `must be a regular expression (a string), got ${describe(pattern)}`;
  try {
    new RegExp(pattern, "u");
    return undefined;
  } catch (error) {
    return `${JSON.stringify(pattern.slice(0, 80))} is not a regular expression the validator can run: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  return describeValue(value);
}
