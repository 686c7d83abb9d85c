/**
 * An embedded run's AgentEvent channel (`agentEvents`). An invoked or spawned run starts with its
 * parent, before the app can reach the child to subscribe, so its first events (`agent_start`,
 * `turn_start`, the prompt's messages) would be lost to every subscriber. Until its first
 * subscription the channel keeps the run's events and replays them to that subscriber; the first
 * subscription ends the keeping. Bounded: a run that emits more than `MAX_KEPT` events before
 * anyone subscribes keeps none (a subscriber then sees events from the moment it subscribes, never
 * a stream with a gap).
 */
import { Observable, Subject } from "rxjs";
import type { AnyAgentEvent } from "../types.js";

/** Events kept for a first subscriber (a first turn's deltas included). */
export const MAX_KEPT = 1_000;

export class RunEventChannel {
  private readonly live = new Subject<AnyAgentEvent>();
  /** The run's events so far, for the first subscriber; undefined once someone subscribed or too many came. */
  private kept: AnyAgentEvent[] | undefined = [];

  next(event: AnyAgentEvent): void {
    if (this.kept) {
      if (this.kept.length < MAX_KEPT) this.kept.push(event);
      else this.kept = undefined;
    }
    this.live.next(event);
  }

  /** The run's events: from its first for the first subscriber (see above), from the moment of subscription for the others. */
  readonly events: Observable<AnyAgentEvent> = new Observable<AnyAgentEvent>((subscriber) => {
    const kept = this.kept;
    this.kept = undefined;
    if (kept) for (const event of kept) subscriber.next(event);
    return this.live.subscribe(subscriber);
  });
}
