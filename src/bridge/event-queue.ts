import type { AnyAgentEvent } from "../types.js";

/** Where a run's events go, awaited one at a time. */
export type LoopEventSink = (event: AnyAgentEvent) => void | Promise<void>;

/**
 * The run's single, ordered path to its event sink. Events are delivered one at a time in push
 * order; while an async sink has not settled, later events wait, so a sink never sees overlapping
 * calls (SPEC "Entry points": serializing every emit). `settled()` is the barrier every actor
 * awaits before it does anything observable. A sink that throws is the caller's bug: the queue
 * stops delivering and reports it once through `onFailure` (R56).
 */
export class EventQueue {
  private pending: Promise<void> | undefined;
  private failed = false;
  /** Called as each event's delivery begins, before the sink (R81: a durable run makes what it delivers durable first). */
  beforeDeliver: (() => void) | undefined = undefined;

  constructor(
    private readonly sink: LoopEventSink,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  /** Delivers `event` now, or after the events before it; the promise (if any) settles with it. */
  push(event: AnyAgentEvent): Promise<void> | undefined {
    if (this.failed) return undefined;
    if (this.pending) return this.track(this.pending.then(() => this.deliver(event)));
    const delivery = this.deliver(event);
    return delivery ? this.track(delivery) : undefined;
  }

  /** Undefined when every pushed event has been delivered; otherwise settles when they have. */
  settled(): Promise<void> | undefined {
    return this.pending;
  }

  private deliver(event: AnyAgentEvent): Promise<void> | undefined {
    if (this.failed) return undefined;
    try {
      this.beforeDeliver?.();
      const result = this.sink(event);
      if (result && typeof (result as Promise<void>).then === "function") {
        return (result as Promise<void>).then(undefined, (error: unknown) => this.fail(error));
      }
    } catch (error) {
      this.fail(error);
    }
    return undefined;
  }

  private track(delivery: Promise<void>): Promise<void> {
    this.pending = delivery;
    void delivery.then(() => {
      if (this.pending === delivery) this.pending = undefined;
    });
    return delivery;
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.onFailure(error);
  }
}
