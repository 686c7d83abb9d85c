/**
 * Pacing for demos: spreads a tool's steps over at least `minDurationMs`, so that progress and
 * spinners are visible even on a tiny repository. Zero (the default) means no delay at all.
 */
export interface Pacer {
  /** Waits, if needed, until step `done` of `total` is due; rejects when `signal` aborts. */
  step(done: number, total: number): Promise<void>;
}

export function createPacer(minDurationMs: number, signal: AbortSignal | undefined, now = () => performance.now()): Pacer {
  const started = now();
  return {
    async step(done, total) {
      if (!minDurationMs || total <= 0) return;
      const due = started + (minDurationMs * done) / total;
      const wait = due - now();
      if (wait >= 15) await sleep(wait, signal);
    },
  };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("Aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("Aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Calls `fn` at most every `intervalMs` (and always when `force`). */
export function throttle(intervalMs: number, now = () => performance.now()) {
  let last = -Infinity;
  return (fn: () => void, force = false) => {
    const at = now();
    if (force || at - last >= intervalMs) {
      last = at;
      fn();
    }
  };
}
