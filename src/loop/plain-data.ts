/**
 * SPEC R13: what enters a run is kept as plain JSON data, so every snapshot serializes. Values
 * that JSON cannot hold are converted once, where they enter (tool results, messages from hooks
 * and queues): cycles become `"[Circular]"`, functions and symbols are dropped (as
 * `JSON.stringify` drops them), `bigint` becomes a decimal string, `Date` its ISO string, `Map` an
 * object, `Set` an array, a typed array a plain array, `toJSON` is honoured, and anything that
 * throws on access (a revoked proxy, a throwing getter) becomes `"[unreadable]"`. Plain JSON
 * comes back as the same object (no copy), so the common case costs one walk and no allocation.
 */
export function toPlainData<T>(value: T): T {
  return isPlain(value, new Set()) ? value : (convert(value, new Set()) as T);
}

function isPlain(value: unknown, seen: Set<object>): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  const object = value as object;
  if (seen.has(object)) return false;
  let proto: object | null;
  try {
    proto = Object.getPrototypeOf(object);
  } catch {
    return false;
  }
  const isArray = Array.isArray(object);
  if (!isArray && proto !== Object.prototype && proto !== null) return false;
  seen.add(object);
  try {
    if (isArray) {
      for (const item of object as unknown[]) if (item === undefined || !isPlain(item, seen)) return false;
    } else {
      if (typeof (object as { toJSON?: unknown }).toJSON === "function") return false;
      for (const key in object) {
        const item = (object as Record<string, unknown>)[key];
        if (item !== undefined && !isPlain(item, seen)) return false;
      }
    }
  } catch {
    return false;
  } finally {
    seen.delete(object);
  }
  return true;
}

function convert(value: unknown, ancestors: Set<object>): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "bigint":
      return value.toString();
    case "object":
      break;
    default:
      return undefined;
  }
  const object = value as object;
  if (ancestors.has(object)) return "[Circular]";
  ancestors.add(object);
  try {
    if (typeof (object as { toJSON?: unknown }).toJSON === "function") return convert((object as { toJSON(): unknown }).toJSON(), ancestors);
    if (object instanceof Map) return convert(Object.fromEntries(object), ancestors);
    if (object instanceof Set) return convert([...object], ancestors);
    if (ArrayBuffer.isView(object) && !(object instanceof DataView)) return Array.from(object as unknown as ArrayLike<number>, (n) => convert(n, ancestors));
    if (Array.isArray(object)) return object.map((item) => (item === undefined ? null : (convert(item, ancestors) ?? null)));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(object)) {
      let item: unknown;
      try {
        item = (object as Record<string, unknown>)[key];
      } catch {
        item = "[unreadable]";
      }
      const converted = convert(item, ancestors);
      if (converted !== undefined) out[key] = converted;
    }
    return out;
  } catch {
    return "[unreadable]";
  } finally {
    ancestors.delete(object);
  }
}
