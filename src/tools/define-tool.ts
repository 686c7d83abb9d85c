/**
 * `defineTool`: an `AgentTool` from a definition whose parameters are a zod schema (execute's
 * params typed by `z.output`, validated by zod) or a plain JSON Schema object.
 */
import type { $ZodType, output } from "zod/v4/core";
import type { AgentTool, AgentToolResult, AgentToolUpdateCallback, ToolExecutionMode, ToolParameters } from "../types.js";
import type { ToolExecutionContext } from "./tool-call-hooks.js";
import { toolDeclaration } from "./declaration.js";
import { checkToolSchema } from "../boundary/tools.js";

/** The loop's per-tool settings, passed through as the tool declares them (R13, R65, R73). */
type LoopToolSettings = Pick<AgentTool, "replay" | "timeoutMs" | "cancelSiblingsOnError">;

interface ToolDefinitionBase extends LoopToolSettings {
  name: string;
  description: string;
  /** Human-readable label for UIs; defaults to `name`. */
  label?: string;
  /** Compatibility shim run on the raw arguments before validation. May throw (→ error result). */
  prepareArguments?: (args: unknown) => unknown;
  /** `"sequential"` makes the whole batch containing a call to this tool sequential (R20). */
  executionMode?: ToolExecutionMode;
  /** JSON Schema of `structuredContent`. */
  outputSchema?: object;
}

/**
 * A definition's `execute`. The loop always passes all five arguments (a tool's own direct call
 * of `tool.execute` may not), so a definition reads `signal` and `context` without a check.
 */
type Execute<TParams, TDetails> = (
  toolCallId: string,
  params: TParams,
  signal: AbortSignal,
  onUpdate: AgentToolUpdateCallback<TDetails>,
  /** R13, R14: `context.replayed` (a re-run after a restore) and `context.runSubAgent`. */
  context: ToolExecutionContext,
) => Promise<AgentToolResult<TDetails>>;

/** A tool whose parameters are a zod 4 schema (classic or mini). */
export interface ZodToolDefinition<S extends $ZodType, TDetails = unknown> extends ToolDefinitionBase {
  parameters: S;
  execute: Execute<output<S>, TDetails>;
  /** R82: wait for approval before executing (`true`, or a predicate of the validated arguments). */
  needsApproval?: AgentTool<output<S>>["needsApproval"];
  /** R70: may the call start while the model still streams, beside other safe calls? */
  isConcurrencySafe?: AgentTool<output<S>>["isConcurrencySafe"];
}

/** A tool whose parameters are a JSON Schema object; `TParams` is whatever the caller asserts. */
export interface JsonSchemaToolDefinition<TParams = Record<string, unknown>, TDetails = unknown>
  extends ToolDefinitionBase {
  parameters: Record<string, unknown>;
  execute: Execute<TParams, TDetails>;
  /** R82: wait for approval before executing (`true`, or a predicate of the validated arguments). */
  needsApproval?: AgentTool<TParams>["needsApproval"];
  /** R70: may the call start while the model still streams, beside other safe calls? */
  isConcurrencySafe?: AgentTool<TParams>["isConcurrencySafe"];
}

const LOOP_SETTINGS = ["replay", "timeoutMs", "cancelSiblingsOnError", "needsApproval", "isConcurrencySafe"] as const;

// `N` keeps the tool's literal name, so `toolCallHooks` can tell a list's tools apart by `toolName`.
export function defineTool<S extends $ZodType, TDetails = unknown, N extends string = string>(
  def: ZodToolDefinition<S, TDetails> & { name: N },
): AgentTool<output<S>, TDetails> & { name: N };
export function defineTool<TParams = Record<string, unknown>, TDetails = unknown, N extends string = string>(
  def: JsonSchemaToolDefinition<TParams, TDetails> & { name: N },
): AgentTool<TParams, TDetails> & { name: N };
export function defineTool(def: ZodToolDefinition<$ZodType> | JsonSchemaToolDefinition): AgentTool {
  if (typeof def?.name !== "string" || def.name === "") throw new TypeError("defineTool: `name` must be a non-empty string");
  if (typeof def.execute !== "function") throw new TypeError(`defineTool: tool "${def.name}" needs an \`execute\` function`);
  if (typeof def.parameters !== "object" || def.parameters === null) {
    throw new TypeError(`defineTool: tool "${def.name}" needs \`parameters\` (a zod schema or a JSON Schema object)`);
  }
  // A cycle would only surface mid-run, when the declaration is serialized for the model.
  checkToolSchema(def.parameters, `defineTool(${JSON.stringify(def.name)}).parameters`);
  const tool: AgentTool = {
    name: def.name,
    label: def.label ?? def.name,
    description: def.description,
    // The zod schema itself stays on the tool: validation parses with zod, not its JSON export.
    parameters: def.parameters as unknown as ToolParameters,
    // The loop passes all five arguments (see `Execute`); pi's direct callers may pass fewer.
    execute: def.execute as unknown as AgentTool["execute"],
  };
  if (def.prepareArguments) tool.prepareArguments = def.prepareArguments;
  if (def.executionMode) tool.executionMode = def.executionMode;
  if (def.outputSchema) tool.outputSchema = def.outputSchema;
  // The loop's settings, only when declared: an absent key keeps the loop's default.
  for (const key of LOOP_SETTINGS) if (def[key] !== undefined) (tool as unknown as Record<string, unknown>)[key] = def[key];
  // Export the declaration now: a schema zod cannot export fails here, not mid-run.
  toolDeclaration(tool);
  return tool;
}
