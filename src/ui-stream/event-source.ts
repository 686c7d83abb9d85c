/**
 * The seam a reconnecting client re-attaches through: events with sequence numbers that can be
 * subscribed from a point (`after`). `runEventBuffer(agent)` is the in-process one (the current
 * run's events, in memory); a durable session's `subscribe(listener, { after })` (R80's journal)
 * is the other, so a reload or a second process resumes from the store.
 */
import type { Agent } from "../agent/agent.js";
import type { AnyAgentEvent } from "../protocol/events.js";

export interface SequencedEvent {
  /** Increases by one per event, across runs; never reused. */
  seq: number;
  event: AnyAgentEvent;
}

/** A source of a session's events, replayable from a sequence number. */
export interface SequencedEventSource {
  /**
   * Calls `listener` with every event whose `seq` is greater than `after` that the source still
   * holds, in order, then with each new one. Returns the unsubscribe. The in-memory buffer gives
   * what it holds synchronously; a durable source (`durableEventSource`) may read the store first
   * and give it a little later: either way no event is given twice or skipped.
   */
  subscribe(listener: (event: SequencedEvent) => void, options?: { after?: number }): () => void;
  /** The `seq` just before the current (or last) run's `agent_start`: subscribing from it replays that run whole. */
  readonly runStartAfter: number;
  /** The last `seq` given out (0 before any event). */
  readonly lastSeq: number;
}

/** The current run's events of an in-process Agent (the buffer restarts at each `agent_start`). */
export interface RunEventBuffer extends SequencedEventSource {
  /** How many transcript messages the Agent held when the current (or last) run started. */
  readonly transcriptLengthAtRunStart: number;
  /** Stops listening to the Agent and drops the buffer. */
  close(): void;
}

export function runEventBuffer(agent: Agent): RunEventBuffer {
  let buffer: SequencedEvent[] = [];
  let lastSeq = 0;
  let runStartAfter = 0;
  let transcriptLengthAtRunStart = agent.state.messages.length;
  const listeners = new Set<(event: SequencedEvent) => void>();
  const unsubscribe = agent.subscribe(
    (event) => {
      const entry = { seq: ++lastSeq, event };
      // Only the run in progress is kept: a reconnect replays it from its start (older runs are in the transcript).
      if (event.type === "agent_start") {
        buffer = [];
        runStartAfter = entry.seq - 1;
        transcriptLengthAtRunStart = agent.state.messages.length;
      }
      buffer.push(entry);
      for (const listener of [...listeners]) listener(entry);
    },
    { runtimeEvents: true },
  );
  return {
    get lastSeq() {
      return lastSeq;
    },
    get runStartAfter() {
      return runStartAfter;
    },
    get transcriptLengthAtRunStart() {
      return transcriptLengthAtRunStart;
    },
    subscribe(listener, options) {
      const after = options?.after ?? runStartAfter;
      for (const entry of buffer) if (entry.seq > after) listener(entry);
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close() {
      unsubscribe();
      listeners.clear();
      buffer = [];
    },
  };
}
