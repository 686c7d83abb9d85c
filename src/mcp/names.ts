/**
 * The names the model calls MCP tools by: `server__tool`, in the characters every provider accepts
 * (`[A-Za-z0-9_-]`, at most 64). A name that had to change (other characters, too long) ends with
 * a hash of the original, so two tools never collapse into one name, and the same tool gets the
 * same name in every process (a restored run resolves its tools by name, R13).
 */

export const NAME_SEPARATOR = "__";
const MAX_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  const raw = `${server}${NAME_SEPARATOR}${tool}`;
  const clean = raw.replace(/[^A-Za-z0-9_-]/g, "_");
  if (clean === raw && raw.length <= MAX_NAME) return raw;
  const suffix = `_${fnv1a(`${server}\u0000${tool}`)}`;
  return `${clean.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}

/** 8 hex digits of FNV-1a (32 bit): a stable, dependency-free hash (no collision resistance needed beyond names). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
