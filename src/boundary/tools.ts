/**
 * Checks of the tools apps hand in (`context.tools`, `agent.state.tools`, a hook's
 * `context.tools`, `defineTool`'s parameters). A tool's parameters are shown to the model as
 * JSON, so a JSON Schema must be a finite tree: a cycle used to surface mid-run as
 * `Converting circular structure to JSON`.
 */
import type { AgentTool } from "../types.js";
import { isZodSchema } from "../tools/zod-schema.js";
import { fieldProblem } from "./content.js";
import { describeValue, isArray, isRecord, readField } from "./describe-value.js";
import { AgentInputError } from "./errors.js";
import { fieldPath, problemText, type Problem } from "./problem.js";

/** A JSON Schema's first problem: a cycle, or a value JSON cannot carry. Zod schemas pass (zod exports them). */
export function schemaProblem(schema: unknown, path = "parameters"): Problem | undefined {
  if (isZodSchema(schema)) return undefined;
  if (!isRecord(schema)) return { field: path, problem: `must be a JSON Schema object or a zod schema, got ${describeValue(schema)}` };
  // A zod 3 schema is an object too (its own bound methods would be named as the problem).
  const zod3 = (key: string) => {
    const read = readField(schema, key);
    return "value" in read ? read.value : undefined;
  };
  if (zod3("_def") !== undefined && typeof zod3("safeParse") === "function") {
    return { field: path, problem: 'is a zod 3 schema: tools take zod 4 schemas (`import { z } from "zod"`, zod 4) or JSON Schema' };
  }
  // Depth-first with an explicit stack: deep schemas cannot overflow the call stack.
  // Three-colour DFS: `onPath` (grey) finds cycles, `done` (black) keeps shared subschemas linear.
  const onPath = new Set<object>();
  const done = new Set<object>();
  const stack: { node: object; path: string; leave?: boolean }[] = [{ node: schema, path }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.leave) {
      onPath.delete(frame.node);
      done.add(frame.node);
      continue;
    }
    if (done.has(frame.node)) continue;
    if (onPath.has(frame.node)) return { field: frame.path, problem: "refers back to an enclosing object (a cycle): a JSON Schema must be a tree (use $ref for recursion)" };
    onPath.add(frame.node);
    stack.push({ node: frame.node, path: frame.path, leave: true });
    let keys: string[];
    try {
      keys = Object.keys(frame.node);
    } catch {
      return { field: frame.path, problem: "could not be read (a revoked proxy?)" };
    }
    const array = isArray(frame.node);
    for (const key of keys) {
      const read = readField(frame.node, key);
      const childPath = array ? fieldPath(frame.path, Number(key)) : fieldPath(frame.path, key);
      if ("threw" in read) return { field: childPath, problem: "could not be read (its getter threw)" };
      const child = read.value;
      if (typeof child === "function" || typeof child === "symbol" || typeof child === "bigint") {
        return { field: childPath, problem: `must be JSON, got ${describeValue(child)}` };
      }
      if (typeof child === "object" && child !== null) stack.push({ node: child, path: childPath });
    }
  }
  return undefined;
}

/** Tools already found well-formed: a tool passes every run's boundary, and is checked once. */
const wellFormed = new WeakSet<object>();

/** The first problem of one tool. */
export function toolProblem(value: unknown, path: string): Problem | undefined {
  if (!isRecord(value)) return { field: path, problem: `must be a tool object {name, description, parameters, execute}, got ${describeValue(value)}` };
  if (wellFormed.has(value)) return undefined;
  const problem = firstToolProblem(value, path);
  if (!problem) wellFormed.add(value);
  return problem;
}

function firstToolProblem(value: Record<string, unknown>, path: string): Problem | undefined {
  const name = fieldProblem(value, "name", path, "string");
  if (name) return name;
  const execute = readField(value, "execute");
  if ("threw" in execute || typeof execute.value !== "function") {
    return { field: fieldPath(path, "execute"), problem: `must be a function, got ${"threw" in execute ? "an unreadable value" : describeValue(execute.value)}` };
  }
  const parameters = readField(value, "parameters");
  if ("threw" in parameters) return { field: fieldPath(path, "parameters"), problem: "could not be read (its getter threw)" };
  return schemaProblem(parameters.value, fieldPath(path, "parameters"));
}

/** The first problem of a tool list (absent = no tools). */
export function toolsProblem(value: unknown, path = "tools"): Problem | undefined {
  if (value === undefined) return undefined;
  if (!isArray(value)) return { field: path, problem: `must be an array of tools, got ${describeValue(value)}` };
  for (let i = 0; i < value.length; i++) {
    const read = readField(value, i);
    // A tool checked before costs a lookup: no path built (every run's tools pass here).
    if (!("threw" in read) && typeof read.value === "object" && read.value !== null && wellFormed.has(read.value)) continue;
    const problem = "threw" in read ? { field: fieldPath(path, i), problem: "could not be read" } : toolProblem(read.value, fieldPath(path, i));
    if (problem) return problem;
  }
  return undefined;
}

/** `tools`, checked at a call: throws `AgentInputError` naming the field. */
export function checkTools(value: unknown, field = "tools"): AgentTool[] | undefined {
  const problem = toolsProblem(value, field);
  if (problem) throw new AgentInputError(problem.field, problemText(problem));
  return value as AgentTool[] | undefined;
}

/** A tool's parameters, checked (`defineTool`). */
export function checkToolSchema(schema: unknown, field = "parameters"): void {
  const problem = schemaProblem(schema, field);
  if (problem) throw new AgentInputError(problem.field, problemText(problem));
}
