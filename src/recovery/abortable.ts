/** Waiting on a promise only as long as the run's signal allows (SPEC R62: compaction is abortable). */
import { CompactionError } from "./compaction-error.js";

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortedError(signal);
}

/**
 * `promise`, or a `CompactionError("aborted")` as soon as `signal` aborts: `complete` takes no
 * signal of its own, so a request that ignores the abort must not keep the compactor waiting.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  throwIfAborted(signal);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

const abortedError = (signal: AbortSignal) => new CompactionError("aborted", "Compaction aborted", { cause: signal.reason });
