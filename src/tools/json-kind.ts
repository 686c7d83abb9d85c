/**
 * JSON kinds of runtime values, as validation messages name them ("got integer", "got null").
 * Shared by the coercer and both error explainers so every message speaks the same vocabulary.
 */

/** The JSON Schema type name of a value; integral numbers are "integer", like the reference prints. */
export function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Whether `value` satisfies a JSON Schema `type` name (integers are numbers too). */
export function hasJsonType(value: unknown, type: unknown): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
    case "boolean":
      return typeof value === type;
    default:
      return false;
  }
}

/** A plain (JSON-like) object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON text for a message, never throwing (bigints and cycles fall back to String). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
