/**
 * The library boundary: pure checks of what apps, hooks and tools hand in, each failing with a
 * typed error that names the field (issue 15). Entry points call them on their arguments; the
 * run calls them on hook and tool outputs.
 */
export { AgentInputError, HookResultError, ToolResultError } from "./errors.js";
export { checkSignal } from "./signal.js";
export { checkMessage, checkMessages, messageProblem, messagesProblem } from "./messages.js";
export { checkModel, checkHookModel, modelProblem } from "./model.js";
export { checkTools, checkToolSchema, schemaProblem, toolProblem, toolsProblem } from "./tools.js";
export { checkToolResult, toolResultProblem } from "./tool-result.js";
export {
  checkPolledMessages,
  checkTurnUpdate,
  checkRequestUpdate,
  checkTurnDecision,
  checkBeforeToolCallResult,
  checkAfterToolCallResult,
  checkTransformedMessages,
  checkApiKey,
} from "./hook-results.js";
export { boundText, boundList, boundJson, utf8Bytes, MAX_ERROR_TEXT } from "./bounded-text.js";
export { isSecretKeyName } from "./secret-keys.js";
export type { Problem } from "./problem.js";
