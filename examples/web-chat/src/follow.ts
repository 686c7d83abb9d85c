/**
 * Follows an agent session that runs on Restate (`xstate-agent-loop/restate`): `follow.html?session=ID`.
 *
 * The session's events are numbered in its object's state; the page asks the example server
 * (which forwards to Restate's ingress, read-only) for the events after the last id it drew, so a
 * dropped connection or a worker that died and was replaced costs nothing: the next request
 * resumes from that id, and no event is drawn twice.
 */
import type { AgentEvent } from "xstate-agent-loop";
import { SessionLog } from "./session-log.js";
import { TranscriptView } from "./transcript.js";
import "./style.css";

const session = new URLSearchParams(location.search).get("session") ?? "";
const status = document.querySelector<HTMLElement>("#follow-status")!;
const list = document.querySelector<HTMLOListElement>("#transcript")!;
let view = new TranscriptView(list, new WeakMap());
// R81: a retraction takes back the provisional events from its `fromSeq` on: the view is drawn again from what is kept.
const log = new SessionLog<AgentEvent>();
const redraw = () => {
  list.replaceChildren();
  view = new TranscriptView(list, new WeakMap());
  for (const { event } of log.events) view.handle(event);
};

let after = 0;
const show = (text: string) => {
  status.textContent = text;
  document.body.dataset.lastEventId = String(after);
};

async function follow(): Promise<void> {
  if (!session) return show("no session: open follow.html?session=ID");
  document.body.dataset.ready = "true";
  for (;;) {
    let received = 0;
    try {
      const response = await fetch("api/restate/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ session, after }),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const { events } = (await response.json()) as { events: { id: number; event: AgentEvent; provisional?: boolean }[] };
      for (const { id, event, provisional } of events) {
        if (id <= after) continue;
        if (log.add({ id, event, provisional: provisional === true }) === "retracted") redraw();
        else view.handle(event);
        after = id;
        if (event.type === "agent_end") document.body.dataset.runsEnded = String(Number(document.body.dataset.runsEnded ?? 0) + 1);
      }
      received = events.length;
      show(`session ${session} · event ${after}`);
    } catch (error) {
      show(`reconnecting from event ${after}… (${error instanceof Error ? error.message : String(error)})`);
    }
    // Poll while idle; fetch the next page at once while a backlog is coming in.
    if (received === 0) await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

void follow();
