/**
 * Argument paths as failure lines print them: keys and indexes joined with ".", "root" for the
 * arguments themselves (`items.0.name`). Keys are printed raw, as the reference does.
 */

export function formatPath(segments: readonly PropertyKey[]): string {
  return segments.length === 0 ? "root" : segments.map((s) => String(s)).join(".");
}

/**
 * Segments of a @cfworker/json-schema location (`#/a~1b/%C3%A9`): a JSON Pointer behind "#",
 * URI-encoded, so each segment is percent-decoded, then JSON-Pointer-unescaped.
 */
export function pointerSegments(location: string): string[] {
  const pointer = location.startsWith("#") ? location.slice(1) : location;
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // A malformed escape cannot come from cfworker's encoder; keep the text as it is.
      }
      return decoded.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}
