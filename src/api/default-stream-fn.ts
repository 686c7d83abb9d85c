/**
 * The process-wide fallback stream function (SPEC "Entry points"), as pi-agent-core's
 * `setDefaultStreamFn`: hosts with a default model runtime install it once, and legacy callers
 * that omit `streamFn` (the loop functions' last argument, `new Agent()`'s option) get it.
 */
import type { StreamFn } from "../types.js";

let defaultStreamFn: StreamFn | undefined;

/** pi's wording, so apps that match on it keep working; a `TypeError` (an `Error`) as SPEC asks. */
export const NO_DEFAULT_STREAM_FN = "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().";

/** Installs (or, with `undefined`, removes) the fallback. Anything else is a `TypeError`. */
export function setDefaultStreamFn(streamFn: StreamFn | undefined): void {
  if (streamFn !== undefined && typeof streamFn !== "function") {
    throw new TypeError(`setDefaultStreamFn: expected a function or undefined, got ${typeof streamFn}`);
  }
  defaultStreamFn = streamFn;
}

/**
 * The stream function a call uses: its own, else the default. Throws the `TypeError` at the call
 * when neither exists, so the mistake surfaces where it was made, not as a failed request later.
 */
export function resolveStreamFn(streamFn: StreamFn | undefined | null): StreamFn {
  if (streamFn !== undefined && streamFn !== null) return streamFn;
  if (defaultStreamFn) return defaultStreamFn;
  throw new TypeError(NO_DEFAULT_STREAM_FN);
}
