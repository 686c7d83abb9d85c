/**
 * Pure builders for the tool results and messages the loop produces (R21–R28). Shared by the
 * machines' actions and the actor implementations so every path words its errors the same way.
 */
import type { AfterToolCallResult } from "./config.js";
import type { JsonValue, ToolCall, ToolResultMessage } from "./messages.js";
import type { AgentToolResult } from "./tools.js";

export const ABORTED_TEXT = "Operation aborted";
export const BLOCKED_TEXT = "Tool execution was blocked";

/**
 * An error result the model sees as text (R21, R22, R26). That it is an error is the call's flag
 * (`tool_execution_end.isError`, the message's `isError`), not a field of the result: as in pi, a
 * result's own `isError` is only ever what a tool returned.
 */
export function errorResult(text: string, terminate?: boolean): AgentToolResult {
  const result: AgentToolResult = { content: [{ type: "text", text }], details: {} };
  if (terminate !== undefined) result.terminate = terminate;
  return result;
}

export const abortedResult = (): AgentToolResult => errorResult(ABORTED_TEXT);

export const toolNotFoundResult = (name: string): AgentToolResult => errorResult(`Tool ${name} not found`);

/** R13: an execution in flight at a snapshot whose tool is not `replay: "safe"` is not run again. */
/** R73: a call cancelled because a sibling whose tool says `cancelSiblingsOnError` failed. */
export const siblingCancelledResult = (failedTool: string): AgentToolResult => errorResult(`Cancelled: sibling tool call ${failedTool} failed`);

export const interruptedResult = (name: string): AgentToolResult =>
  errorResult(`Tool ${name} was interrupted before it finished; its outcome is unknown, so it was not run again.`);

/** R21: a blocked call, with the hook's reason or the default text, carrying `terminate`. */
export function blockedResult(reason: string | undefined, terminate: boolean | undefined): AgentToolResult {
  return errorResult(reason ? reason : BLOCKED_TEXT, terminate);
}

/** R28: the response hit the token limit, so its calls may be incomplete and are not executed (the reference's words, as a model trained on pi's transcripts reads them). */
export function truncatedCallResult(toolCall: ToolCall): AgentToolResult {
  return errorResult(
    `Tool call "${toolCall.name}" was not executed: the response hit the output token limit, so its arguments may be truncated. ` +
      "Re-issue the tool call with complete arguments.",
  );
}

/** What was thrown, as text. Never throws itself: a revoked proxy or a throwing getter was thrown too. */
export function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
    if (typeof error === "string") return error;
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      return "[unreadable error]";
    }
  }
}

/** R23: field-by-field overrides, no deep merge; `content` alone drops `structuredContent`; a null field is absent (as the reference's `??`). */
export function applyAfterToolCall(
  result: AgentToolResult,
  isError: boolean,
  override: AfterToolCallResult | undefined,
): { result: AgentToolResult; isError: boolean } {
  if (!override) return { result, isError };
  const next: AgentToolResult = { ...result };
  if (override.content != null) {
    next.content = override.content;
    if (override.structuredContent === undefined) delete next.structuredContent;
  }
  if (override.structuredContent !== undefined) next.structuredContent = override.structuredContent;
  if (override.details !== undefined) next.details = override.details;
  if (override.usage !== undefined) next.usage = override.usage;
  if (override.terminate !== undefined) next.terminate = override.terminate;
  // The flag is the call's; the result keeps what the tool said (pi's afterToolCall does the same).
  return { result: next, isError: override.isError ?? isError };
}

export function toolResultMessage(
  toolCall: ToolCall,
  result: AgentToolResult,
  isError: boolean,
  durationMs: number | undefined,
  timestamp: number,
): ToolResultMessage {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    // (A result without content has none: see `toolResultProblem`.)
    content: result.content ?? [],
    // R13: plain JSON by here (a result is converted with `toPlainData` where it enters the run).
    details: result.details as JsonValue,
    isError,
    timestamp,
  };
  if (result.usage !== undefined) message.usage = result.usage;
  if (durationMs !== undefined) message.durationMs = durationMs;
  return message;
}
