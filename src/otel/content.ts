/**
 * Content capture (opt-in, `captureContent: true`): messages, arguments and results as JSON
 * attribute values, with credentials redacted by the inspector's rules (secret-named keys,
 * credential-shaped strings, the app's own `secrets`), image data replaced by its size, and every
 * value cut to a bound. Off by default: no prompt, message, argument or result text is recorded.
 */
import { redactString, sanitizeValueAfresh } from "../inspect/sanitize.js";
import type { SanitizeOptions } from "../inspect/sanitize-options.js";
import { boundJson } from "../boundary/bounded-text.js";

export interface ContentOptions {
  /** Record content (default false). */
  captureContent?: boolean;
  /** Characters per recorded value (default 8,000). */
  maxContentChars?: number;
  /**
   * Values that must never appear (e.g. an API key); replaced by `[redacted]` in every text the
   * observer exports (captured content, and failure messages in span statuses, captured or not).
   */
  secrets?: readonly string[];
  /** Extra property names whose values are always redacted (case-insensitive). */
  redactKeys?: readonly string[];
}

export type ContentRenderer = (value: unknown) => string;

/**
 * Redacts a text the observer exports whether content is captured or not (a failure message in a
 * span's status: a hook's or a tool's error may quote a credential), by the same rules as content:
 * credential-shaped strings and the app's `secrets`.
 */
export function textRedactor(options: ContentOptions): (text: string) => string {
  // The caller's arrays themselves: a secret pushed onto `secrets` later is noticed (sanitize-options.ts).
  const sanitize: SanitizeOptions = {
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.redactKeys ? { redactKeys: options.redactKeys } : {}),
  };
  return (text) => redactString(text, sanitize);
}

/** Renders a value for an attribute, or undefined when content is not captured. */
export function contentRenderer(options: ContentOptions): ContentRenderer | undefined {
  if (options.captureContent !== true) return undefined;
  const max = options.maxContentChars ?? 8_000;
  const sanitize: SanitizeOptions = {
    summarize: false,
    maxStringChars: max,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.redactKeys ? { redactKeys: options.redactKeys } : {}),
  };
  return (value) => boundJson(sanitizeValueAfresh(value, sanitize), max);
}
