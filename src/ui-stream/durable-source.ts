/**
 * A durable Agent's events as a `SequencedEventSource` (SPEC R81): the route's reconnect and a
 * page reload subscribe from any sequence number of the session (`agent.subscribe(l, { after })`),
 * the stored runs included, not only the run in memory. Sequence numbers are the session's: the
 * same across reloads, restarts and resumes.
 */
import type { Agent } from "../agent/agent.js";
import type { RunEventBuffer } from "./event-source.js";

export function durableEventSource(agent: Agent): RunEventBuffer {
  const sequence = () => {
    const seq = agent.sequence;
    if (!seq) throw new TypeError("durableEventSource(agent): the Agent has no store (options.durable)");
    return seq;
  };
  sequence();
  const subscriptions = new Set<() => void>();
  let transcriptLengthAtRunStart = agent.state.messages.length;
  // The transcript's length as each run starts (uiMessagesOf shows a run in progress from its prompt).
  const watch = agent.subscribe((event) => void (event.type === "agent_start" && (transcriptLengthAtRunStart = agent.state.messages.length)));
  return {
    get lastSeq() {
      return sequence().lastSeq;
    },
    get runStartAfter() {
      return sequence().runStartAfter;
    },
    get transcriptLengthAtRunStart() {
      return transcriptLengthAtRunStart;
    },
    subscribe(listener, options) {
      const unsubscribe = agent.subscribe((event, _signal, delivery) => listener({ seq: delivery!.seq, event }), { after: options?.after ?? sequence().runStartAfter, runtimeEvents: true });
      subscriptions.add(unsubscribe);
      return () => {
        subscriptions.delete(unsubscribe);
        unsubscribe();
      };
    },
    close() {
      watch();
      for (const unsubscribe of subscriptions) unsubscribe();
      subscriptions.clear();
    },
  };
}
