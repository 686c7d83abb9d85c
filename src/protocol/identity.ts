/** How requests identify the calling app to providers (plain JSON; `src/identity/` applies it). */

/**
 * The `User-Agent` sent to providers:
 * - `"detailed"`: `xstate-agent-loop/<version> (<platform>; node/<version>; <arch>)`, or
 *   `xstate-agent-loop/<version> (browser)` outside Node.js;
 * - `"short"`: `xstate-agent-loop`;
 * - `{ custom }`: the given value.
 */
export type UserAgentMode = "short" | "detailed" | { custom: string };

/** Who requests are attributed to (providers with attribution headers map these fields). */
export interface ClientAttribution {
  name: string;
  url: string;
  categories?: string[];
}

export interface ClientIdentity {
  /** Default `"detailed"`. */
  userAgent?: UserAgentMode;
  /** Provider attribution. Absent or `null`: none; `null` also removes attribution set by a merged identity. */
  attribution?: ClientAttribution | null;
  /** Version in the detailed `User-Agent`. Default: this library's version. */
  version?: string;
}
