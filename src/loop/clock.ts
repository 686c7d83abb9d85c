/**
 * The run's clock and random source (SPEC R13): the loop reads time and randomness only through
 * these, so a run can be replayed with the same readings (R83) and tested on scripted time.
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch: message timestamps, deadlines. */
  now(): number;
  /** Monotonic milliseconds: durations. */
  monotonic(): number;
  /** Calls `fire` after `ms` milliseconds (R65's tool timeouts); returns the cancel. */
  setTimer(ms: number, fire: () => void): () => void;
}

/** A number in [0, 1). */
export type RandomSource = () => number;

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
