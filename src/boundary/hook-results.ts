/**
 * What the loop's hooks return, checked against their contracts (SPEC "AgentLoopConfig"). Each
 * check returns the value typed, or throws `HookResultError` naming the hook and the field; the
 * loop turns that throw into a clean R56 failure (run hooks) or an error tool result (tool hooks),
 * instead of a raw `TypeError` from deep inside the run.
 */
import type {
  AfterToolCallResult,
  AgentLoopTurnUpdate,
  AgentMessage,
  AgentRequestUpdate,
  AgentTurnDecision,
  BeforeToolCallResult,
} from "../types.js";
import { blocksProblem, fieldProblem } from "./content.js";
import { describeValue, isRecord, readField } from "./describe-value.js";
import { HookResultError } from "./errors.js";
import { messagesProblem } from "./messages.js";
import { modelProblem } from "./model.js";
import { problemText, type Problem } from "./problem.js";
import { toolsProblem } from "./tools.js";

const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

function fail(hook: string, problem: Problem): never {
  throw new HookResultError(hook, problem.field || "result", `${hook} returned an invalid result: ${problemText(problem, "the result")}`);
}

/** A hook result must be absent or an object. */
function objectOrAbsent(hook: string, value: unknown): value is Record<string, unknown> {
  if (value === undefined || value === null) return false;
  if (!isRecord(value)) fail(hook, { field: "", problem: `must be an object or undefined, got ${describeValue(value)}` });
  return true;
}

/** Reads a field, turning a throwing getter into the hook's typed error. */
function field(hook: string, value: Record<string, unknown>, key: string): unknown {
  const read = readField(value, key);
  if ("threw" in read) fail(hook, { field: key, problem: "could not be read (its getter threw)" });
  return read.value;
}

/** `getSteeringMessages` / `getFollowUpMessages`: an array of messages (absent = none). */
export function checkPolledMessages(hook: string, value: unknown): AgentMessage[] {
  if (value === undefined || value === null) return [];
  const problem = messagesProblem(value, "");
  if (problem) fail(hook, problem);
  return value as AgentMessage[];
}

/** `transformContext`: the messages to convert for this request (an array, never absent). */
export function checkTransformedMessages(value: unknown, hook = "transformContext"): AgentMessage[] {
  const problem = messagesProblem(value, "");
  if (problem) fail(hook, problem);
  return value as AgentMessage[];
}

/** `getApiKey`: a key or nothing (the loop then falls back to `config.apiKey`). Never echoes the value. */
export function checkApiKey(value: unknown, hook = "getApiKey"): string | undefined {
  // An empty key is no key: `config.apiKey` applies, as pi's `||` fallback has it (R40).
  if (value === undefined || value === null || value === "") return undefined;
  // The value may be a key in the wrong wrapper: name its type only, never its content.
  if (typeof value !== "string") fail(hook, { field: "", problem: `must be a string or undefined, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}` });
  return value;
}

/** `{context?, model?, thinkingLevel?}`, shared by both preparation hooks. */
function stateUpdateProblem(value: Record<string, unknown>, hook: string): Problem | undefined {
  const context = field(hook, value, "context");
  if (context !== undefined) {
    if (!isRecord(context)) return { field: "context", problem: `must be an object {messages, tools?}, got ${describeValue(context)}` };
    const messages = field(hook, context, "messages");
    const problem = messagesProblem(messages, "context.messages");
    if (problem) return problem;
    const tools = field(hook, context, "tools");
    if (tools !== undefined) {
      const toolProblem = toolsProblem(tools, "context.tools");
      if (toolProblem) return toolProblem;
    }
  }
  const model = field(hook, value, "model");
  if (model !== undefined) {
    const problem = modelProblem(model, "model");
    if (problem) return problem;
  }
  const level = field(hook, value, "thinkingLevel");
  if (level !== undefined && !THINKING_LEVELS.includes(level as string)) {
    return { field: "thinkingLevel", problem: `must be one of ${THINKING_LEVELS.join(", ")}, got ${describeValue(level)}` };
  }
  return undefined;
}

/** `prepareNextTurn`: `{context?, messages?, model?, thinkingLevel?} | undefined`. */
export function checkTurnUpdate(value: unknown, hook = "prepareNextTurn"): AgentLoopTurnUpdate | undefined {
  if (!objectOrAbsent(hook, value)) return undefined;
  const problem = stateUpdateProblem(value, hook);
  if (problem) fail(hook, problem);
  const messages = field(hook, value, "messages");
  if (messages !== undefined) {
    const messagesIssue = messagesProblem(messages, "messages");
    if (messagesIssue) fail(hook, messagesIssue);
  }
  return value as AgentLoopTurnUpdate;
}

/** `prepareRequest`: `{context?, model?, thinkingLevel?} | undefined`. */
export function checkRequestUpdate(value: unknown, hook = "prepareRequest"): AgentRequestUpdate | undefined {
  if (!objectOrAbsent(hook, value)) return undefined;
  const problem = stateUpdateProblem(value, hook);
  if (problem) fail(hook, problem);
  return value as AgentRequestUpdate;
}

/** `finishTurn`: `{action: "end" | "continue"} | undefined`. */
export function checkTurnDecision(value: unknown, hook = "finishTurn"): AgentTurnDecision | undefined {
  if (!objectOrAbsent(hook, value)) return undefined;
  const action = field(hook, value, "action");
  if (action !== "end" && action !== "continue") fail(hook, { field: "action", problem: `must be "end" or "continue", got ${describeValue(action)}` });
  return value as AgentTurnDecision;
}

/** `beforeToolCall`: `{block?, reason?, terminate?, approval?: {reason?}} | undefined` (R21, R82). */
export function checkBeforeToolCallResult(value: unknown, hook = "beforeToolCall"): BeforeToolCallResult | undefined {
  if (!objectOrAbsent(hook, value)) return undefined;
  const problem =
    fieldProblem(value, "block", "", "boolean", true) ??
    fieldProblem(value, "reason", "", "string", true) ??
    fieldProblem(value, "terminate", "", "boolean", true) ??
    approvalProblem(field(hook, value, "approval"));
  if (problem) fail(hook, problem);
  return value as BeforeToolCallResult;
}

/** R82: `approval` is absent or `{reason?: string}`. */
function approvalProblem(approval: unknown): Problem | undefined {
  if (approval === undefined) return undefined;
  if (!isRecord(approval)) return { field: "approval", problem: `must be an object {reason?}, got ${describeValue(approval)}` };
  return fieldProblem(approval, "reason", "approval", "string", true);
}

/** `afterToolCall`: field-by-field overrides (R23); a given `content` must be text/image blocks. */
export function checkAfterToolCallResult(value: unknown, hook = "afterToolCall"): AfterToolCallResult | undefined {
  if (!objectOrAbsent(hook, value)) return undefined;
  const content = field(hook, value, "content");
  const problem =
    // (A null `content` is absent: the tool's stays, as in the reference.)
    (content != null ? blocksProblem(content, "content", ["text", "image"]) : undefined) ??
    fieldProblem(value, "isError", "", "boolean", true) ??
    fieldProblem(value, "terminate", "", "boolean", true) ??
    fieldProblem(value, "usage", "", "object", true);
  if (problem) fail(hook, problem);
  return value as AfterToolCallResult;
}
