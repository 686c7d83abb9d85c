/**
 * A limiter for model requests shared by the runs of one process (issue 19): at most
 * `maxConcurrent` requests in flight, at most `requestsPerMinute` started and `tokensPerMinute`
 * used in any 60 s window. A run waits for its slot in the request's `awaitingRequestSlot` state,
 * so a server with thousands of sessions queues a burst instead of turning it into a wall of 429s.
 * Slots are granted first come, first served; time comes from the limiter's clock.
 */
import { AgentInputError } from "../boundary/errors.js";
import { systemClock, type Clock } from "./clock.js";
import type { RequestLimiter, RequestSlotRelease } from "../protocol/execution.js";

export type { RequestLimiter, RequestSlotRelease };

export interface RequestLimiterOptions {
  /** Requests in flight at once. Default: no limit. */
  maxConcurrent?: number;
  /** Requests started in any 60 s window. Default: no limit. */
  requestsPerMinute?: number;
  /** Input + output tokens of the responses that ended in any 60 s window. Default: no limit. */
  tokensPerMinute?: number;
  /** Default: the system clock. */
  clock?: Clock;
}

const WINDOW_MS = 60_000;

export function createRequestLimiter(options: RequestLimiterOptions = {}): RequestLimiter {
  const maxConcurrent = limit("maxConcurrent", options.maxConcurrent);
  const requestsPerMinute = limit("requestsPerMinute", options.requestsPerMinute);
  const tokensPerMinute = limit("tokensPerMinute", options.tokensPerMinute);
  const clock = options.clock ?? systemClock;
  const waiting: { grant: (release: RequestSlotRelease) => void }[] = [];
  const started: number[] = [];
  const used: { at: number; tokens: number }[] = [];
  let inFlight = 0;
  let cancelTimer: (() => void) | undefined;

  const forget = (now: number) => {
    while (started.length > 0 && started[0] <= now - WINDOW_MS) started.shift();
    while (used.length > 0 && used[0].at <= now - WINDOW_MS) used.shift();
  };
  /** When the windows allow another request: now, or the time the oldest entry in the way leaves. */
  const freeAt = (now: number): number => {
    let at = now;
    if (started.length >= requestsPerMinute) at = Math.max(at, started[started.length - requestsPerMinute] + WINDOW_MS);
    if (tokensPerMinute !== Infinity) {
      let total = used.reduce((sum, entry) => sum + entry.tokens, 0);
      for (const entry of used) {
        if (total < tokensPerMinute) break;
        total -= entry.tokens;
        at = Math.max(at, entry.at + WINDOW_MS);
      }
    }
    return at;
  };

  const pump = () => {
    while (waiting.length > 0 && inFlight < maxConcurrent) {
      const now = clock.now();
      forget(now);
      const at = freeAt(now);
      if (at > now) {
        cancelTimer ??= clock.setTimer(at - now, () => {
          cancelTimer = undefined;
          pump();
        });
        return;
      }
      const next = waiting.shift()!;
      inFlight++;
      started.push(now);
      let released = false;
      next.grant((tokens = 0) => {
        if (released) return;
        released = true;
        inFlight--;
        if (tokens > 0) used.push({ at: clock.now(), tokens });
        pump();
      });
    }
  };

  return {
    acquire(signal) {
      return new Promise((resolve) => {
        if (signal?.aborted) return resolve(() => {});
        const waiter = {
          grant: (release: RequestSlotRelease) => {
            signal?.removeEventListener("abort", onAbort);
            resolve(release);
          },
        };
        const onAbort = () => {
          const index = waiting.indexOf(waiter);
          if (index >= 0) waiting.splice(index, 1);
          resolve(() => {});
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        waiting.push(waiter);
        pump();
      });
    },
    get stats() {
      return { inFlight, waiting: waiting.length };
    },
  };
}

function limit(field: string, value: number | undefined): number {
  if (value === undefined) return Infinity;
  if (typeof value !== "number" || !(value >= 1)) throw new AgentInputError(field, `createRequestLimiter: ${field} must be a number ≥ 1, got ${String(value)}`);
  return value;
}
