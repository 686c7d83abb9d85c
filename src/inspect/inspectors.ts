/**
 * Inspection observers for the Stately inspector, sanitized by default. Pass one as
 * `RunOptions.inspect` (`agentLoop(…, streamFn, { inspect })`) or to `createActor`.
 *
 * Both use @statelyai/inspect (the XState v5 inspector; `@xstate/inspect` supports XState v4
 * only). Node-free: the WebSocket inspector runs in Node and in browsers.
 */
import { createBrowserInspector, createWebSocketInspector } from "@statelyai/inspect";
import type { AnyEventObject, InspectionEvent, MachineContext, Observer } from "xstate";
import {
  sanitizeContext,
  sanitizeEvent,
  sanitizeInspectionEvent,
  sanitizeStatelyEvent,
  type SanitizeOptions,
  type StatelyWireEvent,
} from "./sanitize.js";
import { sanitizeInspectionEventLazily } from "./lazy-inspection-event.js";

type WebSocketInspectorOptions = NonNullable<Parameters<typeof createWebSocketInspector>[0]>;
type BrowserInspectorOptions = NonNullable<Parameters<typeof createBrowserInspector>[0]>;
type StatelyInspector = ReturnType<typeof createWebSocketInspector> | ReturnType<typeof createBrowserInspector>;
type StatelyEvent = Parameters<NonNullable<WebSocketInspectorOptions["serialize"]>>[0];

export interface SanitizingOptions {
  /**
   * How context and events are sanitized. Default: histories summarized, tool details truncated,
   * secrets redacted. `false` keeps the data but still redacts secrets (never turned off).
   */
  sanitize?: false | SanitizeOptions;
}

/** An XState inspection observer that feeds a Stately inspector. */
export interface AgentInspector extends Observer<InspectionEvent> {
  next: (event: InspectionEvent) => void;
  /** The underlying @statelyai/inspect inspector. */
  readonly inspector: StatelyInspector;
  /**
   * Delivers the events still queued (the inspector defers each one), then disconnects. Call it
   * when done: a WebSocket inspector otherwise keeps reconnecting, and Node keeps running.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

export interface AgentWebSocketInspectorOptions extends Omit<WebSocketInspectorOptions, "url">, SanitizingOptions {
  /** Default `ws://localhost:8080` (@statelyai/inspect's `createInspectorServer`). */
  url?: string;
  /**
   * Events kept until the socket opens; older ones are dropped. Default 1,000 (sanitized events
   * are small; @statelyai/inspect's own default, 200, can drop a run's first actors).
   */
  maxDeferredEvents?: number;
}

export type AgentBrowserInspectorOptions = BrowserInspectorOptions & SanitizingOptions;

function sanitizeOptionsOf(options: SanitizingOptions | undefined): SanitizeOptions {
  const sanitize = options?.sanitize;
  return sanitize === false ? { summarize: false } : (sanitize ?? {});
}

/**
 * Runs `fn`; if it throws, `fallback`. An inspection observer runs inside XState's inspect
 * callback or in the Stately inspector's deferred callbacks, where a throw is an uncaught
 * exception that ends the host process: inspection must never cost the app its run.
 */
function neverThrow<A extends unknown[], R>(fn: (...args: A) => R, fallback: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args);
    } catch {
      try {
        return fallback(...args);
      } catch {
        return undefined as R;
      }
    }
  };
}

/** What the inspector gets of an event it could not sanitize: its type only. */
const opaqueEvent = (event: AnyEventObject): AnyEventObject => ({ type: typeof event?.type === "string" ? event.type : "unknown" });

/** The inspector options that sanitize every event; the caller's own hooks run first. */
function sanitizingHooks(
  user: { sanitizeContext?: (c: MachineContext) => MachineContext; sanitizeEvent?: (e: AnyEventObject) => AnyEventObject; serialize?: (e: StatelyEvent) => StatelyEvent },
  options: SanitizeOptions,
) {
  return {
    sanitizeContext: neverThrow(
      (context: MachineContext) => sanitizeContext(user.sanitizeContext ? user.sanitizeContext(context) : context, options),
      () => ({ unreadable: true }),
    ),
    sanitizeEvent: neverThrow((event: AnyEventObject) => sanitizeEvent(user.sanitizeEvent ? user.sanitizeEvent(event) : event, options), opaqueEvent),
    serialize: neverThrow(
      (event: StatelyEvent) =>
        sanitizeStatelyEvent((user.serialize ? user.serialize(event) : event) as unknown as StatelyWireEvent, options) as unknown as StatelyEvent,
      (event: StatelyEvent) => ({ ...(event as object), snapshot: { status: "active" }, event: opaqueEvent((event as { event: AnyEventObject }).event) }) as unknown as StatelyEvent,
    ),
  };
}

/**
 * Wraps any inspection observer so it receives sanitized events (`sanitizeInspectionEvent`), each
 * field sanitized when the observer first reads it, and every plain object sanitized once (its
 * form is reused while it stays in context): the cost follows what the observer reads and what
 * changed, not the size of the context.
 */
export function sanitizingObserver(
  target: Observer<InspectionEvent> | ((event: InspectionEvent) => void),
  options?: SanitizeOptions,
): Observer<InspectionEvent> & { next: (event: InspectionEvent) => void } {
  const next = typeof target === "function" ? target : (event: InspectionEvent) => target.next?.(event);
  return {
    // Sanitizing never throws (unreadable values become markers); the target's own throw is
    // contained too, so an observer can never end the host process.
    next: neverThrow(
      (event: InspectionEvent) => next(sanitizeInspectionEventLazily(event, options)),
      () => undefined,
    ),
    ...(typeof target === "function" ? {} : { error: target.error?.bind(target), complete: target.complete?.bind(target) }),
  };
}

/** Resolves after the callbacks @statelyai/inspect deferred so far have run. */
function afterDeferred(): Promise<void> {
  const win = (globalThis as { window?: { requestIdleCallback?: (cb: () => void) => void; requestAnimationFrame?: (cb: () => void) => void } }).window;
  return new Promise((resolve) => {
    if (win) (win.requestIdleCallback ?? win.requestAnimationFrame ?? ((cb: () => void) => setTimeout(cb, 0)))(() => resolve());
    else setTimeout(resolve, 0);
  });
}

function agentInspector(inspector: StatelyInspector, options: SanitizeOptions, close: (timeoutMs: number) => Promise<void>): AgentInspector {
  let closed = false;
  return {
    inspector,
    next: neverThrow(
      (event: InspectionEvent) => {
        if (closed) return;
        // The Stately inspector only forwards these three; sanitizing before it serializes keeps
        // the per-event cost proportional to the summary, not to the transcript.
        if (event.type === "@xstate.snapshot" || event.type === "@xstate.event") inspector.inspect.next?.(sanitizeInspectionEvent(event, options));
        else if (event.type === "@xstate.actor") inspector.inspect.next?.(event);
      },
      () => undefined,
    ),
    async close({ timeoutMs = 2_000 } = {}) {
      if (closed) return;
      closed = true;
      await afterDeferred();
      await afterDeferred();
      await close(timeoutMs);
    },
  };
}

interface SocketLike {
  readyState: number;
  onopen: unknown;
  onerror: unknown;
  onclose: unknown;
  close(): void;
}

/**
 * A sanitizing observer that streams to a WebSocket inspector server (e.g. @statelyai/inspect's
 * `createInspectorServer`, or your own). Events are buffered (1,000 by default: `maxDeferredEvents`)
 * until it connects. Neither its reconnect timer nor anything left after `close()` keeps the process alive.
 */
export function connectWebSocketInspector(options: AgentWebSocketInspectorOptions = {}): AgentInspector {
  const sanitize = sanitizeOptionsOf(options);
  const { sanitize: _sanitize, url = "ws://localhost:8080", autoStart = true, maxDeferredEvents = 1_000, ...rest } = options;
  const inspector = createWebSocketInspector({ ...rest, url, maxDeferredEvents, autoStart: false, ...sanitizingHooks(rest, sanitize) });

  // The adapter reconnects 5 s after every socket error, forever, with a timer of its own that kept
  // the process alive for 5 s after `close()`. Its error handler is replaced by one whose timer is
  // unref'd and cleared by `close()`; once closed, a socket it opens is closed at once and its
  // handlers go nowhere, so nothing keeps the process alive.
  let closed = false;
  const adapter = inspector.adapter as unknown as { ws?: SocketLike; status: string; start(): void };
  let socket: SocketLike | undefined;
  let reconnect: ReturnType<typeof setTimeout> | undefined;
  const reconnectLater = () => {
    adapter.status = "closed";
    if (closed || reconnect) return;
    reconnect = setTimeout(() => {
      reconnect = undefined;
      if (!closed) adapter.start();
    }, RECONNECT_MS);
    (reconnect as { unref?: () => void }).unref?.();
  };
  const detached = { readyState: 3, onopen: null, onerror: null, onclose: null, onmessage: null, close() {} } as SocketLike;
  Object.defineProperty(adapter, "ws", {
    configurable: true,
    get: () => (closed ? detached : socket),
    set: (next: SocketLike) => {
      if (closed) {
        next.onerror = () => {};
        next.close();
        return;
      }
      socket = next;
      // The adapter sets its handlers right after the socket, in the same task: replace its error handler then.
      queueMicrotask(() => {
        if (next.onerror !== null) next.onerror = reconnectLater;
      });
    },
  });
  if (autoStart) inspector.start();

  return agentInspector(inspector, sanitize, async (timeoutMs) => {
    const current = socket;
    // Still connecting: give it a chance to open and flush the buffered events.
    if (current && current.readyState === 0) {
      const deadline = Date.now() + timeoutMs;
      while (current.readyState === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (current) {
      current.onerror = () => {};
      current.onclose = null;
    }
    inspector.stop();
    closed = true;
    clearTimeout(reconnect);
    reconnect = undefined;
  });
}

/** @statelyai/inspect's delay before it reconnects after a socket error. */
const RECONNECT_MS = 5_000;

/**
 * A sanitizing observer for browser apps: opens the Stately inspector (https://stately.ai/inspect,
 * needs the internet) in a new window, or in `iframe`. Without a `window` it does nothing.
 */
export function connectBrowserInspector(options: AgentBrowserInspectorOptions = {}): AgentInspector {
  const sanitize = sanitizeOptionsOf(options);
  const { sanitize: _sanitize, ...rest } = options;
  const inspector = createBrowserInspector({ ...rest, ...sanitizingHooks(rest, sanitize) });
  // Without a window, @statelyai/inspect returns a bare no-op adapter instead of an inspector.
  if (typeof (inspector as Partial<StatelyInspector>).inspect?.next !== "function") {
    const noop = { adapter: inspector, inspect: { next: () => {} }, start() {}, stop() {} } as unknown as StatelyInspector;
    return agentInspector(noop, sanitize, async () => {});
  }
  return agentInspector(inspector, sanitize, async () => inspector.stop());
}
