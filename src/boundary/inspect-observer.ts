/**
 * An app's inspection observer runs inside XState's transitions: one that throws would fail the
 * actor it watches (a run, a tool call) over a bug in debugging code. The loop calls it guarded:
 * a throw is reported once (console.warn) and otherwise ignored, and the observer keeps getting
 * events. (`sanitizingObserver` guards itself the same way.)
 */
import type { InspectionEvent, Observer } from "xstate";

export type InspectOption = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

export function guardedInspect(inspect: InspectOption | undefined): ((event: InspectionEvent) => void) | undefined {
  if (inspect === undefined) return undefined;
  const next = typeof inspect === "function" ? inspect : inspect.next?.bind(inspect);
  if (!next) return undefined;
  let reported = false;
  return (event) => {
    try {
      next(event);
    } catch (error) {
      if (reported) return;
      reported = true;
      console.warn(`xstate-agent-loop: the inspect observer threw (${error instanceof Error ? error.message : String(error)}); its errors are ignored so the run goes on`);
    }
  };
}
