/**
 * The summary request of one chunk (SPEC R62): a system message with the summarizer's
 * instructions, then one user message carrying the previous chunks' summary (so summaries roll
 * up) and this chunk's conversation as text (see render-message.ts).
 */
import type { AssistantMessage, Message } from "../types.js";
import { CompactionError } from "./compaction-error.js";

export const DEFAULT_SUMMARY_INSTRUCTIONS = [
  "You summarize a conversation between a user and an AI assistant that uses tools, so that the assistant can continue the work from your summary alone.",
  "Keep the user's goals, requests and constraints; decisions taken; facts learned (file paths, names, values, errors and how they were resolved); what was done, with which tools and to what effect; and what remains to do.",
  "Be specific and concise. Write the summary only: no preamble, no questions, do not continue the conversation.",
].join("\n");

export interface SummaryRequestArgs {
  instructions: string;
  /** The summary of the chunks before this one. */
  previousSummary: string | undefined;
  /** This chunk, rendered. */
  conversation: string;
  timestamp: number;
}

/** The request's messages. */
export function summaryRequestMessages(args: SummaryRequestArgs): Message[] {
  return [
    { role: "system", content: args.instructions, timestamp: args.timestamp },
    { role: "user", content: summaryPrompt(args.previousSummary, args.conversation), timestamp: args.timestamp },
  ];
}

function summaryPrompt(previousSummary: string | undefined, conversation: string): string {
  const head =
    previousSummary === undefined
      ? "The conversation:\n"
      : `The summary of the conversation so far:\n<summary>\n${previousSummary}\n</summary>\n\nThe conversation continues:\n`;
  const task =
    previousSummary === undefined
      ? "Write the summary of this conversation."
      : "Write one updated summary that covers both the summary above and this continuation.";
  return `${head}<conversation>\n${conversation}\n</conversation>\n\n${task}`;
}

/** The characters of a request beside its conversation: what a chunk's budget must leave room for. */
export function requestOverheadChars(instructions: string, previousSummary: string | undefined): number {
  return instructions.length + summaryPrompt(previousSummary, "").length;
}

/**
 * The summary text of the model's answer (its text blocks; thinking and any tool call ignored). A
 * failed or empty answer is a `CompactionError`; one cut by the output limit (`length`) is kept
 * as it is: the turns it covers are older than the verbatim tail, and a short summary still beats
 * none.
 */
export function summaryFromResponse(response: unknown): string {
  if (!isAssistantMessage(response)) {
    throw new CompactionError("request_failed", "Compaction failed: the summary request did not resolve to an assistant message");
  }
  if (response.stopReason === "error" || response.stopReason === "aborted") {
    const kind = response.stopReason === "aborted" ? "aborted" : "model_error";
    throw new CompactionError(kind, `Compaction failed: the summary request ${response.stopReason === "aborted" ? "was aborted" : "failed"}: ${response.errorMessage ?? "no error message"}`, {
      response,
    });
  }
  const summary = response.content
    .filter((block) => block?.type === "text")
    .map((block) => (block as { text: string }).text)
    .join("\n")
    .trim();
  if (summary === "") throw new CompactionError("empty_summary", "Compaction failed: the model's summary has no text", { response });
  return summary;
}

function isAssistantMessage(value: unknown): value is AssistantMessage {
  if (typeof value !== "object" || value === null) return false;
  const message = value as { role?: unknown; content?: unknown };
  return message.role === "assistant" && Array.isArray(message.content);
}
