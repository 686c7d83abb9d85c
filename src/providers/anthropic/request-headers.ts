import type { StreamOptions } from "../../types.js";
import { formatUserAgent, requestIdentity, type ClientIdentity } from "../../identity/index.js";

/**
 * Per-request HTTP headers: the identity's `User-Agent` (the call's `identity` over
 * `DEFAULT_AGENT_IDENTITY`, so a direct call without the loop is identified too), then the call's
 * own `headers`, which win; a `null` value removes the SDK's header of that name. Anthropic has no
 * attribution headers, so `attribution` adds nothing here.
 */
export function requestHeaders(options: StreamOptions): Record<string, string | null> {
  const identity = isIdentity(options.identity) ? options.identity : undefined;
  const headers: Record<string, string | null> = { "User-Agent": formatUserAgent(requestIdentity(identity)) };
  if (options.headers && typeof options.headers === "object") {
    for (const [name, value] of Object.entries(options.headers)) {
      if (typeof value === "string" || value === null) headers[name] = value;
    }
  }
  return headers;
}

function isIdentity(value: unknown): value is ClientIdentity {
  return typeof value === "object" && value !== null;
}
