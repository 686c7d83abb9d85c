/**
 * The delay a response asked for: `retry-after-ms` (ms), else `retry-after` (seconds or an HTTP
 * date), as the Anthropic and OpenAI SDKs read them. Undefined when absent, unparseable or negative.
 * `header` reads one response header by its lower-case name.
 */
export function retryAfterFromHeaders(
  header: (name: string) => string | null | undefined,
  now: () => number = Date.now,
): number | undefined {
  const ms = header("retry-after-ms");
  if (ms) {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = header("retry-after")?.trim();
  if (!after) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(after)) return Math.round(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now());
}

/** Replaces every occurrence of each secret in `text`, so a key can never leak into a message. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join("[redacted]");
  return out;
}
