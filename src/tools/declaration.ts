/**
 * What the model sees of a tool (`ToolDecl`), and its canonical key for the R30 comparison.
 * Both are asked for on every request, so each is computed once per tool and reused until the
 * tool's name, description or parameters object changes (treat parameters as immutable).
 */
import { toolDeclKey } from "../protocol/transcript/declaration-key.js";
import type { AgentTool, ToolDecl } from "../types.js";
import { isZodSchema, zodJsonSchema } from "./zod-schema.js";

/** The fields a declaration is made of; any `AgentTool` has them. */
export type DeclarableTool = Pick<AgentTool, "name" | "description" | "parameters">;

/** A declaration whose schema is read field by field (any object is). */
type SchemaDecl = ToolDecl & { parameters: Record<string, unknown> };

interface Memo {
  readonly name: string;
  readonly description: string;
  readonly parameters: unknown;
  readonly decl: SchemaDecl;
}

const memo = new WeakMap<object, Memo>();

/**
 * `{name, description, parameters}` with parameters as JSON Schema: a zod schema is exported
 * (input side, no `$schema`), a JSON Schema object is passed through as is. The same object is
 * returned for the same tool while its fields are unchanged.
 */
export function toolDeclaration(tool: DeclarableTool): ToolDecl {
  return schemaDeclaration(tool);
}

function schemaDeclaration(tool: DeclarableTool): SchemaDecl {
  const cached = memo.get(tool);
  if (cached && cached.name === tool.name && cached.description === tool.description && cached.parameters === tool.parameters) {
    return cached.decl;
  }
  const decl: SchemaDecl = { name: tool.name, description: tool.description, parameters: jsonSchemaOf(tool.parameters) };
  memo.set(tool, { name: tool.name, description: tool.description, parameters: tool.parameters, decl });
  return decl;
}

/**
 * The declaration serialized once (`JSON.stringify({name, description, parameters})`): the key
 * src/transcript compares declarations by, computed by that module so both sides agree.
 */
export function declarationKey(tool: DeclarableTool): string {
  return toolDeclKey(toolDeclaration(tool));
}

/** The tool's parameters as JSON Schema (what coercion is guided by). */
export function toolJsonSchema(tool: DeclarableTool): Record<string, unknown> {
  return schemaDeclaration(tool).parameters;
}

function jsonSchemaOf(parameters: unknown): Record<string, unknown> {
  if (isZodSchema(parameters)) return zodJsonSchema(parameters);
  return parameters as Record<string, unknown>;
}
