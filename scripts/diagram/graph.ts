/**
 * The diagram model of a statechart, read from the machine definition (`machine.root`): one node
 * per state (id = the state path with the machine id first), one edge per transition target, with
 * readable event and guard labels. Everything else in scripts/diagram/ renders this model.
 */
export type StateType = "atomic" | "compound" | "parallel" | "final" | "history";

export interface GraphNode {
  /** The state path with the machine id first: `run.turn.requesting.streaming`. */
  id: string;
  key: string;
  parent: string | null;
  type: StateType;
  /** Compound states: the initial child's id. */
  initial: string | null;
  children: string[];
  entry: string[];
  exit: string[];
  invoke: { id: string; src: string }[];
  tags: string[];
  description: string | null;
}

export interface GraphEdge {
  id: string;
  source: string;
  /** Equal to `source` for a targetless (internal) transition. */
  target: string;
  /** The raw event type (`""` for `always`). */
  event: string;
  /** Prettified: `always`, `done: convertToLlm`, `error: *`, `after 500ms`, or the event type. */
  eventLabel: string;
  guard: string | null;
  /** `eventLabel [guard]`. */
  label: string;
  internal: boolean;
  reenter: boolean;
  actions: string[];
}

export interface MachineGraph {
  /** The machine's id (the first segment of every node id). */
  id: string;
  /** `run.machine`: the output files' base name. */
  name: string;
  source: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** The parts of xstate's StateNode this script reads (structural, so machines of any shape fit). */
interface StateNodeLike {
  key: string;
  path: string[];
  type: StateType;
  history?: false | "shallow" | "deep";
  states: Record<string, StateNodeLike>;
  initial?: { target: StateNodeLike[] };
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
  invoke: { id: string; src: unknown }[];
  entry: unknown[];
  exit: unknown[];
  tags?: string[];
  description?: string;
}

interface TransitionLike {
  eventType: string;
  target?: StateNodeLike[];
  guard?: unknown;
  reenter?: boolean;
  actions?: unknown[];
}

export interface MachineLike {
  id: string;
  root: StateNodeLike;
}

export function isMachine(value: unknown): value is MachineLike {
  return (
    typeof value === "object" &&
    value !== null &&
    "root" in value &&
    "config" in value &&
    typeof (value as { provide?: unknown }).provide === "function" &&
    typeof (value as { id?: unknown }).id === "string"
  );
}

export function buildGraph(machine: MachineLike, name: string, source: string): MachineGraph {
  const pathId = (node: StateNodeLike) => [machine.id, ...node.path].join(".");
  const nodes: GraphNode[] = [];
  const all: StateNodeLike[] = [];
  const visit = (node: StateNodeLike) => {
    all.push(node);
    for (const child of Object.values(node.states ?? {})) visit(child);
  };
  visit(machine.root);

  const invokeSrc = new Map<string, string>();
  for (const node of all) for (const def of node.invoke ?? []) invokeSrc.set(def.id, srcName(def.src, def.id));

  for (const node of all) {
    const initialTarget = node.type === "compound" ? node.initial?.target?.[0] : undefined;
    nodes.push({
      id: pathId(node),
      key: node.path.length === 0 ? machine.id : node.key,
      parent: node.path.length === 0 ? null : [machine.id, ...node.path.slice(0, -1)].join("."),
      type: node.type,
      initial: initialTarget ? pathId(initialTarget) : null,
      children: Object.values(node.states ?? {}).map(pathId),
      entry: (node.entry ?? []).map(actionName),
      exit: (node.exit ?? []).map(actionName),
      invoke: (node.invoke ?? []).map((def) => ({ id: def.id, src: srcName(def.src, def.id) })),
      tags: [...(node.tags ?? [])],
      description: node.description ?? null,
    });
  }

  const edges: GraphEdge[] = [];
  for (const node of all) {
    const transitions: TransitionLike[] = [];
    for (const list of node.transitions?.values() ?? []) transitions.push(...list);
    transitions.push(...(node.always ?? []));
    for (const transition of transitions) {
      const eventLabel = labelOfEvent(transition.eventType ?? "", invokeSrc);
      const guard = labelOfGuard(transition.guard);
      const targets = transition.target && transition.target.length > 0 ? transition.target : undefined;
      for (const target of targets ?? [node]) {
        edges.push({
          id: `${machine.id}:edge:${edges.length}`,
          source: pathId(node),
          target: pathId(target),
          event: transition.eventType ?? "",
          eventLabel,
          guard,
          label: guard ? `${eventLabel} [${guard}]` : eventLabel,
          internal: !targets,
          reenter: Boolean(transition.reenter),
          actions: (transition.actions ?? []).map(actionName),
        });
      }
    }
  }
  return { id: machine.id, name, source, nodes, edges };
}

function srcName(src: unknown, fallback: string): string {
  if (typeof src === "string") return src;
  const id = (src as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : fallback;
}

/** `always`, `done: <src>`, `error: <src>`, `after 500ms`, `snapshot: <src>`, or the event type. */
export function labelOfEvent(eventType: string, invokeSrc: ReadonlyMap<string, string> = new Map()): string {
  if (eventType === "") return "always";
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (actor) return `${actor[1]}: ${invokeSrc.get(actor[2]) ?? actor[2]}`;
  const snapshot = /^xstate\.snapshot\.(.+)$/.exec(eventType);
  if (snapshot) return `snapshot: ${invokeSrc.get(snapshot[1]) ?? snapshot[1]}`;
  const doneState = /^xstate\.done\.state\.(.+)$/.exec(eventType);
  if (doneState) return `done: ${doneState[1].split(".").pop()}`;
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}${/^\d+$/.test(after[1]) ? "ms" : ""}`;
  return eventType;
}

/** A guard's name: `hasToolCalls`, `!a`, `(a && b)`, `in(state)`, or `inline` for an anonymous function. */
export function labelOfGuard(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") {
    const fn = guard as { name: string; check?: unknown; guards?: unknown[]; stateValue?: unknown };
    if (fn.check && Array.isArray(fn.guards)) {
      const parts = fn.guards.map((inner) => labelOfGuard(inner) ?? "?");
      if (fn.name === "not") return `!${parts[0]}`;
      return `(${parts.join(fn.name === "or" ? " || " : " && ")})`;
    }
    if (fn.check && fn.stateValue !== undefined) return `in(${JSON.stringify(fn.stateValue)})`;
    return fn.name && fn.name !== "guard" ? fn.name : "inline";
  }
  if (typeof guard === "object" && typeof (guard as { type?: unknown }).type === "string") return (guard as { type: string }).type;
  return "inline";
}

function actionName(action: unknown): string {
  if (typeof action === "string") return action;
  if (typeof action === "function") {
    const type = (action as { type?: unknown }).type;
    if (typeof type === "string") return type.replace(/^xstate\./, "");
    return action.name || "inline";
  }
  if (action && typeof action === "object" && typeof (action as { type?: unknown }).type === "string") return (action as { type: string }).type;
  return "inline";
}

/**
 * A transition of a composite state (the machine included) that does not leave it: targetless,
 * to itself or to a descendant. Diagrams list or draw these from a note inside the composite.
 */
export function staysInside(graph: MachineGraph, edge: GraphEdge): boolean {
  const source = graph.nodes.find((node) => node.id === edge.source);
  if (!source || source.children.length === 0) return false;
  return source.parent === null || edge.internal || edge.target === edge.source || edge.target.startsWith(`${edge.source}.`);
}

export function toJson(graph: MachineGraph): string {
  return `${JSON.stringify(graph, null, 2)}\n`;
}
