/**
 * Property names whose values are credentials, shared by the inspector's sanitizer and the trace
 * recorder so both redact the same fields. Names are compared case-insensitively with `-` and `_`
 * removed (`X-Auth-Token`, `access_token`, `ANTHROPIC_API_KEY` all match).
 */

/** Exact normalized names. */
const SECRET_NAMES = new Set([
  "apikey",
  "xapikey",
  "authorization",
  "proxyauthorization",
  "password",
  "passwd",
  "passphrase",
  "secret",
  "clientsecret",
  "token",
  "cookie",
  "setcookie",
  "privatekey",
  "credential",
  "credentials",
]);

/** Normalized endings: `access_token`, `x-auth-token`, `ANTHROPIC_API_KEY`, `db_password`, `aws_secret_access_key`. */
const SECRET_SUFFIXES = ["token", "apikey", "secret", "password", "privatekey", "secretkey", "accesskey", "accesskeyid", "cookie", "credentials"];

export const normalizeKeyName = (key: string): string => key.toLowerCase().replace(/[-_\s]/g, "");

/** Whether a property named `key` holds a credential (by its name alone). */
export function isSecretKeyName(key: string): boolean {
  const name = normalizeKeyName(key);
  if (SECRET_NAMES.has(name)) return true;
  return SECRET_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/** Credential-shaped strings: Anthropic keys, other `sk-` style keys (OpenAI's), Google API keys and bearer tokens. */
export const SECRET_PATTERNS: readonly RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]{4,}/g,
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
];

/**
 * A literal every one of `SECRET_PATTERNS` contains (test/boundary/inspect-cost.test.ts checks it):
 * text with none of them matches no pattern, and a substring search says so cheaper than a pattern.
 */
export const SECRET_LITERALS: readonly string[] = ["sk-", "Bearer", "AIza"];

/** False when `text` cannot match any of `SECRET_PATTERNS`. */
export function mayMatchSecretPattern(text: string): boolean {
  return text.includes(SECRET_LITERALS[0]!) || text.includes(SECRET_LITERALS[1]!) || text.includes(SECRET_LITERALS[2]!);
}

/** `text` with anything shaped like a credential replaced by `[redacted]` (an error message a client or an exporter gets). */
export function redactCredentials(text: string): string {
  return mayMatchSecretPattern(text) ? SECRET_PATTERNS.reduce((out, pattern) => out.replace(pattern, "[redacted]"), text) : text;
}
