/**
 * cfworker keywords whose errors only say "something below failed" (the errors after them say
 * what), so failure messages skip them.
 */
export const APPLICATORS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "$ref",
  "$recursiveRef",
  "allOf",
  "if",
  "dependentSchemas",
]);

