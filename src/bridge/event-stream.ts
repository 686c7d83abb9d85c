import { Observable, observable, Subject, type Observer, type Subscribable, type Unsubscribable } from "rxjs";
import type { AgentEvent, AgentMessage } from "../types.js";

/**
 * What `agentLoop` returns: an RxJS-interoperable Observable (`from(stream)`, `subscribe`) **and**
 * an async iterable, with `result()`. The run starts at once; events are buffered until the first
 * subscriber or iterator attaches, so a consumer that attaches right after the call sees every
 * event; later subscribers see events from the moment they subscribe. Unsubscribing or breaking
 * out of a `for await` never aborts the run (the signal does).
 */
export class AgentEventStream implements Subscribable<AgentEvent>, AsyncIterable<AgentEvent> {
  private buffer: AgentEvent[] | null = [];
  private readonly subject = new Subject<AgentEvent>();
  private ended = false;

  constructor(private readonly messages: Promise<AgentMessage[]>) {}

  /** The messages the run added (R12). */
  result(): Promise<AgentMessage[]> {
    return this.messages;
  }

  /** @internal The runtime's sink. */
  push(event: AgentEvent): void {
    if (this.buffer) this.buffer.push(event);
    else this.subject.next(event);
  }

  /** @internal */
  end(): void {
    this.ended = true;
    if (!this.buffer) this.subject.complete();
  }

  subscribe(observerOrNext?: Partial<Observer<AgentEvent>> | ((event: AgentEvent) => void)): Unsubscribable {
    // Through an RxJS Observable, so a consumer that throws is reported the RxJS way (never into
    // the loop), for buffered and live events alike.
    return new Observable<AgentEvent>((subscriber) => {
      const buffered = this.buffer;
      if (buffered) {
        this.buffer = null;
        for (const event of buffered) subscriber.next(event);
        if (this.ended) this.subject.complete();
      }
      return this.subject.subscribe(subscriber);
    }).subscribe(observerOrNext as Partial<Observer<AgentEvent>>);
  }

  [observable](): Subscribable<AgentEvent> {
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    const queue: AgentEvent[] = [];
    let done = false;
    let wake: (() => void) | undefined;
    const subscription = this.subscribe({
      next: (event) => {
        queue.push(event);
        wake?.();
      },
      complete: () => {
        done = true;
        wake?.();
      },
    });
    return {
      next: async () => {
        while (queue.length === 0 && !done) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        const event = queue.shift();
        return event ? { value: event, done: false } : { value: undefined, done: true };
      },
      return: async () => {
        done = true;
        subscription.unsubscribe();
        return { value: undefined, done: true };
      },
    };
  }
}
