/**
 * Subscribing to a durable session from a sequence number (SPEC R81): `agent.subscribe(listener,
 * { after })` on a session that is open and running (another tab, a reconnecting client) gets the
 * stored events after `after`, then the live ones, each once, in order, with no gap at the seam.
 *
 * The tail keeps the events of the session's current run (or of the last one this process ran) in
 * memory, as they were delivered: the ones a resumed run replays silently included. Events before
 * that run come from the store, replayed (R83), flagged as they were delivered. The seam is by
 * sequence number (no number is ever given to two events, a retraction included); an event fed
 * while a subscriber caught up is queued for it, never lost.
 */
import type { AnyAgentEvent } from "../types.js";
import type { EventDelivery } from "./delivery.js";
import type { SequencedDelivery } from "./stored-events.js";
import { isRuntimeEvent } from "../loop/runtime-events.js";

/** A subscriber's listener: the event, the run's abort signal (a never-aborted one for stored events), its delivery. */
export type SequencedListener = (event: AnyAgentEvent, signal: AbortSignal, delivery: EventDelivery) => void | Promise<void>;

export interface TailSource {
  /** The session's event count before the first event this process will feed (its stored head). */
  head(): number;
  /** The stored events in (`after`, `through`]: runs finished before the tail's run. */
  stored(after: number, through: number): Promise<SequencedDelivery[]>;
}

const quiet = new AbortController().signal;

export class SessionTail {
  /** The tail's run's events, from its `agent_start`. */
  private entries: SequencedDelivery[] = [];
  /** The sequence number before `entries[0]` (undefined until known: the store is read on first need). */
  private base: number | undefined;
  /** Events fed so far in this process. */
  private fed = 0;

  constructor(private readonly source: TailSource) {}

  /**
   * The sequence number before the current (or last) run's `agent_start`: subscribing from it gets
   * that run whole. Before a run here it is read from the store: a journal that cannot be read
   * throws the store's error (`StoreCorruptError`), and is read again next time.
   */
  get runStartAfter(): number {
    return (this.base ??= this.source.head());
  }

  /** The last sequence number given out (the stored head before any run here). */
  get lastSeq(): number {
    return this.entries.at(-1)?.delivery.seq ?? this.runStartAfter;
  }

  /** Every numbered event of the session's runs here, as it is delivered (before its listeners). */
  feed(event: AnyAgentEvent, delivery: EventDelivery): void {
    this.fed++;
    if (event.type === "agent_start" || this.base === undefined) {
      // A new run: the previous one is finished and stored.
      this.entries = [];
      this.base = delivery.seq - 1;
    }
    this.entries.push({ event, delivery: { seq: delivery.seq, provisional: delivery.provisional } });
  }

  /**
   * A subscriber from `after`: `live` is what the Agent calls with each event from now on (it is
   * one of its listeners); the catch-up runs at once (synchronously when the tail holds
   * everything it needs and the listener returns no promise).
   */
  subscribe(listener: SequencedListener, options: { after: number; runtimeEvents: boolean; onError: (error: unknown) => void }): Subscription {
    const { after, onError } = options;
    let through: number;
    try {
      through = this.runStartAfter;
    } catch (error) {
      // The stored head is the catch-up's first store read (a damaged journal: StoreCorruptError):
      // its failure ends the subscription through onError like the others, never a throw from here.
      const failed = new Subscription(listener, this, this.fed, after, options.runtimeEvents);
      failed.close();
      onError(error);
      return failed;
    }
    const subscription = new Subscription(listener, this, this.fed, Math.max(after, through), options.runtimeEvents);
    for (const entry of this.entries) subscription.queue(entry);
    void subscription.catchUp(after < through ? () => this.source.stored(after, through).then((events) => events.filter((entry) => subscription.wants(entry.event))) : undefined, onError);
    return subscription;
  }

  /** How many events were fed (the subscription tells an event fed before it from a live one). */
  get position(): number {
    return this.fed;
  }
}

export class Subscription {
  /** Queued while catching up; undefined once live. */
  private pending: SequencedDelivery[] | undefined = [];
  private closed = false;
  /** The last sequence number taken (delivered or queued). */
  private cursor: number;

  constructor(
    private readonly listener: SequencedListener,
    private readonly tail: SessionTail,
    /** The tail's position when subscribed: events fed up to it were taken from the tail. */
    private readonly from: number,
    cursor: number,
    /** The loop's own events too (R66), as `subscribe(l, { runtimeEvents: true })`. */
    private readonly runtimeEvents: boolean,
  ) {
    this.cursor = cursor;
  }

  wants(event: AnyAgentEvent): boolean {
    return this.runtimeEvents || !isRuntimeEvent(event);
  }

  close(): void {
    this.closed = true;
    this.pending = undefined;
  }

  /** The Agent's call for each event it delivers (skipped ones of a resumed run too). */
  offer(event: AnyAgentEvent, signal: AbortSignal, delivery: EventDelivery): void | Promise<void> {
    // Fed before this subscriber came: it was taken from the tail already.
    if (this.closed || this.tail.position <= this.from) return;
    const entry = { event, delivery: { seq: delivery.seq, provisional: delivery.provisional } };
    if (!this.queue(entry)) return;
    if (this.pending) return;
    return this.listener(event, signal, entry.delivery);
  }

  /** Takes `entry` if it follows what was taken. */
  queue(entry: SequencedDelivery): boolean {
    const seq = entry.delivery.seq;
    if (!this.wants(entry.event)) return false;
    if (seq <= this.cursor) return false;
    this.cursor = seq;
    if (this.pending && !this.closed) this.pending.push(entry);
    return true;
  }

  /** Stored events first (when `after` is before the tail's run), then what was queued, then live. */
  async catchUp(stored: (() => Promise<SequencedDelivery[]>) | undefined, onError: (error: unknown) => void): Promise<void> {
    try {
      if (stored) {
        for (const { event, delivery } of await stored()) {
          if (this.closed) return;
          await this.listener(event, quiet, delivery);
        }
      }
      const pending = this.pending;
      for (let next = 0; pending && next < pending.length; next++) {
        if (this.closed) return;
        const { event, delivery } = pending[next];
        const result = this.listener(event, quiet, delivery);
        if (result) await result;
      }
      // (Same tick as the check above: nothing can be queued in between.)
      if (!this.closed) this.pending = undefined;
    } catch (error) {
      this.close();
      onError(error);
    }
  }
}
