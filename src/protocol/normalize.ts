import type { Message } from "./messages.js";

/** A role a provider reads (four compares: this runs for every message of every request). */
const isProviderRole = (role: unknown): boolean => role === "user" || role === "assistant" || role === "toolResult" || role === "system";

/**
 * R40's normalization: the provider transcript holds only provider messages, in order, with the
 * prompt and tool declarations as system messages (R30). Anything `convertToLlm` let through that
 * a provider cannot read (a custom message, a hole) is dropped rather than sent.
 */
export function normalizeTranscript(messages: readonly Message[]): Message[] {
  let clean = true;
  for (const message of messages) {
    if (!message || !isProviderRole(message.role)) {
      clean = false;
      break;
    }
  }
  return clean ? (messages as Message[]) : messages.filter((message) => message && isProviderRole(message.role));
}

/** `convertToLlm`'s contract: an array of messages (anything else is the app's bug, R56). */
export function checkConverted(messages: unknown): Message[] {
  if (!Array.isArray(messages)) throw new TypeError("convertToLlm must return an array of messages");
  return messages as Message[];
}
