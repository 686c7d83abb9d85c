/**
 * The layout of a machine's diagram, computed by ELK's layered algorithm (the one Stately's editor
 * uses): compound states are nested boxes laid out together with their children
 * (`hierarchyHandling: INCLUDE_CHILDREN`), so a transition between levels is one short edge, and
 * edge labels are sized here and placed by ELK as part of the layout, so they never overlap a state
 * or each other. Model order (definition order) is kept where ELK has the choice, which makes the
 * main path read top to bottom, as in the machine file, and the output stable.
 */
import elkBundled from "elkjs/lib/elk.bundled.js";
import type { ElkExtendedEdge, ElkLabel, ElkNode, LayoutOptions } from "elkjs/lib/elk-api.js";
import { staysInside, type GraphEdge, type GraphNode, type MachineGraph, type StateType } from "./graph.js";
import { README_WIDTH } from "./rendered-labels.js";
import { textWidth, wrapText } from "./text-width.js";

export interface Point {
  x: number;
  y: number;
}
export interface Box extends Point {
  width: number;
  height: number;
}

/** Sizes in px of the SVG's user units (the README shows the SVG at its natural width). */
export const STYLE = {
  stateFont: 13,
  compositeFont: 13,
  labelFont: 10,
  noteFont: 10,
  titleFont: 12,
  /** Line height, in ems. */
  lineHeight: 1.3,
  stateHeight: 24,
  statePadding: 10,
  labelPadding: 2,
  /** Edge labels wrap at spaces beyond this width. */
  labelMaxWidth: 120,
  margin: 8,
} as const;

export interface DiagramState {
  id: string;
  key: string;
  /** What the box says: the key, with `(parallel)` or `(history)` after it for those states. */
  label: string;
  type: StateType;
  composite: boolean;
  box: Box;
}
export interface DiagramNote {
  id: string;
  lines: string[];
  box: Box;
}
export interface DiagramLabel {
  lines: string[];
  box: Box;
}
export interface DiagramEdge {
  /** The ids of the transitions drawn by this edge, joined with `+` (the viewer splits them). */
  id: string;
  /** `initial`: from an initial dot; `always`: eventless only; `internal`: targetless. */
  kind: "transition" | "always" | "internal" | "initial";
  points: Point[];
  label: DiagramLabel | null;
  /** False for the segments that merge into a junction. */
  arrow: boolean;
}
/** A filled dot: a composite's initial marker, or a junction where identical transitions merge. */
export interface DiagramDot {
  id: string;
  kind: "initial" | "junction";
  box: Box;
}
export interface Diagram {
  id: string;
  /** The machine and its file, then a legend of the arrow styles the diagram uses. */
  title: string[];
  width: number;
  height: number;
  /** Outer states first, so drawing in order puts children over their parents. */
  states: DiagramState[];
  dots: DiagramDot[];
  notes: DiagramNote[];
  edges: DiagramEdge[];
}

/**
 * elkjs is pinned to 0.10.2: 0.11 and 0.12 throw inside ELK ("Cannot read properties of undefined")
 * when model order is used with `INCLUDE_CHILDREN`, and model order is what keeps the loops readable.
 * 0.10.2 still throws on some graphs when model order also orders nodes and edges (an edge from a
 * nested state to an outer one whose compound has no other way out); those are laid out again
 * without it (FALLBACK), which is as deterministic, only wider.
 */
const LAYOUT: LayoutOptions = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.edgeLabels.placement": "CENTER",
  "elk.layered.edgeLabels.centerLabelPlacementStrategy": "SPACE_EFFICIENT_LAYER",
  // Definition order decides which edges point back (the loops) and breaks ties in ordering.
  "elk.layered.cycleBreaking.strategy": "MODEL_ORDER",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  // Straight vertical runs for chains of states; the default (Brandes-Köpf) spreads them wide.
  "elk.layered.nodePlacement.strategy": "LINEAR_SEGMENTS",
  "elk.layered.spacing.nodeNodeBetweenLayers": "22",
  "elk.layered.spacing.edgeNodeBetweenLayers": "8",
  "elk.layered.spacing.edgeEdgeBetweenLayers": "6",
  "elk.spacing.nodeNode": "14",
  "elk.spacing.edgeNode": "8",
  "elk.spacing.edgeEdge": "6",
  "elk.spacing.edgeLabel": "3",
  "elk.randomSeed": "1",
  "elk.json.shapeCoords": "ROOT",
  "elk.json.edgeCoords": "ROOT",
};
const FALLBACK: LayoutOptions = { "elk.layered.considerModelOrder.strategy": "NONE" };

/**
 * The widest diagram whose state names are still at least 11 px when a README scales it into its
 * 900 px column (STYLE.stateFont px at natural size).
 */
export const MAX_WIDTH = Math.floor((README_WIDTH * STYLE.stateFont) / 11);

/**
 * How wide ELK's layered layout comes out depends a great deal on the crossing minimisation's
 * random choices (the run machine: 870 to 1374 px over these attempts). So a diagram wider than
 * the README's column is laid out again, with tighter spacing and other seeds, in this fixed
 * order, and the narrowest is kept (the earliest of equals); one that fits (`MAX_WIDTH`: state
 * names at 11 px or more in the column) ends the search. Every attempt is deterministic, so the choice is too.
 */
const TIGHT: LayoutOptions = { "elk.spacing.nodeNode": "10", "elk.spacing.edgeNode": "6", "elk.spacing.edgeEdge": "4" };
const TIGHTER: LayoutOptions = { "elk.spacing.nodeNode": "8", "elk.spacing.edgeNode": "4", "elk.spacing.edgeEdge": "3", "elk.layered.spacing.edgeEdgeBetweenLayers": "4" };
// Seed 5 first: its tighter spacing is the first attempt that fits the run machine (each attempt
// costs about a second, and the diagram tests lay the run machine out within their timeouts).
const SEEDS = [5, ...Array.from({ length: 16 }, (_, i) => i + 1).filter((seed) => seed !== 5)];
const ATTEMPTS: LayoutOptions[] = SEEDS.flatMap((seed): LayoutOptions[] => [
  { "elk.randomSeed": String(seed) },
  { "elk.randomSeed": String(seed), ...TIGHT },
  { "elk.randomSeed": String(seed), ...TIGHTER },
]);

/** `options` added to every graph (compound) of `node`, in a copy. */
function withOptions(node: ElkNode, options: LayoutOptions): ElkNode {
  return {
    ...node,
    ...(node.children ? { layoutOptions: { ...node.layoutOptions, ...options }, children: node.children.map((child) => withOptions(child, options)) } : {}),
  };
}

async function elkLayout(root: ElkNode, options: LayoutOptions, name: string): Promise<ElkNode> {
  const elk = new elkBundled.default();
  try {
    return await elk.layout(structuredClone(withOptions(root, options)));
  } catch {
    try {
      return await elk.layout(structuredClone(withOptions(root, { ...options, ...FALLBACK })));
    } catch (error) {
      throw new Error(`ELK could not lay out ${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

async function narrowLayout(root: ElkNode, name: string): Promise<ElkNode> {
  let best: ElkNode | undefined;
  for (const options of ATTEMPTS) {
    const laid = await elkLayout(root, options, name);
    if (!best || (laid.width ?? 0) < (best.width ?? 0)) best = laid;
    // Unscaled in the column, or scaled with state names still at 11 px or more.
    if ((best.width ?? 0) <= MAX_WIDTH) break;
  }
  return best!;
}

const lineHeight = (fontSize: number) => fontSize * STYLE.lineHeight;
const stateLabel = (node: GraphNode) => (node.type === "parallel" || node.type === "history" ? `${node.key} (${node.type})` : node.key);
const initialId = (node: GraphNode) => `${node.id}.__initial`;
const noteId = (node: GraphNode) => `${node.id}.__transitions`;

/** One line per guard: the events it applies to, then `[guard]`; wrapped at `labelMaxWidth`. */
export function edgeLabelLines(edges: GraphEdge[]): string[] {
  const byGuard = new Map<string, string[]>();
  for (const edge of edges) {
    const key = edge.guard ?? "";
    const events = byGuard.get(key) ?? [];
    if (!events.includes(edge.eventLabel)) events.push(edge.eventLabel);
    byGuard.set(key, events);
  }
  return [...byGuard].flatMap(([guard, events]) => {
    // Eventless arrows have their own style (see the legend), so "always" is not written on them.
    const named = events.filter((event) => event !== "always");
    const shown = named.length > 0 ? [...named, ...(named.length < events.length ? ["always"] : [])].join(", ") : "";
    const bracket = guard ? `[${withoutOuterParentheses(guard)}]` : "";
    const text = [shown, bracket].filter(Boolean).join(" ");
    return text === "" ? [] : wrapText(text, STYLE.labelFont, STYLE.labelMaxWidth);
  });
}

/** `(a && b)` → `a && b`; `(a) || (b)` stays as it is. */
export function withoutOuterParentheses(text: string): string {
  if (!text.startsWith("(") || !text.endsWith(")")) return text;
  let depth = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
    if (depth === 0) return text;
  }
  return text.slice(1, -1);
}

function labelSize(lines: string[], fontSize: number): { width: number; height: number } {
  return {
    width: Math.ceil(Math.max(...lines.map((line) => textWidth(line, fontSize))) + 2 * STYLE.labelPadding),
    height: Math.ceil(lines.length * lineHeight(fontSize) + 2 * STYLE.labelPadding),
  };
}

/** Lays out `graph`; the same graph always gives the same diagram. */
export async function layoutDiagram(graph: MachineGraph): Promise<Diagram> {
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const composite = (node: GraphNode) => node.children.length > 0;
  /** The ELK parent of every ELK node (states and pseudo-nodes). */
  const parentOf = new Map<string, string | null>();
  const noteLines = new Map<string, string[]>();
  const dotIds = new Set<string>();

  const toElk = (node: GraphNode): ElkNode => {
    const elk: ElkNode = { id: node.id, layoutOptions: {} };
    if (!composite(node)) {
      elk.width = Math.ceil(textWidth(stateLabel(node), STYLE.stateFont) + 2 * STYLE.statePadding);
      elk.height = STYLE.stateHeight;
      return elk;
    }
    const children: ElkNode[] = [];
    if (node.initial) children.push({ id: initialId(node), width: 10, height: 10 });
    // Transitions that stay inside the composite start from a note in it (targetless ones are listed there).
    const inside = graph.edges.filter((edge) => edge.source === node.id && staysInside(graph, edge));
    if (inside.length > 0) {
      const heading = node.parent === null ? "in any state:" : `in ${node.key}:`;
      const lines = [heading, ...edgeLabelLines(inside.filter((edge) => edge.internal))];
      noteLines.set(noteId(node), lines);
      const size = labelSize(lines, STYLE.noteFont);
      children.push({ id: noteId(node), width: size.width + 8, height: size.height + 4 });
    }
    for (const childId of node.children) children.push(toElk(byId.get(childId)!));
    for (const child of children) parentOf.set(child.id, node.id);
    elk.children = children;
    elk.layoutOptions = { ...LAYOUT };
    if (node.parent !== null) {
      const title = lineHeight(STYLE.compositeFont) + 6;
      elk.layoutOptions["elk.padding"] = `[top=${Math.ceil(title + 6)},left=6,bottom=10,right=6]`;
      elk.layoutOptions["elk.nodeSize.constraints"] = "MINIMUM_SIZE";
      elk.layoutOptions["elk.nodeSize.minimum"] = `(${Math.ceil(textWidth(stateLabel(node), STYLE.compositeFont, true) + 24)},40)`;
    }
    return elk;
  };
  const root = toElk(byId.get(graph.id)!);
  parentOf.set(root.id, null);

  const chain = (id: string): string[] => {
    const out: string[] = [];
    for (let at: string | null | undefined = id; at; at = parentOf.get(at)) out.push(at);
    return out;
  };
  /** ELK wants an edge in the lowest common ancestor of its ends (an end that contains the other counts). */
  const containerOf = (source: string, target: string): string => {
    if (source === target) return parentOf.get(source) ?? source;
    const targets = chain(target);
    if (targets.includes(source)) return source;
    const sources = chain(source);
    if (sources.includes(target)) return target;
    return sources.slice(1).find((id) => targets.includes(id)) ?? graph.id;
  };

  const elkNodes = new Map<string, ElkNode>();
  const index = (node: ElkNode) => {
    elkNodes.set(node.id, node);
    for (const child of node.children ?? []) index(child);
  };
  index(root);

  const order = new Map(graph.nodes.map((node, i) => [node.id, i]));
  const isBackEdge = (source: string, target: string) => source !== target && order.has(source) && order.has(target) && order.get(target)! < order.get(source)!;
  const edges: { elk: ElkExtendedEdge; kind: DiagramEdge["kind"]; lines: string[]; arrow: boolean }[] = [];
  const addEdge = (id: string, source: string, target: string, kind: DiagramEdge["kind"], lines: string[], arrow = true) => {
    const elk: ElkExtendedEdge = { id, sources: [source], targets: [target] };
    if (lines.length > 0) {
      const label: ElkLabel = { id: `${id}.label`, text: lines.join("\n"), ...labelSize(lines, STYLE.labelFont) };
      // Labels sit at their source, as the state's list of ways out: a label in the middle of a long
      // edge widens every layer the edge runs beside (the tool batch's many exits made the run
      // machine 1455 px wide that way); at the source it takes room only there.
      label.layoutOptions = { "elk.edgeLabels.placement": "TAIL" };
      elk.labels = [label];
    }
    const container = elkNodes.get(containerOf(source, target))!;
    (container.edges ??= []).push(elk);
    edges.push({ elk, kind, lines, arrow });
  };

  for (const node of graph.nodes) {
    if (node.initial) addEdge(`${initialId(node)}->${node.initial}`, initialId(node), node.initial, "initial", []);
  }
  // Transitions with the same ends share one arrow, with a label line per guard.
  const groups = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) {
    const key = `${edge.source}\u0000${edge.target}\u0000${edge.internal}`;
    groups.set(key, [...(groups.get(key) ?? []), edge]);
  }
  // Arrows into a state from three or more states merge at a junction dot and go on as one arrow:
  // one track instead of one per source (every way out of the tool batch into finishingTurn and
  // endingTurn). Forward arrows merge whatever their labels, when the junction can sit beside the
  // target (inside the target's parent; an arrow from further out keeps its own track); each keeps
  // its label at its source. Loops merge only when their labels are equal (`failed` → failing from
  // every step). When all labels are equal, the label is written once, on the shared arrow.
  const arrows: { id: string; source: string; target: string; kind: DiagramEdge["kind"]; lines: string[] }[] = [];
  for (const group of groups.values()) {
    const [edge] = group;
    const fromNote = staysInside(graph, edge);
    if (fromNote && edge.internal) continue;
    const kind = edge.internal ? "internal" : group.every((e) => e.event === "") ? "always" : "transition";
    const source = fromNote ? noteId(byId.get(edge.source)!) : edge.source;
    arrows.push({ id: group.map((e) => e.id).join("+"), source, target: edge.target, kind, lines: edgeLabelLines(group) });
  }
  const bundles = new Map<string, typeof arrows>();
  for (const arrow of arrows) {
    const merges = arrow.kind !== "internal" && arrow.source !== arrow.target && !isBackEdge(arrow.source, arrow.target) && containerOf(arrow.source, arrow.target) === parentOf.get(arrow.target);
    // Loops into one state merge too, whatever their labels (each keeps its label at its source):
    // one track back up instead of one per source, so each can be followed at 900 px.
    const loops = arrow.kind !== "internal" && arrow.source !== arrow.target && isBackEdge(arrow.source, arrow.target);
    const key = merges
      ? `${arrow.target}\u0000forward`
      : loops
        ? `${arrow.target}\u0000back`
        : arrow.kind === "internal" || arrow.lines.length === 0
          ? arrow.id
          : `${arrow.target}\u0000${arrow.kind}\u0000${arrow.lines.join("\n")}`;
    bundles.set(key, [...(bundles.get(key) ?? []), arrow]);
  }
  let junctions = 0;
  for (const bundle of bundles.values()) {
    const [first] = bundle;
    if (bundle.length < 3) {
      for (const arrow of bundle) addEdge(arrow.id, arrow.source, arrow.target, arrow.kind, arrow.lines);
      continue;
    }
    const junction = `${graph.id}.__junction.${junctions++}`;
    // The junction sits in the innermost state holding every source and the target.
    const holder = bundle.reduce((at, arrow) => containerOf(at, arrow.source), containerOf(first.source, first.target));
    const holderNode = elkNodes.get(holder)!;
    const dot: ElkNode = { id: junction, width: 8, height: 8 };
    // In model order a junction of forward arrows comes just before its target, so the shared
    // arrow stays a forward one (last in order, it would be taken for a loop and run back up).
    const siblings = (holderNode.children ??= []);
    const before = isBackEdge(first.source, first.target) ? -1 : siblings.findIndex((child) => chain(first.target).includes(child.id));
    siblings.splice(before < 0 ? siblings.length : before, 0, dot);
    elkNodes.set(junction, dot);
    parentOf.set(junction, holder);
    dotIds.add(junction);
    const sameLabel = bundle.every((arrow) => arrow.lines.join("\n") === first.lines.join("\n"));
    for (const arrow of bundle) addEdge(arrow.id, arrow.source, junction, arrow.kind, sameLabel ? [] : arrow.lines, false);
    const kind = bundle.every((arrow) => arrow.kind === "always") ? "always" : "transition";
    addEdge(`${junction}->${first.target}`, junction, first.target, kind, sameLabel ? first.lines : []);
  }

  const legend = [
    ...(edges.some((edge) => edge.kind === "always") ? ["light arrows: eventless (always)"] : []),
    ...(edges.some((edge) => edge.kind === "internal") ? ["dashed: targetless"] : []),
    ...(junctions > 0 ? ["small dot: arrows into the same state merge"] : []),
  ];
  const title = [`${graph.name}  (${graph.source})`, ...(legend.length > 0 ? [legend.join(" · ")] : [])];
  const titleHeight = Math.ceil(title.length * lineHeight(STYLE.titleFont));
  root.layoutOptions!["elk.padding"] = `[top=${STYLE.margin + titleHeight + 6},left=${STYLE.margin},bottom=${STYLE.margin},right=${STYLE.margin}]`;

  const laid = await narrowLayout(root, graph.name);

  const boxOf = (node: ElkNode): Box => ({ x: round(node.x ?? 0), y: round(node.y ?? 0), width: round(node.width ?? 0), height: round(node.height ?? 0) });
  const states: DiagramState[] = [];
  const dots: DiagramDot[] = [];
  const notes: DiagramNote[] = [];
  const collect = (node: ElkNode) => {
    for (const child of node.children ?? []) {
      const state = byId.get(child.id);
      if (state) states.push({ id: state.id, key: state.key, label: stateLabel(state), type: state.type, composite: composite(state), box: boxOf(child) });
      else if (noteLines.has(child.id)) notes.push({ id: child.id, lines: noteLines.get(child.id)!, box: boxOf(child) });
      else dots.push({ id: child.id, kind: dotIds.has(child.id) ? "junction" : "initial", box: boxOf(child) });
    }
    for (const child of node.children ?? []) collect(child);
  };
  collect(laid);

  const laidEdges = new Map<string, ElkExtendedEdge>();
  const indexEdges = (node: ElkNode) => {
    for (const edge of node.edges ?? []) laidEdges.set(edge.id, edge);
    for (const child of node.children ?? []) indexEdges(child);
  };
  indexEdges(laid);

  return {
    id: graph.id,
    title,
    // The title may be wider than a small machine.
    width: round(Math.max(laid.width ?? 0, ...title.map((line) => Math.ceil(textWidth(line, STYLE.titleFont)) + 2 * STYLE.margin))),
    height: round(laid.height ?? 0),
    states,
    dots,
    notes,
    edges: edges.map(({ elk, kind, lines, arrow }) => {
      const out = laidEdges.get(elk.id)!;
      const points: Point[] = [];
      for (const section of out.sections ?? []) {
        for (const point of [section.startPoint, ...(section.bendPoints ?? []), section.endPoint]) points.push({ x: round(point.x), y: round(point.y) });
      }
      const label = out.labels?.[0];
      return { id: elk.id, kind, points, label: label ? { lines, box: boxOf(label as ElkNode) } : null, arrow };
    }),
  };
}

/** Coordinates rounded to 0.1 px: enough for drawing, and no float noise in the committed SVG. */
function round(value: number): number {
  return Math.round(value * 10) / 10;
}
