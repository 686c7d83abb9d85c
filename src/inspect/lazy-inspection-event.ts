/**
 * `sanitizeInspectionEvent`, deferred field by field: the observer gets the event at once, and its
 * `snapshot`, `event` or `action` is sanitized the first time it is read (then kept). A run emits
 * about 300 inspection events per five turns; most observers read a few kinds of them (the Stately
 * inspector forwards snapshots and events only), so the others cost nothing.
 *
 * Reading later gives what reading at once would have: the fields point at XState snapshots,
 * events and action params, which are immutable (see "Reuse" in sanitize.ts). The unsanitized
 * values stay in closures, out of reach of the observer's properties and of JSON.
 */
import type { AnyEventObject, InspectionEvent } from "xstate";
import { sanitizeEvent, sanitizeSnapshot, sanitizeValue } from "./sanitize.js";
import type { SanitizeOptions } from "./sanitize-options.js";

/** Computes once, on first read; a value the observer assigns replaces it. Never throws. */
function deferred<T>(compute: () => T, fallback: () => T): { get: () => T; set: (value: T) => void } {
  let done = false;
  let value: T;
  return {
    get() {
      if (!done) {
        try {
          value = compute();
        } catch {
          value = fallback();
        }
        done = true;
      }
      return value;
    },
    set(next) {
      value = next;
      done = true;
    },
  };
}

const typeOnly = (event: AnyEventObject): AnyEventObject => ({ type: typeof event?.type === "string" ? event.type : "unknown" });

/** Like `sanitizeInspectionEvent`, with `snapshot`, `event` and `action` sanitized when first read. */
export function sanitizeInspectionEventLazily<E extends InspectionEvent>(event: E, options?: SanitizeOptions): E {
  switch (event.type) {
    case "@xstate.snapshot":
    case "@xstate.transition":
    case "@xstate.microstep": {
      const inner = deferred(() => sanitizeEvent(event.event, options), () => typeOnly(event.event));
      const snapshot = deferred(() => sanitizeSnapshot(event.snapshot, options) as never, () => ({ status: "active" }) as never);
      return {
        ...event,
        get event() {
          return inner.get();
        },
        set event(value) {
          inner.set(value);
        },
        get snapshot() {
          return snapshot.get();
        },
        set snapshot(value) {
          snapshot.set(value);
        },
      };
    }
    case "@xstate.event": {
      const inner = deferred(() => sanitizeEvent(event.event, options), () => typeOnly(event.event));
      return {
        ...event,
        get event() {
          return inner.get();
        },
        set event(value) {
          inner.set(value);
        },
      };
    }
    case "@xstate.action": {
      const raw = event.action;
      const action = deferred(
        () => ({ type: raw.type, params: sanitizeValue(raw.params, options) }),
        () => ({ type: typeof raw?.type === "string" ? raw.type : "unknown", params: undefined }),
      );
      return {
        ...event,
        get action() {
          return action.get();
        },
        set action(value) {
          action.set(value);
        },
      };
    }
    default:
      return event;
  }
}
