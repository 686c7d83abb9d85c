/**
 * The run's clock and random source (SPEC R13): the loop reads time and randomness only through
 * these, so a run can be replayed with the same readings (R83) and tested on scripted time.
 */
import type { Clock, RandomSource } from "../protocol/execution.js";

export type { Clock, RandomSource };

/**
 * The longest delay `setTimeout` keeps: above it (≈24.8 days) Node, browsers and edge runtimes
 * clamp the delay to 1 ms, so a long `retry-after` or `toolTimeoutMs` would fire at once.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  // performance.now exists in Node, browsers and edge runtimes.
  monotonic: () => performance.now(),
  setTimer: (ms, fire) => {
    // A longer wait is a chain of the longest timers, so every user of the clock waits the whole of it.
    let timer: ReturnType<typeof setTimeout>;
    const arm = (left: number): void => {
      timer = left > MAX_TIMER_MS ? setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS) : setTimeout(fire, left);
    };
    arm(ms);
    return () => clearTimeout(timer);
  },
};

export const systemRandom: RandomSource = Math.random;
