/**
 * The Stately inspector, switched on and off while the Agent lives. The Agent gets one inspection
 * observer at construction (`inspect: inspection.observe`); it forwards to the inspector while
 * one is connected. The inspector UI loads from stately.ai into a frame.
 */
import type { AnyActorRef, InspectionEvent } from "xstate";
import type { SessionActor } from "xstate-agent-loop";
import { connectBrowserInspector, type AgentInspector } from "xstate-agent-loop/inspect";

export class InspectorSwitch {
  private inspector: AgentInspector | undefined;
  private frame: HTMLIFrameElement | undefined;

  /** The Agent's `inspect` option. */
  readonly observe = (event: InspectionEvent): void => this.inspector?.next(event);

  get connected(): boolean {
    return this.inspector !== undefined;
  }

  connect(session: SessionActor, pane: HTMLElement): void {
    if (this.inspector) return;
    const frame = document.createElement("iframe");
    frame.title = "Stately inspector";
    pane.replaceChildren(offlineNote(), frame);
    pane.hidden = false;
    this.frame = frame;
    this.inspector = connectBrowserInspector({ iframe: frame });
    // The session and any running actors were created before: introduce them, parents first.
    for (const actorRef of liveActors(session)) {
      this.inspector.next({ type: "@xstate.actor", actorRef, rootId: session.sessionId });
      this.inspector.next({ type: "@xstate.snapshot", actorRef, rootId: session.sessionId, snapshot: actorRef.getSnapshot(), event: { type: "xstate.init" } });
    }
  }

  disconnect(pane: HTMLElement): void {
    const { inspector, frame } = this;
    this.inspector = undefined;
    this.frame = undefined;
    pane.hidden = true;
    void inspector?.close().finally(() => frame?.remove());
  }
}

/** The session, its run and the run's tool calls, parents first. */
function liveActors(session: SessionActor): AnyActorRef[] {
  const out: AnyActorRef[] = [];
  const visit = (ref: AnyActorRef) => {
    out.push(ref);
    const children = (ref.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> }).children ?? {};
    for (const child of Object.values(children)) if (child) visit(child);
  };
  visit(session);
  return out;
}

/**
 * The inspector's UI is stately.ai's page: offline (or with that site blocked) its frame stays
 * blank, and nothing in the frame can say why, so the page does. The machine panel works offline.
 */
function offlineNote(): HTMLElement {
  const note = document.createElement("p");
  note.className = "inspector-note";
  note.id = "inspector-note";
  const render = () => {
    note.dataset.offline = String(!navigator.onLine);
    note.textContent = navigator.onLine
      ? "The inspector loads from https://stately.ai/inspect; if this frame stays blank, that site is unreachable from here (the panels on the left work offline)."
      : "Offline: the inspector's UI loads from https://stately.ai/inspect, so this frame stays blank until the network is back (the panels on the left work offline).";
  };
  addEventListener("online", render);
  addEventListener("offline", render);
  render();
  return note;
}
