/**
 * R21 argument validation: a copy of the arguments is coerced towards the tool's JSON Schema,
 * then validated (with zod for zod tools, with @cfworker/json-schema otherwise). Never throws,
 * never mutates the tool call, never evaluates code.
 */
import type { AgentTool, ToolCall } from "../types.js";
import { compileSchema, validateAll, type CompiledSchema } from "./compiled-schema.js";
import { coerceToSchema } from "./coerce.js";
import { toolJsonSchema } from "./declaration.js";
import { explainSchemaErrors } from "./explain-json-schema.js";
import { explainZodIssues } from "./explain-zod.js";
import type { FailureLine } from "./failure-line.js";
import { invalidArgumentsMessage, validationFailedMessage } from "./failure-message.js";
import { isZodSchema, parseWithZod } from "./zod-schema.js";

export type ToolArgumentsValidation<TParams> = { ok: true; args: TParams } | { ok: false; message: string };

/** The part of a tool call validation reads; `arguments` may be anything `prepareArguments` returned. */
export type ToolCallArguments = Pick<ToolCall, "argumentsError"> & { arguments: unknown };

/**
 * Validates `toolCall.arguments` for `tool`. Run `prepareArguments` first and pass its result as
 * `arguments`. On success `args` is the coerced (and, for zod, parsed) copy to execute with.
 */
export function validateToolArguments<TParams>(
  tool: Pick<AgentTool<TParams>, "name" | "description" | "parameters">,
  toolCall: ToolCallArguments,
): ToolArgumentsValidation<TParams> {
  return validated(tool, toolCall, undefined);
}

/**
 * `validateToolArguments` for the run's preflight (R21), which keeps arguments as plain data
 * (R13): `plain.known` is set when `args` is plain JSON by construction (the copy without a text
 * round trip, left as it was by coercion), so the caller need not walk it again to find out.
 */
export function validateToolArgumentsOfRun<TParams>(
  tool: Pick<AgentTool<TParams>, "name" | "description" | "parameters">,
  toolCall: ToolCallArguments,
  plain: { known: boolean },
): ToolArgumentsValidation<TParams> {
  plain.known = false;
  return validated(tool, toolCall, plain);
}

function validated<TParams>(
  tool: Pick<AgentTool<TParams>, "name" | "description" | "parameters">,
  toolCall: ToolCallArguments,
  plain: { known: boolean } | undefined,
): ToolArgumentsValidation<TParams> {
  if (toolCall.argumentsError !== undefined) {
    return { ok: false, message: invalidArgumentsMessage(tool.name, toolCall.argumentsError) };
  }
  const received = toolCall.arguments;
  const fail = (lines: FailureLine[]): ToolArgumentsValidation<TParams> => ({
    ok: false,
    message: validationFailedMessage(tool.name, lines.length > 0 ? lines : [{ path: "root", problem: "invalid arguments" }], received),
  });
  try {
    if (isZodSchema(tool.parameters)) {
      const parsed = parseWithZod(tool.parameters, coerceForZod(tool, copyOf(received)));
      return parsed.ok ? { ok: true, args: parsed.value as TParams } : fail(explainZodIssues(parsed.issues));
    }
    const schema = compileSchema(tool.parameters as object | boolean);
    const copy = jsonCopy(received);
    if (!copy.ok) return fail([{ path: "root", problem: copy.problem }]);
    const coerced = coerceToSchema(schema, copy.value);
    const result = validateAll(schema, coerced);
    if (!result.valid) return fail(explainSchemaErrors(result.errors, coerced, schema));
    // Coercion copies on write: the same value means nothing in it changed.
    if (plain && copy.plain && coerced === copy.value) plain.known = true;
    return { ok: true, args: coerced as TParams };
  } catch (error) {
    // A schema cfworker or zod cannot use (or an async zod refinement): still one error result.
    return fail([{ path: "root", problem: error instanceof Error ? error.message : String(error) }]);
  }
}

/**
 * Coercion for a zod tool is guided by its JSON Schema export. Best effort: if the export or the
 * coercion fails, zod sees the arguments as they are and reports what is wrong.
 */
function coerceForZod(tool: Pick<AgentTool, "name" | "description" | "parameters">, value: unknown): unknown {
  let schema: CompiledSchema;
  try {
    schema = compileSchema(toolJsonSchema(tool));
    return coerceToSchema(schema, value);
  } catch {
    return value;
  }
}

/**
 * A structured clone, so the parsed args never alias the transcript's arguments (zod passes
 * unknown/any values through by reference). Values that cannot be cloned (functions from a
 * prepareArguments shim) are used as they are: coercion copies on write and never mutates.
 */
function copyOf(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

/**
 * What a JSON Schema validates is JSON: a round trip copies the arguments and drops what JSON
 * cannot hold (an `undefined` property counts as absent, as in the reference).
 */
function jsonCopy(value: unknown): { ok: true; value: unknown; plain: boolean } | { ok: false; problem: string } {
  const plain = plainJsonCopy(value);
  // Plain JSON by construction (finite numbers, plain objects, no `__proto__` key), as
  // `toPlainData` (src/loop/plain-data.ts) would find it; a text round trip's may hold `Infinity` ("1e400").
  if (plain !== NOT_PLAIN) return { ok: true, value: plain, plain: true };
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { ok: false, problem: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (text === undefined) return { ok: false, problem: `expected a JSON value, got ${typeof value}` };
  return { ok: true, value: JSON.parse(text), plain: false };
}

const NOT_PLAIN = Symbol("not plain JSON");

/**
 * The common case without a text round trip: a tree of plain objects, arrays, strings, finite
 * numbers, booleans and nulls copies as it is. Anything JSON would transform (undefined,
 * non-finite numbers, `toJSON`, class instances) sends the whole value through JSON instead.
 */
function plainJsonCopy(value: unknown, depth = 0): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : NOT_PLAIN;
    case "object": {
      if (value === null) return null;
      // Deep (or cyclic) values take the JSON path, which reports a cycle as such.
      if (depth > 32) return NOT_PLAIN;
      if (Array.isArray(value)) {
        const copy: unknown[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          const item = plainJsonCopy(value[i], depth + 1);
          if (item === NOT_PLAIN) return NOT_PLAIN;
          copy[i] = item;
        }
        return copy;
      }
      const proto = Object.getPrototypeOf(value);
      if ((proto !== Object.prototype && proto !== null) || "toJSON" in value) return NOT_PLAIN;
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (key === "__proto__") return NOT_PLAIN; // an own property only JSON.parse recreates as one
        const item = plainJsonCopy((value as Record<string, unknown>)[key], depth + 1);
        if (item === NOT_PLAIN) return NOT_PLAIN;
        copy[key] = item;
      }
      return copy;
    }
    default:
      return NOT_PLAIN;
  }
}
