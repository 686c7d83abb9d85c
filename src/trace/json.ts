/** JSON-safe copies of arbitrary values (tool details may hold anything) and secret redaction. */
import { SECRET_PATTERNS, mayMatchSecretPattern } from "../boundary/secret-keys.js";

export { toJsonSafe } from "../loop/plain-data.js";

/** Matches wherever one of the patterns does: one scan tells that most lines need none of them. */
const ANY_SECRET_PATTERN = new RegExp(SECRET_PATTERNS.map((pattern) => pattern.source).join("|"));

/**
 * A part of each of `SECRET_LITERALS` that is rare in JSON text (test/boundary/inspect-cost.test.ts
 * checks each literal holds one): `s` is among its commonest letters, and a search for "sk-" stops
 * at each, one for "k-" seldom. Text without any needle holds no literal.
 */
export const LITERAL_NEEDLES: readonly string[] = ["k-", "Bearer", "AIza"];

/** `mayMatchSecretPattern`, answered by the needles first. */
const mayHoldLiteral = (text: string): boolean =>
  (text.includes(LITERAL_NEEDLES[0]!) || text.includes(LITERAL_NEEDLES[1]!) || text.includes(LITERAL_NEEDLES[2]!)) && mayMatchSecretPattern(text);

/**
 * Replaces every occurrence of the given secrets, and anything shaped like a credential (an
 * Anthropic or other `sk-` key, a Google API key, a bearer token; the inspector's sanitizer uses the
 * same patterns).
 * A secret that holds one of `SECRET_LITERALS` (an `sk-…` key) cannot be in text that holds none,
 * so the one scan for those literals answers for it too.
 */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  const literal = mayHoldLiteral(out);
  if (literal && ANY_SECRET_PATTERN.test(out)) for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, "[redacted]");
  for (const secret of secrets) {
    if (secret.length < 4 || (!literal && mayMatchSecretPattern(secret))) continue;
    if (out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  return out;
}
