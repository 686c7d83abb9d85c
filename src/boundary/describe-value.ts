/**
 * A short, safe description of any value for an error message ("a number (5)", "a string",
 * "null", "an object without role"). Never throws and never reads more than the value's type:
 * the value may be a revoked Proxy or have throwing getters.
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "number":
    case "boolean":
    case "bigint":
      return `a ${typeof value} (${String(value)})`;
    case "string":
      return value.length <= 40 ? `a string (${JSON.stringify(value)})` : `a string of ${value.length} characters`;
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
  }
  if (value === null) return "null";
  try {
    return Array.isArray(value) ? "an array" : "an object";
  } catch {
    // Array.isArray throws for a revoked Proxy.
    return "a revoked proxy";
  }
}

/** `obj[key]`, or `{ threw }` when reading it throws (getter, revoked Proxy). */
export function readField(object: unknown, key: PropertyKey): { value: unknown } | { threw: unknown } {
  try {
    return { value: (object as Record<PropertyKey, unknown>)[key] };
  } catch (error) {
    return { threw: error };
  }
}

/** Whether `value` is an object other than an array (a Proxy that throws counts as not one). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  try {
    return !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Whether `value` is an array (a revoked Proxy is not). */
export function isArray(value: unknown): value is unknown[] {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}
