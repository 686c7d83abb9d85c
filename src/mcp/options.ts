/**
 * `connectMcp`'s options checked before anything connects: every documented field, so a wrong type
 * (`args: "server.js"`, `toolTimeoutMs: "30s"`, `limits.resultChars: 0`) is an `AgentInputError`
 * naming the field, not a server that fails later for a reason nobody can see. (Unknown keys pass:
 * an app may share one config object with its own settings.)
 * Only checked: the app's own objects (an `authProvider`, a `fetch`) are used as given.
 */
import { z } from "zod";
import { AgentInputError } from "../boundary/errors.js";
import { describeValue } from "../boundary/describe-value.js";
import { fieldPath } from "../boundary/problem.js";
import type { McpClientOptions } from "./types.js";

const func = (what: string) => z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", { error: `must be ${what}` });
const milliseconds = z.number({ error: "must be a number of milliseconds" }).positive({ error: "must be a positive number of milliseconds" });
const characters = z.number({ error: "must be a number of characters" }).int({ error: "must be a whole number of characters" }).positive({ error: "must be a positive number of characters" });
const flag = z.boolean({ error: "must be true or false" });
const strings = z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" });

const toolOverride = z.object(
  {
    enabled: flag.optional(),
    concurrencySafe: flag.optional(),
    replay: z.enum(["safe", "never"], { error: 'must be "safe" or "never"' }).optional(),
    needsApproval: z.union([z.boolean(), func("a function")], { error: "must be a boolean or a predicate" }).optional(),
    timeoutMs: milliseconds.optional(),
  },
  { error: "must be an object of tool settings" },
);

const settings = {
  trustAnnotations: flag.optional(),
  tools: z.record(z.string(), toolOverride, { error: "must be an object of tool settings by the tool's name on the server" }).optional(),
  toolTimeoutMs: milliseconds.optional(),
};

const absoluteUrl = z.custom<string | URL>((value) => {
  if (typeof value !== "string" && !(value instanceof URL)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}, { error: "must be an absolute URL" });

const serverSchemas = {
  url: z.object({
    ...settings,
    type: z.literal("http", { error: 'must be "http" for a url server' }).optional(),
    url: absoluteUrl,
    headers: strings.optional(),
    authProvider: z.object({}, { error: "must be an OAuthClientProvider" }).optional(),
    fetch: func("a fetch function").optional(),
  }),
  command: z.object({
    ...settings,
    type: z.literal("stdio", { error: 'must be "stdio" for a command server' }).optional(),
    command: z.string({ error: "must be a non-empty string" }).min(1, { error: "must be a non-empty string" }),
    args: z.array(z.string({ error: "must be a string" }), { error: "must be an array of strings" }).optional(),
    env: strings.optional(),
    cwd: z.string({ error: "must be a string" }).optional(),
  }),
  transport: z.object({ ...settings, transport: func("a function returning an SDK Transport (made afresh for every connection)") }),
};

const clientOptions = z.object({
  reservedNames: z
    .custom<Iterable<string>>((value) => typeof value === "object" && value !== null && typeof (value as Iterable<unknown>)[Symbol.iterator] === "function", { error: "must be an iterable (an array, a Set) of tool names" })
    .optional(),
  needsApprovalByDefault: flag.optional(),
  limits: z.object({ descriptionChars: characters.optional(), resultChars: characters.optional(), binaryChars: characters.optional() }, { error: "must be an object" }).optional(),
  reconnect: z
    .object(
      {
        baseDelayMs: z.number({ error: "must be a number of milliseconds" }).nonnegative({ error: "must not be negative" }).optional(),
        maxDelayMs: z.number({ error: "must be a number of milliseconds" }).nonnegative({ error: "must not be negative" }).optional(),
      },
      { error: "must be an object" },
    )
    .optional(),
  connectTimeoutMs: milliseconds.optional(),
  clientInfo: z.object({ name: z.string({ error: "must be a string" }), version: z.string({ error: "must be a string" }) }, { error: "must be {name, version}" }).optional(),
  onWarning: func("a function").optional(),
});

/** Throws `AgentInputError` naming the first malformed field of `options`. */
export function checkOptions(options: McpClientOptions): void {
  if (typeof options !== "object" || options === null) throw new AgentInputError("options", "connectMcp needs options {servers}");
  const servers: unknown = options.servers;
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) throw new AgentInputError("servers", "servers must be an object of server configurations by name");
  check(clientOptions, options, "");
  for (const [name, config] of Object.entries(servers as Record<string, unknown>)) {
    const field = `servers.${name}`;
    if (name === "") throw new AgentInputError("servers", "a server name must not be empty");
    if (typeof config !== "object" || config === null || Array.isArray(config)) throw new AgentInputError(field, `must be a server configuration, got ${describeValue(config)}`);
    const kinds = (["url", "command", "transport"] as const).filter((key) => key in config);
    if (kinds.length !== 1) throw new AgentInputError(field, "needs exactly one of url (Streamable HTTP), command (stdio) or transport");
    check(serverSchemas[kinds[0]!], config, field);
  }
}

function check(schema: z.ZodType, value: unknown, base: string): void {
  const result = schema.safeParse(value);
  if (result.success) return;
  const issue = result.error.issues[0]!;
  let field = base;
  let at: unknown = value;
  for (const key of issue.path) {
    field = fieldPath(field, typeof key === "number" ? key : String(key));
    at = typeof at === "object" && at !== null ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  }
  throw new AgentInputError(field, `${field} ${issue.message}, got ${describeValue(at)}`);
}
