/**
 * The zod side of tool parameters: recognising a zod schema, exporting it as JSON Schema for the
 * model, and parsing with it. Uses `zod/v4/core` so classic and mini schemas both work and the
 * core bundle does not pull in zod's classic API.
 *
 * No eval: zod 4 compiles object parsers with `new Function` unless told otherwise. Every parse
 * here passes `jitless: true`, which keeps that fast path off per call without touching the
 * app's global zod config. (zod still probes `new Function` once, inside a try, when an object
 * schema is constructed, unless the app sets `z.config({ jitless: true })`; strict CSPs only
 * report that probe.)
 */
import { safeParse, toJSONSchema, type $ZodIssue, type $ZodType } from "zod/v4/core";

/** Whether `value` is a zod 4 schema (classic or mini: both carry `_zod`). */
export function isZodSchema(value: unknown): value is $ZodType {
  return typeof value === "object" && value !== null && "_zod" in value;
}

const jsonSchemas = new WeakMap<$ZodType, Record<string, unknown>>();

/**
 * The schema's JSON Schema (draft 2020-12) as the model should see it: the input side (so
 * defaults and optional fields are not required), without `$schema` (some providers reject it),
 * and with unrepresentable parts (dates, custom types) left open instead of throwing. Memoized
 * per schema object.
 */
export function zodJsonSchema(schema: $ZodType): Record<string, unknown> {
  let json = jsonSchemas.get(schema);
  if (!json) {
    const { $schema: _dropped, ...rest } = toJSONSchema(schema, {
      target: "draft-2020-12",
      io: "input",
      unrepresentable: "any",
    }) as Record<string, unknown>;
    json = rest;
    jsonSchemas.set(schema, json);
  }
  return json;
}

export type ZodParse = { ok: true; value: unknown } | { ok: false; issues: readonly $ZodIssue[] };

/** Parses synchronously, jitless, with inputs reported so messages can say what was received. */
export function parseWithZod(schema: $ZodType, value: unknown): ZodParse {
  const result = safeParse(schema, value, { jitless: true, reportInput: true });
  return result.success ? { ok: true, value: result.data } : { ok: false, issues: result.error.issues };
}
