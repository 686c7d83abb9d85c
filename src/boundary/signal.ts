/**
 * The abort signal argument. The loop listens on it (`addEventListener("abort")`) and reads
 * `aborted`, so anything else is refused at the call: a duck-typed `{aborted: true}` used to
 * crash the host from inside the run, where no caller could catch it.
 */
import { describeValue } from "./describe-value.js";
import { AgentInputError } from "./errors.js";

/** `signal`, checked: undefined, or an `AbortSignal` (any realm, or a spec-shaped polyfill). */
export function checkSignal(value: unknown, field = "signal"): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (isSignalLike(value)) return value;
  throw new AgentInputError(field, `${field} must be an AbortSignal (e.g. new AbortController().signal), got ${describeValue(value)}`);
}

function isSignalLike(value: unknown): value is AbortSignal {
  if (typeof value !== "object" || value === null) return false;
  try {
    if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) return true;
    const signal = value as Partial<AbortSignal>;
    return typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function" && typeof signal.removeEventListener === "function";
  } catch {
    return false; // a revoked Proxy or a throwing getter
  }
}
