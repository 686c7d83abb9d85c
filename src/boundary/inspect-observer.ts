/**
 * The observer seam: the `inspect` option of `agentLoop`, the Agent and the durable entry points.
 *
 * - Observers compose: the option takes one observer or a list (the trace recorder, the Stately
 *   inspector and the OpenTelemetry observer at once). Each is guarded on its own: a throw is
 *   reported once (console.warn) and otherwise ignored, and neither the run nor the other
 *   observers notice. An observer runs inside XState's transitions, where a throw would fail the
 *   actor it watches over a bug in debugging code.
 * - An observer may decide, when a run or an Agent's session is about to start, whether it watches
 *   at all (`attach`): an OpenTelemetry observer whose tracer records nothing attaches nothing, so
 *   the run pays nothing for it (an attached XState inspection observer alone costs 5–10 %).
 */
import type { InspectionEvent, Observer } from "xstate";
import type { TraceOrigin } from "../../machines/run.types.js";

/** What an attachable observer is told about the actor it would watch. Plain data, and a probe. */
export interface ObservedRoot {
  /** `run`: an `agentLoop` run (or a resumed one); `session`: an Agent's session actor (every run of the Agent). */
  kind: "run" | "session";
  /** The Agent's session id (its `sessionId` option, or its durable session's). */
  sessionId?: string;
  /**
   * R81: true while a resumed run's steps are answered from its journal (before it goes live, and
   * a response whose record outlived its reply): they happened before the crash (and were observed then).
   */
  replaying?: () => boolean;
  /** R110: the run continues one traced before (resumed from its journal): that run's trace, from its input. */
  origin?: TraceOrigin;
  /** R110: where an observer that traces runs says how to start a run's span ahead of its input (see `TraceOrigins`). */
  origins?: TraceOrigins;
}

/**
 * R110: a run's trace travels as plain data in its input (and so in its journal and snapshots):
 * an observer that traces runs gives here the function that starts a run's span before the run
 * exists and returns that span's ids; the entry point asks once per new run. The first observer
 * to give one wins (one tracing observer per run).
 */
export class TraceOrigins {
  private start: (() => TraceOrigin | undefined) | undefined;

  provide(start: () => TraceOrigin | undefined): void {
    this.start ??= start;
  }

  /** The new run's trace, or undefined (no tracing observer, or it failed: the run goes on untraced). */
  next(): TraceOrigin | undefined {
    if (!this.start) return undefined;
    try {
      return this.start();
    } catch (error) {
      console.warn(`xstate-agent-loop: an inspect observer failed to start a run's trace (${describe(error)}); the run goes on without it`);
      return undefined;
    }
  }
}

/** An observer that chooses, per run or session, what (if anything) to attach. */
export interface AttachableObserver {
  attach(root: ObservedRoot): ((event: InspectionEvent) => void) | undefined;
}

export type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void) | AttachableObserver;

/** One observer, or several (each isolated from the others' failures). */
export type InspectOption = InspectObserver | readonly InspectObserver[];

const isAttachable = (observer: InspectObserver): observer is AttachableObserver =>
  typeof observer === "object" && observer !== null && typeof (observer as AttachableObserver).attach === "function";

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `next` guarded: a throw is reported once and otherwise ignored. */
function guarded(next: (event: InspectionEvent) => void): (event: InspectionEvent) => void {
  let reported = false;
  return (event) => {
    try {
      next(event);
    } catch (error) {
      if (reported) return;
      reported = true;
      console.warn(`xstate-agent-loop: the inspect observer threw (${describe(error)}); its errors are ignored so the run goes on`);
    }
  };
}

/** What `observer` attaches for `root`: undefined when it watches nothing (or failed to attach). */
function resolve(observer: InspectObserver | undefined | null, root: ObservedRoot): ((event: InspectionEvent) => void) | undefined {
  if (observer === undefined || observer === null) return undefined;
  if (typeof observer === "function") return observer;
  if (isAttachable(observer)) {
    try {
      return observer.attach(root);
    } catch (error) {
      console.warn(`xstate-agent-loop: an inspect observer failed to attach (${describe(error)}); the run goes on without it`);
      return undefined;
    }
  }
  return observer.next?.bind(observer);
}

/**
 * The one function to hand to XState's `inspect` for `root`, or undefined when no observer attached
 * anything (so nothing is attached to the actor).
 */
export function guardedInspect(inspect: InspectOption | undefined, root: ObservedRoot = { kind: "run" }): ((event: InspectionEvent) => void) | undefined {
  if (inspect === undefined) return undefined;
  const list: readonly InspectObserver[] = Array.isArray(inspect) ? inspect : [inspect as InspectObserver];
  const attached: ((event: InspectionEvent) => void)[] = [];
  for (const observer of list) {
    const next = resolve(observer, root);
    if (next) attached.push(guarded(next));
  }
  if (attached.length === 0) return undefined;
  if (attached.length === 1) return attached[0];
  return (event) => {
    for (let i = 0; i < attached.length; i++) attached[i]!(event);
  };
}

/**
 * Several observers as one XState observer, for `createActor(logic, { inspect })` (an app that
 * invokes a run in its own statechart). Attachable observers are attached once, as for a session.
 */
export function composeObservers(...observers: InspectObserver[]): Observer<InspectionEvent> & { next: (event: InspectionEvent) => void } {
  const next = guardedInspect(observers, { kind: "session" }) ?? (() => {});
  return { next };
}
