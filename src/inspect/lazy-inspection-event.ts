/**
 * `sanitizeInspectionEvent`, deferred field by field: the observer gets the event at once, and its
 * `snapshot`, `event` or `action` is sanitized the first time it is read (then kept). A run emits
 * about 300 inspection events per five turns; most observers read a few kinds of them (the Stately
 * inspector forwards snapshots and events only), so the others cost nothing.
 *
 * The event is a Proxy over XState's: 40 ns to make, where an object with accessor properties took
 * 700 ns and doubled the garbage collector's work. Every way of reading a field (`e.snapshot`,
 * spread, `Object.entries`, JSON) gets the sanitized value; writes and deletes stay on the Proxy,
 * never on XState's event, which every observer shares. Reading later gives what reading at once
 * would have: the fields point at XState snapshots, events and action params, which are immutable
 * (see "Reuse" in sanitize.ts). An event that cannot be wrapped (frozen, sealed) is sanitized at
 * once.
 */
import type { InspectionEvent } from "xstate";
import { sanitizeEvent, sanitizeInspectionEvent, sanitizeSnapshot, sanitizeValue } from "./sanitize.js";
import type { SanitizeOptions } from "./sanitize-options.js";

const LAZY: Record<string, readonly string[] | undefined> = {
  "@xstate.snapshot": ["event", "snapshot"],
  "@xstate.transition": ["event", "snapshot"],
  "@xstate.microstep": ["event", "snapshot"],
  "@xstate.event": ["event"],
  "@xstate.action": ["action"],
};

const DELETED = Symbol("deleted");

interface State {
  fields: readonly string[];
  options: SanitizeOptions | undefined;
  /** Sanitized fields read so far, and what the observer wrote or deleted. */
  values: Map<string | symbol, unknown>;
}

/** Never throws: a field that cannot be sanitized becomes its safest stand-in. */
function sanitizeField(raw: Record<string, unknown>, key: string, options: SanitizeOptions | undefined): unknown {
  try {
    if (key === "snapshot") return sanitizeSnapshot(raw.snapshot, options);
    if (key === "event") return sanitizeEvent(raw.event as never, options);
    const action = raw.action as { type: unknown; params: unknown };
    return { type: action.type, params: sanitizeValue(action.params, options) };
  } catch {
    return key === "snapshot" ? { status: "active" } : { type: "unknown" };
  }
}

function valueOf(state: State, raw: Record<string, unknown>, key: string | symbol): unknown {
  if (state.values.has(key)) return state.values.get(key);
  if (typeof key === "string" && state.fields.includes(key) && key in raw) {
    const value = sanitizeField(raw, key, state.options);
    state.values.set(key, value);
    return value;
  }
  return DELETED;
}

/** Shared traps; each event's handler inherits them and holds its own `state`. */
type Handler = ProxyHandler<Record<string, unknown>> & { state: State };
const traps: ProxyHandler<Record<string, unknown>> & ThisType<Handler> = {
  get(raw, key) {
    const state = this.state;
    const value = valueOf(state, raw, key);
    if (value !== DELETED) return value;
    return state.values.has(key) ? undefined : Reflect.get(raw, key);
  },
  has(raw, key) {
    const state = this.state;
    if (state.values.has(key)) return state.values.get(key) !== DELETED;
    return key in raw;
  },
  set(raw, key, value) {
    this.state.values.set(key, value);
    return true;
  },
  deleteProperty(raw, key) {
    this.state.values.set(key, DELETED);
    return true;
  },
  defineProperty() {
    return false;
  },
  ownKeys(raw) {
    const state = this.state;
    const keys = Reflect.ownKeys(raw).filter((key) => state.values.get(key) !== DELETED);
    for (const [key, value] of state.values) if (value !== DELETED && !keys.includes(key)) keys.push(key);
    return keys;
  },
  getOwnPropertyDescriptor(raw, key) {
    const state = this.state;
    const own = Reflect.getOwnPropertyDescriptor(raw, key);
    const value = valueOf(state, raw, key);
    if (value === DELETED) return state.values.has(key) ? undefined : own;
    return { value, writable: true, enumerable: own?.enumerable ?? true, configurable: true };
  },
};

/** Like `sanitizeInspectionEvent`, with `snapshot`, `event` and `action` sanitized when first read. */
export function sanitizeInspectionEventLazily<E extends InspectionEvent>(event: E, options?: SanitizeOptions): E {
  const fields = LAZY[event.type];
  if (!fields) return event;
  if (!Object.isExtensible(event)) return sanitizeInspectionEvent(event, options);
  // The target is a copy: whatever a trap does not cover lands there, never on XState's event.
  const shell = { ...(event as unknown as Record<string, unknown>) };
  const handler: Handler = Object.assign(Object.create(traps) as Handler, { state: { fields, options, values: new Map() } });
  return new Proxy(shell, handler) as unknown as E;
}
