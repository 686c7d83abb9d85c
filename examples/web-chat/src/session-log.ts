/**
 * The events a follower has drawn, as the durable delivery contract (R81) asks it to keep them: a
 * `message_discarded` with `fromSeq` (a worker died mid-response; the response is requested again)
 * takes back every provisional event from `fromSeq` on, not just the last message. Firm events in
 * that range (a tool's start and end between the partial response's deltas) stay.
 */
import type { AgentEvent } from "xstate-agent-loop";

export interface LoggedEvent {
  readonly id: number;
  readonly event: AgentEvent;
  readonly provisional: boolean;
}

export class SessionLog {
  private kept: LoggedEvent[] = [];

  /** The events to draw, in order. */
  get events(): readonly LoggedEvent[] {
    return this.kept;
  }

  /**
   * Takes the next event; `"retracted"` when it took events back (redraw from `events`), else
   * `"appended"` (draw just this one). The retraction itself is not kept: it draws nothing.
   */
  add(entry: LoggedEvent): "appended" | "retracted" {
    const fromSeq = retractionFrom(entry.event);
    if (fromSeq === undefined) {
      this.kept.push(entry);
      return "appended";
    }
    this.kept = this.kept.filter((kept) => !(kept.provisional && kept.id >= fromSeq));
    return "retracted";
  }
}

function retractionFrom(event: AgentEvent): number | undefined {
  const candidate = event as { type: string; reason?: unknown; fromSeq?: unknown };
  return candidate.type === "message_discarded" && candidate.reason === "interrupted" && typeof candidate.fromSeq === "number" ? candidate.fromSeq : undefined;
}
