import type { JsonObject, ToolCall } from "../types.js";

/** Longest raw argument text quoted in an `argumentsError`. */
const MAX_QUOTED_ARGUMENTS = 2000;

function quote(raw: string): string {
  if (raw.length <= MAX_QUOTED_ARGUMENTS) return raw;
  return `${raw.slice(0, MAX_QUOTED_ARGUMENTS)}… (${raw.length - MAX_QUOTED_ARGUMENTS} more characters)`;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Lenient parse of a tool call's accumulated argument text: empty → `{}`; a JSON object →
 * itself; anything else → `{}` with an `argumentsError` naming the problem and quoting the raw text
 * (R21). Shared by every provider adapter.
 */
export function parseToolArguments(raw: string): Pick<ToolCall, "arguments" | "argumentsError"> {
  if (raw.trim().length === 0) return { arguments: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { arguments: {}, argumentsError: `Tool arguments are not valid JSON (${reason}). Raw arguments: ${quote(raw)}` };
  }
  // What JSON.parse returns is JSON.
  if (isObject(value)) return { arguments: value as JsonObject };
  const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
  return { arguments: {}, argumentsError: `Tool arguments must be a JSON object, got ${kind}. Raw arguments: ${quote(raw)}` };
}
