/** Mermaid `stateDiagram-v2` of a machine graph: what Markdown renderers and editors draw. */
import { staysInside, type GraphEdge, type GraphNode, type MachineGraph } from "./graph.js";


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
