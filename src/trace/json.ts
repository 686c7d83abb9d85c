/** JSON-safe copies of arbitrary values (tool details may hold anything) and secret redaction. */
import { SECRET_PATTERNS, mayMatchSecretPattern } from "../boundary/secret-keys.js";

export { toJsonSafe } from "../loop/plain-data.js";

/** Matches wherever one of the patterns does: one scan tells that most lines need none of them. */
const ANY_SECRET_PATTERN = new RegExp(SECRET_PATTERNS.map((pattern) => pattern.source).join("|"));

/**
 * Replaces every occurrence of the given secrets, and anything shaped like a credential (an
 * Anthropic or other `sk-` key, a bearer token; the inspector's sanitizer uses the same patterns).
 * A secret that holds one of `SECRET_LITERALS` (an `sk-…` key) cannot be in text that holds none,
 * so the one scan for those literals answers for it too.
 */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  const literal = mayMatchSecretPattern(out);
  if (literal && ANY_SECRET_PATTERN.test(out)) for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, "[redacted]");
  for (const secret of secrets) {
    if (secret.length < 4 || (!literal && mayMatchSecretPattern(secret))) continue;
    if (out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  return out;
}
