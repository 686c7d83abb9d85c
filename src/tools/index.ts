/** Tool definitions, declarations and argument validation (R21, R30 keys). Node-free. */
export { defineTool, type JsonSchemaToolDefinition, type ZodToolDefinition } from "./define-tool.js";
export { declarationKey, toolDeclaration, toolJsonSchema, type DeclarableTool } from "./declaration.js";
export { validateToolArguments, type ToolArgumentsValidation, type ToolCallArguments } from "./validate.js";
export { invalidArgumentsMessage, validationFailedMessage } from "./failure-message.js";
export type { FailureLine } from "./failure-line.js";
export { isZodSchema } from "./zod-schema.js";
export {
  toolCallHooks,
  type ToolArgs,
  type ToolCallHooks,
  type TypedToolCallHooks,
  type TypedBeforeToolCallContext,
  type TypedAfterToolCallContext,
} from "./tool-call-hooks.js";
