/**
 * The events a follower has drawn, as the durable delivery contract (R81) asks it to keep them: a
 * `message_discarded` with `fromSeq` (a process or worker died mid-response; the response is
 * requested again) takes back every provisional event from `fromSeq` on, not just the last message.
 * Its own number is the next one (above them: no number is ever reused, embedded or on Restate).
 * Firm events in that range (a tool's start and end between the partial response's deltas) stay.
 */

/** An event as the session's numbered log holds it (`E`: the page's event type; kept generic so this module needs no import). */
export interface LoggedEvent<E extends { type: string }> {
  readonly id: number;
  readonly event: E;
  readonly provisional: boolean;
}

export class SessionLog<E extends { type: string }> {
  private kept: LoggedEvent<E>[] = [];

  /** The events to draw, in order. */
  get events(): readonly LoggedEvent<E>[] {
    return this.kept;
  }

  /**
   * Takes the next event; `"retracted"` when it took events back (redraw from `events`), else
   * `"appended"` (draw just this one). The retraction itself is not kept: it draws nothing.
   */
  add(entry: LoggedEvent<E>): "appended" | "retracted" {
    const fromSeq = retractionFrom(entry.event);
    if (fromSeq === undefined) {
      this.kept.push(entry);
      return "appended";
    }
    this.kept = this.kept.filter((kept) => !(kept.provisional && kept.id >= fromSeq));
    return "retracted";
  }
}

function retractionFrom(event: { type: string }): number | undefined {
  const candidate = event as { type: string; reason?: unknown; fromSeq?: unknown };
  return candidate.type === "message_discarded" && candidate.reason === "interrupted" && typeof candidate.fromSeq === "number" ? candidate.fromSeq : undefined;
}
