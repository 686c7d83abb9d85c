/** A run clock (SPEC R13) whose time moves only when the test says, with the timers set on it. */
import type { Clock } from "../../src/index.js";

export function manualClock(start = 1_000) {
  let now = start;
  const timers: { at: number; fire: () => void; ms: number }[] = [];
  const clock: Clock = {
    now: () => now,
    monotonic: () => now,
    setTimer: (ms, fire) => {
      const timer = { at: now + ms, fire, ms };
      timers.push(timer);
      return () => void timers.splice(timers.indexOf(timer) >>> 0, 1);
    },
  };
  const advance = (ms: number) => {
    now += ms;
    for (const timer of timers.filter((entry) => entry.at <= now)) {
      timers.splice(timers.indexOf(timer), 1);
      timer.fire();
    }
  };
  return { clock, advance, timers, now: () => now };
}

/** Lets queued promise jobs and I/O callbacks run (no time passes on the run's clock). */
export const ticks = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};
