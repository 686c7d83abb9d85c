/**
 * Delivery by sequence (SPEC R81, amended): every event of a durable session gets its sequence
 * number as it enters its run's event queue, counted per session from the run's journaled base,
 * so the original process, any resume and a replay number the same event alike. No event object
 * is ever remembered by identity: a run's machine may push one shared object many times.
 *
 * Nothing is delivered before it is in a record: a job's output (a streaming response's
 * `message_start`/`message_update`, a tool's progress, a preflight's `tool_execution_start`) is
 * written as the delivery of its first event begins (`cover`), so a resume and a replay produce
 * every event any process delivered, with its number. Such an event is provisional when the job
 * had not ended: a crash may still contradict it, and the resumed run then retracts it with a new
 * event (`message_discarded`, reason `interrupted`, numbered next, `fromSeq` pointing back at the
 * retracted response's first event). No number is ever given to two events.
 *
 * The ledger decides, per delivered event, whether a resumed run's sink gets it (its sequence
 * number is after where delivery resumes) and tracks the last sequence number whose delivery
 * completed, which the journal writes into each record (`d`): a resume without `after` starts
 * right after it.
 */
import type { AnyAgentEvent } from "../types.js";
import type { EventQueue } from "../bridge/event-queue.js";

/** What a sink learns about the event it is given (its second argument; an Agent listener's third). */
export interface EventDelivery {
  /** The event's sequence number in its session: 1, 2, … with no gap, the same in every process and in a replay. */
  readonly seq: number;
  /** Delivered before its record was durable: a crash may retract it (`message_discarded`, reason `interrupted`). */
  readonly provisional: boolean;
}

/** A delivery the resumed run's sink does not get (delivered before the crash, or before the consumer's `after`). */
export interface LedgerDelivery extends EventDelivery {
  readonly skipped: boolean;
}

export class DeliveryLedger {
  /** Events pushed by this run so far. */
  private pushed = 0;
  /** Events whose delivery completed (in order: the queue delivers one at a time). */
  private completed = 0;
  /** Provisional flags of the pushed events not yet delivered, from `head`. */
  private flags: boolean[] = [];
  private head = 0;
  /** Sequence numbers below this are not given to the sink (a resumed run's past). */
  private deliverFrom: number;

  constructor(
    /** The session's event count before this run (from its `run` record). */
    readonly base: number,
    /** The first sequence number the sink gets (1 past the base for a new run). */
    deliverFrom: number,
  ) {
    this.deliverFrom = deliverFrom;
  }

  /** The sequence number the next pushed event gets. */
  get nextSeq(): number {
    return this.base + this.pushed + 1;
  }

  /** The session's event count so far (what an `end` record keeps for the next run). */
  get lastSeq(): number {
    return this.base + this.pushed;
  }

  /** The last sequence number whose delivery completed (the base when none did). */
  get deliveredSeq(): number {
    return this.base + this.completed;
  }

  /** `after: "journal"`: the sink gets what follows the journal, from the moment the run goes live. */
  goneLive(): void {
    if (this.deliverFrom === Number.POSITIVE_INFINITY) this.deliverFrom = this.nextSeq;
  }

  /**
   * Wraps the run's queue: each push is numbered, flagged, and counted when its delivery completes;
   * `cover` runs as each delivery begins (R81's write-ahead of what a job emitted so far).
   */
  wrap(queue: EventQueue, provisional: () => boolean, cover?: () => void): void {
    if (cover) queue.beforeDeliver = cover;
    const push = queue.push.bind(queue);
    const advance = () => {
      this.completed++;
      this.head++;
      // Drop delivered flags now and then (not per event: a shift is O(n)).
      if (this.head > 1024 && this.head * 2 > this.flags.length) {
        this.flags = this.flags.slice(this.head);
        this.head = 0;
      }
    };
    queue.push = (event: AnyAgentEvent) => {
      this.pushed++;
      this.flags.push(provisional());
      const delivery = push(event);
      if (delivery) void delivery.then(advance, advance);
      else advance();
      return delivery;
    };
  }

  /** The event being delivered now (the queue's sink calls this for the event it was given). */
  current(): LedgerDelivery {
    const seq = this.base + this.completed + 1;
    return { seq, provisional: this.flags[this.head] === true, skipped: seq < this.deliverFrom };
  }
}
