/**
 * What a tools/list says about later calls, checked here: a result's `structuredContent` against
 * the tool's `outputSchema`, and tools that require task-based execution (which we do not speak).
 * The SDK's `callTool` checks both only with what its own `listTools` cached, through a private
 * method; we list tools ourselves (tool by tool), so we check with the project's own validator,
 * the one that checks arguments, and an SDK upgrade cannot turn the check off unnoticed.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { problemText } from "../boundary/problem.js";
import { compileSchema, validateAll, type CompiledSchema } from "../tools/compiled-schema.js";
import { explainSchemaErrors } from "../tools/explain-json-schema.js";
import { unusableKeyword } from "../tools/schema-usability.js";
import type { McpCallResult } from "./result.js";

/** One listing's checks, by server tool name. */
export interface ListedChecks {
  readonly outputSchemas: ReadonlyMap<string, CompiledSchema>;
  readonly taskRequired: ReadonlySet<string>;
}

export const NO_CHECKS: ListedChecks = { outputSchemas: new Map(), taskRequired: new Set() };

/**
 * The checks of a listing, each output schema compiled once here. A tool that requires task-based
 * execution, or whose output schema the validator cannot use, is returned as rejected (every call
 * of it would fail: it is never offered to the model) and the others kept. Task-only tools stay
 * in `taskRequired` too: a tool object kept from an earlier listing is still refused before the
 * server is asked.
 */
export function listedChecks(tools: readonly Tool[]): { checks: ListedChecks; rejected: { tool: string; reason: string }[] } {
  const outputSchemas = new Map<string, CompiledSchema>();
  const taskRequired = new Set<string>();
  const rejected: { tool: string; reason: string }[] = [];
  for (const tool of tools) {
    if (tool.execution?.taskSupport === "required") {
      taskRequired.add(tool.name);
      rejected.push({ tool: tool.name, reason: 'it requires task-based execution (execution.taskSupport "required"), which this client does not support' });
      continue;
    }
    if (!tool.outputSchema) continue;
    let compiled: CompiledSchema;
    try {
      compiled = compileSchema(tool.outputSchema);
    } catch (error) {
      rejected.push({ tool: tool.name, reason: `its output schema is unusable: ${error instanceof Error ? error.message : String(error)}` });
      continue;
    }
    const unusable = unusableKeyword(compiled, "outputSchema");
    if (unusable) rejected.push({ tool: tool.name, reason: `its output schema is unusable: ${problemText(unusable)}` });
    else outputSchemas.set(tool.name, compiled);
  }
  return { checks: { outputSchemas, taskRequired }, rejected };
}

/**
 * What is wrong with `result` of `tool` given its output schema, or undefined. As the SDK did: a
 * successful result must carry `structuredContent`; an error result need not (a failing tool has
 * no output to describe), but what either carries must match.
 */
export function structuredContentProblem(tool: string, schema: CompiledSchema | undefined, result: McpCallResult): string | undefined {
  if (!schema) return undefined;
  const value = result.structuredContent;
  if (value === undefined) return result.isError ? undefined : `tool "${tool}" has an output schema but did not return structured content`;
  const mismatch = (problem: string) => `the structured content of tool "${tool}" does not match its output schema: ${problem}`;
  try {
    const { valid, errors } = validateAll(schema, value);
    if (valid) return undefined;
    const lines = explainSchemaErrors(errors, value, schema);
    const first = lines[0] ? `${lines[0].path}: ${lines[0].problem}` : "root: invalid";
    return mismatch(lines.length > 1 ? `${first} (and ${lines.length - 1} more problem${lines.length > 2 ? "s" : ""})` : first);
  } catch (error) {
    return mismatch(`it could not be checked: ${error instanceof Error ? error.message : String(error)}`);
  }
}
