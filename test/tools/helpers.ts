/** Shared fixtures for the src/tools tests. */
import { validateToolArguments, type ToolArgumentsValidation } from "../../src/tools/index.js";

/** A minimal declarable tool around a JSON Schema or zod schema. */
export function schemaTool(parameters: unknown, name = "t") {
  return { name, description: "d", parameters: parameters as Record<string, unknown> };
}

/** Validates `args` against `parameters` as tool "t". */
export function check(parameters: unknown, args: unknown, argumentsError?: string): ToolArgumentsValidation<unknown> {
  return validateToolArguments(schemaTool(parameters), { arguments: args, argumentsError });
}

/** The args of a successful validation (fails the test otherwise). */
export function argsOf(parameters: unknown, args: unknown): unknown {
  const result = check(parameters, args);
  if (!result.ok) throw new Error(`expected success, got:\n${result.message}`);
  return result.args;
}

/** Just the `  - path: problem` lines of a failed validation. */
export function linesOf(parameters: unknown, args: unknown): string[] {
  const result = check(parameters, args);
  if (result.ok) throw new Error(`expected failure, got ${JSON.stringify(result.args)}`);
  return result.message.split("\n\nReceived arguments:\n")[0].split("\n").slice(1);
}

/** `{type: "object", properties, required}` shorthand. */
export function obj(properties: Record<string, unknown>, required: string[] = [], extra: Record<string, unknown> = {}) {
  return { type: "object", properties, required, ...extra };
}

/** Freezes a value and everything inside it, so any mutation throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
