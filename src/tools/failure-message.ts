/** The R21 error texts, laid out exactly as the reference prints them. */
import type { FailureLine } from "./failure-line.js";

/** `Invalid arguments for tool "NAME": <why the argument text was not a JSON object>`. */
export function invalidArgumentsMessage(toolName: string, argumentsError: string): string {
  return `Invalid arguments for tool "${toolName}": ${argumentsError}`;
}

/**
 * `Validation failed for tool "NAME":`, one `  - path: problem` line per failure, a blank line,
 * then `Received arguments:` and the arguments as sent (before coercion) in 2-space JSON.
 */
export function validationFailedMessage(toolName: string, lines: readonly FailureLine[], received: unknown): string {
  const body = lines.map((line) => `  - ${line.path}: ${line.problem}`).join("\n");
  return `Validation failed for tool "${toolName}":\n${body}\n\nReceived arguments:\n${receivedText(received)}`;
}

function receivedText(received: unknown): string {
  try {
    return JSON.stringify(received, null, 2) ?? String(received);
  } catch {
    // Cycles or bigints (possible after prepareArguments): still say something.
    return String(received);
  }
}
