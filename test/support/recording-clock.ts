/**
 * A `Clock` whose time moves only when the test says (R13's injected clock): the timers the run
 * sets on it are recorded, `advance` fires those that are due, and `nextTimer` resolves when the
 * run sets its next timer, so a test waits for the run's wait without sleeping.
 */
import type { Clock } from "../../src/index.js";

export interface ManualTimer {
  /** The delay the run asked for, in ms. */
  readonly ms: number;
  /** When it is due, on this clock. */
  readonly at: number;
  /** The clock's time when it was set. */
  readonly setAt: number;
  fired: boolean;
  cancelled: boolean;
}

export interface RecordingClock {
  readonly clock: Clock;
  /** Every timer ever set, in order. */
  readonly timers: readonly ManualTimer[];
  now(): number;
  /** Moves time forward by `ms` and fires every pending timer that is due, in due order. */
  advance(ms: number): void;
  /** The next timer set after the ones already seen by earlier calls (one already set resolves at once). */
  nextTimer(): Promise<ManualTimer>;
}

export function recordingClock(start = 1_000_000): RecordingClock {
  let now = start;
  const timers: ManualTimer[] = [];
  const pending = new Map<ManualTimer, () => void>();
  let handedOut = 0;
  let waiter: (() => void) | undefined;

  const clock: Clock = {
    now: () => now,
    monotonic: () => now,
    setTimer: (ms, fire) => {
      const timer: ManualTimer = { ms, at: now + ms, setAt: now, fired: false, cancelled: false };
      timers.push(timer);
      pending.set(timer, fire);
      waiter?.();
      return () => {
        if (pending.delete(timer)) timer.cancelled = true;
      };
    },
  };

  return {
    clock,
    timers,
    now: () => now,
    advance(ms) {
      now += ms;
      const due = [...pending.keys()].filter((timer) => timer.at <= now).sort((a, b) => a.at - b.at);
      for (const timer of due) {
        const fire = pending.get(timer);
        if (!fire) continue;
        pending.delete(timer);
        timer.fired = true;
        fire();
      }
    },
    nextTimer() {
      return new Promise<ManualTimer>((resolve) => {
        const take = () => {
          if (handedOut >= timers.length) return false;
          waiter = undefined;
          resolve(timers[handedOut++]);
          return true;
        };
        if (!take()) waiter = () => void take();
      });
    },
  };
}
