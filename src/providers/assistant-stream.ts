import type { AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream } from "../types.js";

/**
 * A push-based `AssistantMessageEventStream`: providers `push` events as they arrive and the
 * consumer pulls them with `for await`. The terminal `done`/`error` event settles `result()`;
 * `end(message)` settles it for a stream that stops without one. One consumer is expected.
 */
export class PushAssistantStream implements AssistantMessageEventStream {
  private readonly queue: AssistantMessageEvent[] = [];
  private waiting: { resolve: (r: IteratorResult<AssistantMessageEvent>) => void; reject: (error: unknown) => void } | undefined;
  private failure: { error: unknown } | undefined;
  private closed = false;
  private final: AssistantMessage | undefined;
  private readonly finalPromise: Promise<AssistantMessage>;
  private resolveFinal!: (m: AssistantMessage) => void;

  constructor() {
    this.finalPromise = new Promise((resolve) => (this.resolveFinal = resolve));
  }

  push(event: AssistantMessageEvent): void {
    if (this.closed) return;
    if (event.type === "done") this.settle(event.message);
    else if (event.type === "error") this.settle(event.error);
    const waiter = this.waiting;
    if (waiter) {
      this.waiting = undefined;
      waiter.resolve({ value: event, done: false });
    } else this.queue.push(event);
    if (event.type === "done" || event.type === "error") this.close();
  }

  /** Ends the stream; `message` settles `result()` if no terminal event did. */
  end(message?: AssistantMessage): void {
    if (message) this.settle(message);
    this.close();
  }

  /**
   * Breaks the stream: the consumer's pending and later `next()` reject with `error`. Only for
   * simulating a provider that violates the never-throw contract (R56 tests); real providers end
   * with an `error` event instead.
   */
  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = { error };
    this.closed = true;
    const waiter = this.waiting;
    this.waiting = undefined;
    waiter?.reject(error);
  }

  result(): Promise<AssistantMessage> {
    return this.finalPromise;
  }

  [Symbol.asyncIterator](): AsyncIterator<AssistantMessageEvent> {
    return {
      next: () => {
        const event = this.queue.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (this.failure) return Promise.reject(this.failure.error);
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private settle(message: AssistantMessage): void {
    if (this.final) return;
    this.final = message;
    this.resolveFinal(message);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    const waiter = this.waiting;
    this.waiting = undefined;
    waiter?.resolve({ value: undefined, done: true });
  }
}

export { emptyUsage } from "../loop/usage.js";

/** Monotonic milliseconds (performance.now exists in Node, browsers and edge runtimes). */
export const monotonicNow = (): number => performance.now();
