/**
 * Records what would crash a host: unhandled rejections and uncaught exceptions, while a test
 * runs. `settle()` lets pending callbacks run (one macrotask turn, no timer) and returns them.
 */
export interface CrashWatch {
  settle(): Promise<unknown[]>;
  stop(): void;
}

export function watchCrashes(): CrashWatch {
  const crashes: unknown[] = [];
  const onRejection = (reason: unknown) => crashes.push(reason);
  const onException = (error: unknown) => crashes.push(error);
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return {
    async settle() {
      // Node reports an unhandled rejection after the microtask queue drains; two macrotask
      // turns are enough for it (and for a deferred inspector callback) to fire.
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      return crashes.slice();
    },
    stop() {
      process.off("unhandledRejection", onRejection);
      process.off("uncaughtException", onException);
    },
  };
}
