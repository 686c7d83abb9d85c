/**
 * Diagrams of the statecharts, generated from the machine definitions themselves (never by hand):
 * for every `machines/*.machine.ts` (run, tool call, and the session machine once it exists) it
 * walks `machine.root` and writes into visualizations/
 *
 *   <name>.machine.mmd   Mermaid `stateDiagram-v2` (composites, initial/final, event [guard] labels)
 *   <name>.machine.svg   Graphviz (WASM, offline) from DOT made here: clusters for compound states,
 *                        node/cluster ids = state paths (`run.turn.requesting.streaming`) for the viewer
 *   <name>.machine.json  nodes and edges, for the run viewer
 *
 * Output is deterministic (definition order, no timestamps).
 *
 *   npm run visualize           regenerate
 *   npm run visualize:check     regenerate in memory, compare, exit 1 listing stale files
 *   tsx scripts/visualize.ts --out DIR [--check]   another output directory (tests)
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { instance } from "@viz-js/viz";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MACHINES_DIR = join(ROOT, "machines");
export const DEFAULT_OUT_DIR = join(ROOT, "visualizations");
/** Machines expected besides whatever `machines/*.machine.ts` holds; absent ones are noted, not errors. */
const OPTIONAL_MACHINES = ["session.machine"];
const GENERATED = /\.machine\.(mmd|svg|json)$/;

// ---------------------------------------------------------------------------------------------
// The graph, from the definition
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Mermaid
// ---------------------------------------------------------------------------------------------

/**
 * `stateDiagram-v2`. Mermaid ids are state keys (or `parent_key` where a key repeats); a
 * transition is written in the block of the innermost composite holding both ends, after that
 * block's states, so Mermaid never re-parents a state. Mermaid labels cannot hold `:` or `;`:
 * `done: x` is written `done∶ x` (U+2236).
 */
export function toMermaid(graph: MachineGraph): string {
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const keyCount = new Map<string, number>();
  for (const node of graph.nodes) keyCount.set(node.key, (keyCount.get(node.key) ?? 0) + 1);
  const mermaidId = new Map<string, string>();
  for (const node of graph.nodes) {
    const reserved = /^(state|note|end|direction|classDef|class|style|as|left|right|of|hide|scale)$/i.test(node.key);
    const raw = keyCount.get(node.key) === 1 && !reserved ? node.key : `s_${node.id.split(".").slice(1).join("_")}`;
    mermaidId.set(node.id, raw.replace(/[^A-Za-z0-9_]/g, "_"));
  }
  const ancestors = (id: string): string[] => {
    const out: string[] = [];
    for (let node = byId.get(id); node; node = node.parent ? byId.get(node.parent) : undefined) out.push(node.id);
    return out;
  };
  /** The innermost composite containing both ends (a self-loop lives in its state's parent). */
  const blockOf = (edge: GraphEdge): string => {
    const a = ancestors(edge.source).slice(1);
    const b = new Set(ancestors(edge.target).slice(1));
    return a.find((id) => b.has(id)) ?? graph.id;
  };
  // Mermaid cannot draw a transition of the machine itself, nor (reliably) a loop on a composite:
  // those are listed in a note (on the root's initial state, or on the composite).
  const noted = (edge: GraphEdge) => staysInside(graph, edge);
  const notes = new Map<string, string[]>();
  for (const edge of graph.edges.filter(noted)) {
    const target = edge.internal ? "" : ` → ${byId.get(edge.target)!.key}`;
    notes.set(edge.source, [...(notes.get(edge.source) ?? []), `${edge.label}${target}`]);
  }
  const edgesByBlock = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) {
    if (noted(edge)) continue;
    const block = blockOf(edge);
    edgesByBlock.set(block, [...(edgesByBlock.get(block) ?? []), edge]);
  }
  const label = (text: string) => text.replace(/:/g, "∶").replace(/;/g, ",");

  const lines = ["stateDiagram-v2", `  %% Generated from ${graph.source} by scripts/visualize.ts. Do not edit: npm run visualize.`];
  const note = (on: string, heading: string, items: string[], indent: string) => {
    lines.push(`${indent}note right of ${on}`, `${indent}  ${label(heading)}`, ...items.map((item) => `${indent}  ${label(item)}`), `${indent}end note`);
  };
  const block = (node: GraphNode, indent: string) => {
    if (node.initial) lines.push(`${indent}[*] --> ${mermaidId.get(node.initial)}`);
    node.children.forEach((childId, index) => {
      const child = byId.get(childId)!;
      const id = mermaidId.get(child.id)!;
      // Regions of a parallel state are separated by `--`.
      if (node.type === "parallel" && index > 0) lines.push(`${indent}--`);
      if (child.children.length > 0) {
        lines.push(id === child.key ? `${indent}state ${id} {` : `${indent}state "${child.key}" as ${id}{`);
        block(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else if (child.type === "history") {
        lines.push(`${indent}state "${child.key} (history)" as ${id}`);
      } else {
        lines.push(id === child.key ? `${indent}${id}` : `${indent}state "${child.key}" as ${id}`);
      }
      if (child.type === "final") lines.push(`${indent}${id} --> [*]`);
      const childNotes = notes.get(child.id);
      if (childNotes) note(id, `in ${child.key}`, childNotes, indent);
    });
    const rootNotes = node.parent === null ? notes.get(node.id) : undefined;
    const first = node.initial ?? node.children[0];
    if (rootNotes && first) note(mermaidId.get(first)!, "in any state", rootNotes, indent);
    for (const edge of edgesByBlock.get(node.id) ?? []) {
      lines.push(`${indent}${mermaidId.get(edge.source)} --> ${mermaidId.get(edge.target)} : ${label(edge.label)}`);
    }
  };
  block(byId.get(graph.id)!, "  ");
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// DOT / SVG
// ---------------------------------------------------------------------------------------------

const quote = (value: string) => `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
const FONT = "Helvetica,Arial,sans-serif";

/**
 * DOT with a cluster per compound/parallel state (cluster `id` = the state path) and a node per
 * atomic/final state (node name and `id` = the state path). Pseudo-nodes: `<path>.__initial`
 * (a dot pointing at the initial child) and `<path>.__final` (after a final state). Transitions
 * into or out of a compound state attach to its initial dot, clipped at the cluster
 * (`lhead`/`ltail`).
 */
export function toDot(graph: MachineGraph): string {
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const isCluster = (node: GraphNode) => node.children.length > 0;
  const anchorOf = (node: GraphNode) => `${node.id}.__initial`;
  const lines = [
    `digraph ${quote(graph.id)} {`,
    `  graph [id=${quote(graph.id)}, class="machine", compound=true, newrank=true, rankdir=TB, nodesep=0.3, ranksep=0.32, fontname=${quote(FONT)}, fontsize=12, labelloc=t, label=${quote(`${graph.name}  (${graph.source})`)}];`,
    `  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#52606d", penwidth=1.2, fontname=${quote(FONT)}, fontsize=11, height=0.3, margin="0.12,0.04"];`,
    `  edge [color="#7b8794", fontcolor="#323f4b", fontname=${quote(FONT)}, fontsize=9, arrowsize=0.6, penwidth=1];`,
  ];
  // Transitions of the machine itself, and a composite's transitions that stay inside it, start
  // from a note in the composite (targetless ones are listed in it), not from its initial dot.
  const noteOf = (node: GraphNode) => `${node.id}.__transitions`;
  const fromNote = (edge: GraphEdge) => staysInside(graph, edge);
  const emit = (node: GraphNode, indent: string) => {
    // Every composite (the root too) gets its initial dot; a parallel state gets an invisible anchor.
    if (node.initial || node.type === "parallel") {
      const attrs = node.initial
        ? `shape=point, width=0.1, height=0.1, style=filled, fillcolor="#1f2933", color="#1f2933", class="pseudo initial"`
        : `shape=point, width=0.01, height=0.01, style=invis, class="pseudo anchor"`;
      lines.push(`${indent}${quote(anchorOf(node))} [id=${quote(anchorOf(node))}, label="", ${attrs}];`);
    }
    const own = graph.edges.filter((edge) => edge.source === node.id && fromNote(edge));
    if (own.length > 0) {
      const heading = node.parent === null ? "in any state" : `in ${node.key}`;
      const label = [heading, ...own.filter((edge) => edge.internal).map((edge) => edge.label)].join("\n");
      lines.push(
        `${indent}${quote(noteOf(node))} [id=${quote(noteOf(node))}, label=${quote(label)}, shape=note, style=filled, fillcolor="#fffbea", color="#b7a76a", fontsize=9, class="pseudo transitions"];`,
      );
    }
    for (const childId of node.children) {
      const child = byId.get(childId)!;
      if (isCluster(child)) {
        lines.push(`${indent}subgraph ${quote(`cluster_${child.id}`)} {`);
        const parallel = child.type === "parallel";
        lines.push(
          `${indent}  graph [id=${quote(child.id)}, class=${quote(`state ${child.type}`)}, label=${quote(parallel ? `${child.key} (parallel)` : child.key)}, style=${parallel ? '"rounded,dashed,filled"' : '"rounded,filled"'}, fillcolor="#f5f7fa", color="#9aa5b1", fontsize=11, fontname=${quote(FONT)}, margin=10];`,
        );
        emit(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        const extra =
          child.type === "final"
            ? `, penwidth=2.2, class="state final"`
            : child.type === "history"
              ? `, shape=circle, label=${quote(child.key === "hist" ? "H" : `H ${child.key}`)}, class="state history"`
              : `, class="state atomic"`;
        lines.push(`${indent}${quote(child.id)} [id=${quote(child.id)}, label=${quote(child.key)}${extra}];`);
        if (child.type === "final") {
          const finalId = `${child.id}.__final`;
          lines.push(`${indent}${quote(finalId)} [id=${quote(finalId)}, label="", shape=doublecircle, width=0.08, height=0.08, style=filled, fillcolor="#1f2933", color="#1f2933", class="pseudo final"];`);
        }
      }
    }
  };
  emit(byId.get(graph.id)!, "  ");

  // Pseudo-transitions: initial dots and final markers.
  for (const node of graph.nodes) {
    if (node.initial) {
      const target = byId.get(node.initial)!;
      const head = isCluster(target) ? `, lhead=${quote(`cluster_${target.id}`)}` : "";
      lines.push(`  ${quote(anchorOf(node))} -> ${quote(isCluster(target) ? anchorOf(target) : target.id)} [class="pseudo initial"${head}];`);
    }
    if (node.type === "final" && !isCluster(node)) lines.push(`  ${quote(node.id)} -> ${quote(`${node.id}.__final`)} [class="pseudo final"];`);
  }
  // Parallel transitions (same ends) share one arrow with one label line each.
  const groups = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) {
    const key = `${edge.source}\u0000${edge.target}\u0000${edge.internal}`;
    groups.set(key, [...(groups.get(key) ?? []), edge]);
  }
  for (const group of groups.values()) {
    const [edge] = group;
    if (edge.internal && fromNote(edge)) continue;
    const source = byId.get(edge.source)!;
    const target = byId.get(edge.target)!;
    const label = group.map((e) => (e.guard ? `${e.eventLabel} [${e.guard}]` : e.eventLabel)).join("\n");
    const attrs = [`id=${quote(group.map((e) => e.id).join("+"))}`, `label=${quote(label)}`];
    attrs.push(`class=${quote(edge.internal ? "transition internal" : group.every((e) => e.event === "") ? "transition always" : "transition")}`);
    if (edge.internal) attrs.push("style=dashed");
    if (group.every((e) => e.event === "")) attrs.push(`fontcolor="#616e7c"`);
    const selfLoop = source.id === target.id;
    if (isCluster(source) && !fromNote(edge)) attrs.push(`ltail=${quote(`cluster_${source.id}`)}`);
    if (isCluster(target) && !selfLoop) attrs.push(`lhead=${quote(`cluster_${target.id}`)}`);
    const from = fromNote(edge) ? noteOf(source) : isCluster(source) ? anchorOf(source) : source.id;
    const to = isCluster(target) ? anchorOf(target) : target.id;
    lines.push(`  ${quote(from)} -> ${quote(to)} [${attrs.join(", ")}];`);
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

let vizInstance: Awaited<ReturnType<typeof instance>> | undefined;

export async function toSvg(dot: string): Promise<string> {
  vizInstance ??= await instance();
  const result = vizInstance.render(dot, { format: "svg", engine: "dot" });
  if (result.status !== "success") {
    throw new Error(`Graphviz failed: ${result.errors.map((error) => error.message).join("; ")}`);
  }
  return result.output;
}

export function toJson(graph: MachineGraph): string {
  return `${JSON.stringify(graph, null, 2)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

export interface LoadedMachine {
  name: string;
  source: string;
  machine: MachineLike;
}

/** Every machine exported by `machines/*.machine.ts`, in file order; notes for absent optional ones. */
export async function loadMachines(dir = MACHINES_DIR): Promise<{ machines: LoadedMachine[]; notes: string[] }> {
  const files = (await readdir(dir)).filter((file) => /\.machine\.ts$/.test(file)).sort();
  const machines: LoadedMachine[] = [];
  const notes: string[] = [];
  for (const file of files) {
    const base = file.replace(/\.ts$/, "");
    const source = relative(ROOT, join(dir, file)).split("\\").join("/");
    const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    const found = Object.keys(module)
      .sort()
      .filter((name) => isMachine(module[name]));
    if (found.length === 0) {
      notes.push(`${source}: exports no state machine, skipped`);
      continue;
    }
    for (const exportName of found) {
      machines.push({ name: found.length === 1 ? base : `${base}.${exportName}`, source, machine: module[exportName] as MachineLike });
    }
  }
  for (const optional of OPTIONAL_MACHINES) {
    if (!existsSync(join(dir, `${optional}.ts`))) notes.push(`machines/${optional}.ts does not exist yet, skipped`);
  }
  return { machines, notes };
}

/** Every generated file, by path relative to the output directory. */
export async function generate(machines: LoadedMachine[]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const { name, source, machine } of machines) {
    const graph = buildGraph(machine, name, source);
    files.set(`${name}.mmd`, toMermaid(graph));
    files.set(`${name}.svg`, await toSvg(toDot(graph)));
    files.set(`${name}.json`, toJson(graph));
  }
  return files;
}

/** Files that differ from `files`, are missing, or are generated files no machine produces any more. */
export async function staleFiles(files: Map<string, string>, outDir: string): Promise<string[]> {
  const stale: string[] = [];
  for (const [name, content] of files) {
    const path = join(outDir, name);
    const current = existsSync(path) ? await readFile(path, "utf8") : undefined;
    if (current === undefined) stale.push(`${name} (missing)`);
    else if (current !== content) stale.push(`${name} (out of date)`);
  }
  for (const name of await orphans(files, outDir)) stale.push(`${name} (no machine generates it)`);
  return stale;
}

async function orphans(files: Map<string, string>, outDir: string): Promise<string[]> {
  if (!existsSync(outDir)) return [];
  return (await readdir(outDir)).filter((name) => GENERATED.test(name) && !files.has(name)).sort();
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const outIndex = argv.indexOf("--out");
  const outDir = outIndex >= 0 && argv[outIndex + 1] ? resolve(argv[outIndex + 1]) : DEFAULT_OUT_DIR;
  const shown = relative(process.cwd(), outDir) || ".";
  const { machines, notes } = await loadMachines();
  for (const note of notes) console.log(`note: ${note}`);
  const files = await generate(machines);

  if (check) {
    const stale = await staleFiles(files, outDir);
    if (stale.length > 0) {
      console.error(`visualize:check: ${stale.length} diagram file(s) in ${shown}/ do not match the machine definitions:`);
      for (const line of stale) console.error(`  - ${line}`);
      console.error("Run `npm run visualize` and commit the result.");
      return 1;
    }
    console.log(`visualize:check: ${files.size} files in ${shown}/ are up to date (${machines.map((m) => m.name).join(", ")}).`);
    return 0;
  }

  await mkdir(outDir, { recursive: true });
  for (const name of await orphans(files, outDir)) {
    await rm(join(outDir, name));
    console.log(`removed ${shown}/${name} (no machine generates it)`);
  }
  for (const [name, content] of files) {
    const path = join(outDir, name);
    const current = existsSync(path) ? await readFile(path, "utf8") : undefined;
    if (current === content) continue;
    await writeFile(path, content);
    console.log(`wrote ${shown}/${name}`);
  }
  console.log(`${files.size} files for ${machines.map((m) => m.name).join(", ")} in ${shown}/`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
