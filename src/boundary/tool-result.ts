/**
 * A tool's result, as `execute` resolved it, checked before it enters the transcript: the content
 * the model will see must be text and image blocks, or every later request of the session fails
 * in the provider (a `text` of 42 broke `text.trim()` in the Anthropic mapping).
 */
import type { AgentToolResult } from "../types.js";
import { blocksProblem, fieldProblem } from "./content.js";
import { describeValue, isRecord, readField } from "./describe-value.js";
import { ToolResultError } from "./errors.js";
import { fieldPath, problemText, type Problem } from "./problem.js";

/** The first problem of an `AgentToolResult`, or undefined. `details` may hold anything. */
export function toolResultProblem(value: unknown, path = ""): Problem | undefined {
  if (!isRecord(value)) return { field: path, problem: `must be an object { content: [...], details }, got ${describeValue(value)}` };
  const content = readField(value, "content");
  if ("threw" in content) return { field: fieldPath(path, "content"), problem: "could not be read (its getter threw)" };
  // R22: a result without content (an untyped JS tool's) has no blocks, as in the reference.
  const blocks = content.value === undefined || content.value === null ? undefined : blocksProblem(content.value, fieldPath(path, "content"), ["text", "image"]);
  return (
    blocks ??
    fieldProblem(value, "isError", path, "boolean", true) ??
    fieldProblem(value, "terminate", path, "boolean", true) ??
    fieldProblem(value, "usage", path, "object", true)
  );
}

/**
 * `value` as an `AgentToolResult`; throws `ToolResultError` naming the field otherwise. Its
 * message is worded for the model (it becomes the call's error result): "Tool NAME returned an
 * invalid result: content[0].text must be a string, got a number (42)".
 */
export function checkToolResult(toolName: string, value: unknown): AgentToolResult {
  const problem = toolResultProblem(value);
  if (problem) throw new ToolResultError(toolName, problem.field, `Tool ${toolName} returned an invalid result: ${problemText(problem, "the result")}`);
  return value as AgentToolResult;
}
