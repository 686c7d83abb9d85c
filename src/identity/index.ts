/**
 * How requests identify the calling app to providers: the shape of pi-ai's `ClientIdentity`
 * (plain JSON, so it can travel in options and be persisted), our own default, and the merge the
 * loop applies on every request (`config.identity` over `DEFAULT_AGENT_IDENTITY`, as pi does).
 */
import type { ClientAttribution, ClientIdentity, UserAgentMode } from "../protocol/identity.js";

export type { ClientAttribution, ClientIdentity, UserAgentMode };

/** Library version in the detailed `User-Agent`; a test keeps it equal to package.json's. */
export const LIBRARY_VERSION = "0.1.0";
const LIBRARY_NAME = "xstate-agent-loop";

/**
 * Request identity of agent loops: a detailed `User-Agent` naming this library, attributed to
 * it. `AgentLoopConfig.identity` (and the Agent's `identity`) override it field by field.
 */
export const DEFAULT_AGENT_IDENTITY: Readonly<ClientIdentity> = Object.freeze({
  attribution: Object.freeze({ name: LIBRARY_NAME, url: "https://www.npmjs.com/package/xstate-agent-loop", categories: ["agent-library"] }),
});

/**
 * Merges identities field by field: later sources win, `undefined` fields (and sources) are
 * skipped, `null` attribution wins like any value. Undefined when no source sets a field.
 * Pure; never mutates a source.
 */
export function mergeIdentity(...sources: (ClientIdentity | undefined | null)[]): ClientIdentity | undefined {
  // One new object, filled in place (a spread with a computed key per field cost every run ~2 %
  // of an Agent's one-turn prompt, issue 40).
  let merged: ClientIdentity | undefined;
  for (const source of sources) {
    if (!source || typeof source !== "object") continue;
    if (source.userAgent !== undefined) (merged ??= {}).userAgent = source.userAgent;
    if (source.attribution !== undefined) (merged ??= {}).attribution = source.attribution;
    if (source.version !== undefined) (merged ??= {}).version = source.version;
  }
  return merged;
}

/** The identity of one request: `identity` over `DEFAULT_AGENT_IDENTITY` (what the loop sends). */
export function requestIdentity(identity: ClientIdentity | undefined): ClientIdentity {
  return mergeIdentity(DEFAULT_AGENT_IDENTITY, identity) ?? {};
}

/** The `User-Agent` value of an identity (see `UserAgentMode`). */
export function formatUserAgent(identity: ClientIdentity | undefined): string {
  const mode = identity?.userAgent ?? "detailed";
  if (typeof mode === "object" && typeof mode.custom === "string") return mode.custom;
  if (mode === "short") return LIBRARY_NAME;
  const version = identity?.version ?? LIBRARY_VERSION;
  const node = typeof process !== "undefined" && typeof process.versions?.node === "string" ? process : undefined;
  return node ? `${LIBRARY_NAME}/${version} (${node.platform}; node/${node.version}; ${node.arch})` : `${LIBRARY_NAME}/${version} (browser)`;
}
