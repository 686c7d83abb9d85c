/** The observer's clock: `performance.now()`, and the same as OpenTelemetry `HrTime`. */
import type { HrTime } from "@opentelemetry/api";

export const now = (): number => globalThis.performance.now();
const origin = globalThis.performance.timeOrigin;
/**
 * Wall-clock time on one monotonic clock, for every start and end: the SDK's default mixes
 * `Date.now()` (milliseconds) into each span's start, so the spans of one run could be out of order.
 */
export function hrNow(): HrTime {
  const ms = origin + now();
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}
