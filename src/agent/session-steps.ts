/**
 * When the Agent's listeners get a run's event: at once, unless a session actor is mid-step
 * (issue 40: delivering each event through an async function cost every event a promise and
 * microtask hops, and the run's next step waited for them).
 *
 * A session is mid-step while an event sent to it is being taken: a run it starts emits its first
 * events then (`agent_start` …, inside `prompt()`), as does a run told of an abort or an approval.
 * Those keep the timing they had (the reference's: `prompt()` returns once `agent_start` reached
 * the listeners), and a message's end reaches the listeners only after the session took it (the
 * state they read is as of their event).
 */
import type { EventObject } from "xstate";

let depth = 0;
let taken = 0;

/** Sends `event` to a session actor of this process: it takes it now, or after the step it is in. */
export function sendToSession<E extends EventObject>(session: { send(event: E): void }, event: E): void {
  depth++;
  try {
    session.send(event);
  } finally {
    depth--;
  }
}

/** `sendToSession`, and whether the session took the event now (false: it was mid-step, and takes it once that step ends). */
export function sentAndTaken<E extends EventObject>(session: { send(event: E): void }, event: E): boolean {
  const before = taken;
  sendToSession(session, event);
  return taken !== before;
}

/** Is a session actor of this process taking an event sent through `sendToSession`? */
export const inSessionStep = (): boolean => depth > 0;

/** A session actor's observer: it took an event (counted, for `sentAndTaken`). */
export function countTakenEvent(): void {
  taken++;
}
