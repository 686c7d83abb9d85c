/**
 * The run's clock and random source (SPEC R13): the loop reads time and randomness only through
 * these, so a run can be replayed with the same readings (R83) and tested on scripted time.
 */
import type { Clock, RandomSource } from "../protocol/execution.js";

export type { Clock, RandomSource };

export const systemClock: Clock = {
  now: () => Date.now(),
  // performance.now exists in Node, browsers and edge runtimes.
  monotonic: () => performance.now(),
  setTimer: (ms, fire) => {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};

export const systemRandom: RandomSource = Math.random;
