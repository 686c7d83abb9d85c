/**
 * The live actor panel. It subscribes to the actors themselves, never to the Agent's events:
 * the session actor (`agent.actor`), the run it invokes (its child `run`), and each of the run's
 * tool-call children (`tool:<index>`), re-subscribing as runs and tool calls come and go. So it
 * shows states that no event announces, such as `turn.preparingNextTurn`.
 */
import type { ActorRefFrom, AnyActorRef, StateValue, Subscription } from "xstate";
import type { runMachine, SessionActor, toolCallMachine } from "xstate-agent-loop";

type RunRef = ActorRefFrom<typeof runMachine>;
type ToolRef = ActorRefFrom<typeof toolCallMachine>;

export interface PanelElements {
  session: HTMLElement;
  run: HTMLElement;
  trail: HTMLOListElement;
  tools: HTMLUListElement;
  steering: HTMLOListElement;
  followUp: HTMLOListElement;
}

/** `{ turn: { executingTools: "runningInParallel" } }` → `turn.executingTools.runningInParallel` (one line per region). */
export function statePath(value: StateValue): string {
  if (typeof value === "string") return value;
  return Object.entries(value)
    .map(([key, inner]) => (inner === undefined || (typeof inner === "object" && Object.keys(inner).length === 0) ? key : `${key}.${statePath(inner)}`))
    .join(", ");
}

const TRAIL_LENGTH = 14;

export function mountMachinePanel(session: SessionActor, el: PanelElements): () => void {
  let run: { ref: RunRef; subscription: Subscription } | undefined;
  const tools = new Map<AnyActorRef, { subscription: Subscription; item: HTMLLIElement }>();

  const show = (node: HTMLElement, text: string) => {
    node.textContent = text;
    node.dataset.state = text;
  };

  const addToTrail = (path: string) => {
    const leaf = path.split(".").at(-1)!;
    if (el.trail.lastElementChild?.getAttribute("data-state") === path) return;
    const item = document.createElement("li");
    item.textContent = leaf;
    item.title = path;
    item.dataset.state = path;
    el.trail.append(item);
    while (el.trail.childElementCount > TRAIL_LENGTH) el.trail.firstElementChild!.remove();
  };

  const renderQueue = (list: HTMLOListElement, messages: readonly unknown[]) => {
    list.replaceChildren(
      ...messages.map((message) => {
        const item = document.createElement("li");
        const content = (message as { content?: unknown }).content;
        item.textContent = typeof content === "string" ? content : JSON.stringify(content);
        return item;
      }),
    );
  };

  // --- tool-call actors ----------------------------------------------------------------------

  const renderTool = (item: HTMLLIElement, ref: ToolRef) => {
    const snapshot = ref.getSnapshot();
    const state = statePath(snapshot.value);
    const outcome = snapshot.context.result ? (snapshot.context.isError ? " · error" : " · ok") : "";
    item.dataset.state = state;
    item.querySelector(".state")!.textContent = `${state}${outcome}`;
  };

  const watchTool = (id: string, ref: ToolRef) => {
    // A new batch: drop the rows of the previous batch's stopped actors.
    if (![...tools.values()].length) el.tools.replaceChildren();
    const item = document.createElement("li");
    item.dataset.actor = id;
    item.dataset.live = "true";
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = `${id} ${ref.getSnapshot().context.toolCall.name}`;
    const state = document.createElement("code");
    state.className = "state";
    item.append(name, state);
    el.tools.append(item);
    const subscription = ref.subscribe({ next: () => renderTool(item, ref), error: () => {} });
    tools.set(ref, { subscription, item });
    renderTool(item, ref);
  };

  /** The run's tool-call children now; the ones gone were stopped by the run once settled. */
  const syncTools = (children: Record<string, AnyActorRef | undefined>) => {
    const live = new Set<AnyActorRef>();
    for (const [id, child] of Object.entries(children)) {
      if (!child || !id.startsWith("tool:")) continue;
      live.add(child);
      if (!tools.has(child)) watchTool(id, child as ToolRef);
    }
    for (const [ref, entry] of tools) {
      if (live.has(ref)) continue;
      entry.subscription.unsubscribe();
      entry.item.dataset.live = "false";
      tools.delete(ref);
    }
  };

  // --- the run -------------------------------------------------------------------------------

  const renderRun = (ref: RunRef) => {
    const snapshot = ref.getSnapshot();
    const path = snapshot.status === "active" ? statePath(snapshot.value) : `${statePath(snapshot.value)} (${snapshot.status})`;
    show(el.run, path);
    addToTrail(statePath(snapshot.value));
    syncTools(snapshot.children as Record<string, AnyActorRef | undefined>);
  };

  const watchRun = (ref: RunRef | undefined) => {
    if (ref === run?.ref) return;
    run?.subscription.unsubscribe();
    run = undefined;
    if (!ref) {
      show(el.run, "–");
      syncTools({});
      return;
    }
    el.trail.replaceChildren();
    // A new run: the previous run's tool-call rows go (a run that calls no tool would show them as its own).
    syncTools({});
    el.tools.replaceChildren();
    run = { ref, subscription: ref.subscribe({ next: () => renderRun(ref), error: () => {} }) };
    renderRun(ref);
  };

  // --- the session ---------------------------------------------------------------------------

  const renderSession = () => {
    const snapshot = session.getSnapshot();
    show(el.session, statePath(snapshot.value));
    renderQueue(el.steering, snapshot.context.queues.steering);
    renderQueue(el.followUp, snapshot.context.queues.followUp);
    watchRun(snapshot.children.run as RunRef | undefined);
  };

  const subscription = session.subscribe({ next: renderSession, error: () => {} });
  renderSession();
  return () => {
    subscription.unsubscribe();
    watchRun(undefined);
  };
}
