/**
 * The R21 error texts, laid out exactly as the reference prints them, with a size limit (issue
 * 15): the model reads them and the transcript keeps them, so at most `MAX_LINES` problems are
 * listed and the received arguments are cut; the whole text stays under `MAX_MESSAGE_CHARS`.
 */
import type { FailureLine } from "./failure-line.js";
import { boundJson, boundText } from "../boundary/bounded-text.js";

export const MAX_LINES = 20;
const MAX_LINE_CHARS = 400;
const MAX_RECEIVED_CHARS = 2_000;
export const MAX_MESSAGE_CHARS = 8_000;

/** `Invalid arguments for tool "NAME": <why the argument text was not a JSON object>`. */
export function invalidArgumentsMessage(toolName: string, argumentsError: string): string {
  return boundText(`Invalid arguments for tool "${boundText(toolName, 200)}": ${argumentsError}`, MAX_MESSAGE_CHARS);
}

/**
 * `Validation failed for tool "NAME":`, one `  - path: problem` line per failure, a blank line,
 * then `Received arguments:` and the arguments as sent (before coercion) in 2-space JSON.
 */
export function validationFailedMessage(toolName: string, lines: readonly FailureLine[], received: unknown): string {
  const shown = lines.slice(0, MAX_LINES).map((line) => boundText(`  - ${line.path}: ${line.problem}`, MAX_LINE_CHARS));
  if (lines.length > MAX_LINES) shown.push(`  - … ${lines.length - MAX_LINES} more`);
  const text = `Validation failed for tool "${boundText(toolName, 200)}":\n${shown.join("\n")}\n\nReceived arguments:\n${receivedText(received)}`;
  return boundText(text, MAX_MESSAGE_CHARS);
}

/** The arguments as sent, in 2-space JSON; cut (long strings and arrays first) past a few KB. */
function receivedText(received: unknown): string {
  return boundJson(received, MAX_RECEIVED_CHARS, 2);
}
