import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { labelOfEvent, labelOfGuard } from "../../scripts/visualize.js";
import { checkXml } from "./xml.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const OUT = join(ROOT, "visualizations");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");

/** What the test reads of a state node, straight from the machine definition. */
interface DefinitionNode {
  key: string;
  path: string[];
  type: string;
  states: Record<string, DefinitionNode>;
  transitions: Map<string, { guard?: unknown }[]>;
  always?: { guard?: unknown }[];
  invoke: { id: string; src: unknown }[];
}
interface Definition {
  id: string;
  root: DefinitionNode;
}

function statesOf(machine: Definition): { path: string; key: string; type: string }[] {
  const out: { path: string; key: string; type: string }[] = [];
  const visit = (node: DefinitionNode) => {
    if (node.path.length > 0) out.push({ path: [machine.id, ...node.path].join("."), key: node.key, type: node.type });
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return out;
}

function transitionsOf(machine: Definition): { event: string; guard: unknown }[] {
  const out: { event: string; guard: unknown }[] = [];
  const visit = (node: DefinitionNode) => {
    for (const [event, list] of node.transitions) for (const t of list) out.push({ event, guard: t.guard });
    for (const t of node.always ?? []) out.push({ event: "", guard: t.guard });
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return out;
}

function invokesOf(machine: Definition): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (node: DefinitionNode) => {
    for (const def of node.invoke) out.set(def.id, typeof def.src === "string" ? def.src : def.id);
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return out;
}

async function machines(): Promise<{ file: string; machine: Definition }[]> {
  const list: { file: string; machine: Definition }[] = [
    { file: "run.machine", machine: runMachine as unknown as Definition },
    { file: "tool-call.machine", machine: toolCallMachine as unknown as Definition },
  ];
  const session = join(ROOT, "machines/session.machine.ts");
  if (existsSync(session)) {
    const module = (await import(pathToFileURL(session).href)) as Record<string, unknown>;
    const machine = Object.values(module).find((value) => value && typeof value === "object" && "root" in value && "config" in value);
    if (machine) list.push({ file: "session.machine", machine: machine as Definition });
  }
  return list;
}

const unescape = (text: string) =>
  text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");

describe("generated diagrams", async () => {
  const all = await machines();

  for (const { file, machine } of all) {
    describe(file, () => {
      const svg = readFileSync(join(OUT, `${file}.svg`), "utf8");
      const mmd = readFileSync(join(OUT, `${file}.mmd`), "utf8");
      const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => unescape(m[1]));

      it("SVG is well-formed XML", () => {
        expect(checkXml("<svg><g></svg>")).not.toEqual([]);
        expect(checkXml('<svg a="1" a="2"/>')).not.toEqual([]);
        expect(checkXml(svg)).toEqual([]);
        expect(svg).toMatch(/<svg[\s>]/);
      });

      it("SVG has every state, with its path as id and its name as label", () => {
        for (const state of statesOf(machine)) {
          expect(svg, `id of ${state.path}`).toContain(`id="${state.path}"`);
          expect(texts, `label of ${state.path}`).toContain(state.key);
        }
      });

      it("SVG labels edges with event and guard names", () => {
        const labels = texts.join("\n");
        const sources = invokesOf(machine);
        for (const { event, guard } of transitionsOf(machine)) {
          // Invoked actors' events are shown by source (`done: convertToLlm`), eventless ones as `always`.
          const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
          const expected = event === "" ? "always" : actor ? `${actor[1]}: ${sources.get(actor[2]) ?? actor[2]}` : event;
          expect(labels, event).toContain(expected);
          if (typeof guard === "string") expect(labels).toContain(`[${guard}]`);
          else if (guard) expect(labels).toContain(`[${labelOfGuard(guard)}]`);
        }
      });

      it("Mermaid is a stateDiagram-v2 with composites, initial and final states", () => {
        expect(mmd.startsWith("stateDiagram-v2\n")).toBe(true);
        expect(mmd).toContain("[*] --> ");
        for (const state of statesOf(machine)) {
          expect(mmd, state.path).toMatch(new RegExp(`(^|\\s|")${state.key}(\\s|"|$|\\{)`, "m"));
          if (state.type === "compound") expect(mmd).toMatch(new RegExp(`state (${state.key}|"${state.key}" as \\w+)\\s?\\{`));
          if (state.type === "final") expect(mmd).toMatch(new RegExp(`\\b\\w*${state.key} --> \\[\\*\\]`));
        }
        // Mermaid descriptions cannot hold ':' or ';' after the first colon.
        for (const line of mmd.split("\n").filter((l) => l.includes(" --> ") && l.includes(" : "))) {
          expect(line.split(" : ")[1]).not.toMatch(/[:;]/);
        }
      });

      it("JSON lists the same states and edges", () => {
        const graph = JSON.parse(readFileSync(join(OUT, `${file}.json`), "utf8")) as { id: string; nodes: { id: string }[]; edges: unknown[] };
        expect(graph.id).toBe(machine.id);
        expect(graph.nodes.map((node) => node.id).slice(1)).toEqual(statesOf(machine).map((state) => state.path));
        expect(graph.edges.length).toBeGreaterThanOrEqual(transitionsOf(machine).length);
      });
    });
  }

  it("prettifies actor events and guards", () => {
    expect(labelOfEvent("")).toBe("always");
    expect(labelOfEvent("xstate.done.actor.0.run.x", new Map([["0.run.x", "convertToLlm"]]))).toBe("done: convertToLlm");
    expect(labelOfEvent("xstate.error.actor.*")).toBe("error: *");
    expect(labelOfEvent("xstate.after.500.run.waiting")).toBe("after 500ms");
    expect(labelOfEvent("TOOL.READY")).toBe("TOOL.READY");
    const not = Object.assign(function not() {}, { check: () => true, guards: ["ready"] });
    expect(labelOfGuard(not)).toBe("!ready");
    expect(labelOfGuard({ type: "hasTools", params: {} })).toBe("hasTools");
    expect(labelOfGuard(() => true)).toBe("inline");
  });

  it("visualize:check passes on the committed files", () => {
    const result = spawnSync(process.execPath, [TSX, "scripts/visualize.ts", "--check"], { cwd: ROOT, encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("up to date");
  });

  it("visualize:check fails and lists stale files", () => {
    const dir = mkdtempSync(join(tmpdir(), "visualize-"));
    try {
      const write = spawnSync(process.execPath, [TSX, "scripts/visualize.ts", "--out", dir], { cwd: ROOT, encoding: "utf8" });
      expect(write.status).toBe(0);
      writeFileSync(join(dir, "run.machine.mmd"), "stateDiagram-v2\n");
      rmSync(join(dir, "tool-call.machine.svg"));
      writeFileSync(join(dir, "gone.machine.json"), "{}");
      const check = spawnSync(process.execPath, [TSX, "scripts/visualize.ts", "--check", "--out", dir], { cwd: ROOT, encoding: "utf8" });
      expect(check.status).toBe(1);
      expect(check.stderr).toContain("run.machine.mmd (out of date)");
      expect(check.stderr).toContain("tool-call.machine.svg (missing)");
      expect(check.stderr).toContain("gone.machine.json (no machine generates it)");
      expect(check.stderr).toContain("npm run visualize");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
