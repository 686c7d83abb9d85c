/**
 * Diagrams of the statecharts, generated from the machine definitions themselves (never by hand):
 * for every machine exported by `machines/*.machine.ts` it walks `machine.root` (scripts/diagram/graph.ts)
 * and writes into visualizations/
 *
 *   <name>.machine.svg   laid out by ELK (scripts/diagram/layout.ts, svg.ts): compound states as
 *                        nested boxes, ids = state paths (`run.turn.requesting.streaming`) for the viewer
 *   <name>.machine.mmd   Mermaid `stateDiagram-v2`, for Markdown renderers and editors
 *   <name>.machine.json  nodes and edges, for the run viewer
 *
 * Output is deterministic (definition order, no timestamps, ELK with a fixed seed, rounded
 * coordinates). The PNG screenshots the README shows are taken by scripts/screenshot-diagrams.ts.
 *
 *   npm run visualize           regenerate (then the screenshots)
 *   npm run visualize:check     regenerate in memory, compare, exit 1 listing stale files
 *   tsx scripts/visualize.ts --out DIR [--check]   another output directory (tests)
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildGraph, isMachine, toJson, type MachineLike } from "./diagram/graph.js";
import { layoutDiagram } from "./diagram/layout.js";
import { toMermaid } from "./diagram/mermaid.js";
import { machineRules, type MachineRules } from "./diagram/rules.js";
import { toSvg } from "./diagram/svg.js";

export { buildGraph, labelOfEvent, labelOfGuard, type MachineGraph } from "./diagram/graph.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MACHINES_DIR = join(ROOT, "machines");
export const DEFAULT_OUT_DIR = join(ROOT, "visualizations");
const GENERATED = /\.machine\.(mmd|svg|json)$|^machine-rules\.json$/;


// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

export interface LoadedMachine {
  name: string;
  source: string;
  machine: MachineLike;
}

/**
 * Every machine exported by `machines/*.machine.ts` and `machines/<folder>/*.machine.ts`, in file
 * order. A machine re-exported from another file (`machines/run.machine.ts` keeps the run
 * machine's old import path) is shown once, from the file in its own folder that defines it.
 */
export async function loadMachines(dir = MACHINES_DIR): Promise<{ machines: LoadedMachine[]; notes: string[] }> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested: string[] = [];
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    for (const file of (await readdir(join(dir, entry.name))).filter((name) => /\.machine\.ts$/.test(name)).sort()) nested.push(join(entry.name, file));
  }
  const topLevel = entries.filter((e) => e.isFile() && /\.machine\.ts$/.test(e.name)).map((e) => e.name).sort();
  const loaded: (LoadedMachine & { order: string })[] = [];
  const seen = new Set<unknown>();
  const notes: string[] = [];
  for (const file of [...nested, ...topLevel]) {
    const base = basename(file).replace(/\.ts$/, "");
    const source = relative(ROOT, join(dir, file)).split("\\").join("/");
    const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    const exported = Object.keys(module)
      .sort()
      .filter((name) => isMachine(module[name]));
    const found = exported.filter((name) => !seen.has(module[name]));
    if (exported.length === 0) {
      notes.push(`${source}: exports no state machine, skipped`);
      continue;
    }
    for (const exportName of found) {
      seen.add(module[exportName]);
      loaded.push({ name: found.length === 1 ? base : `${base}.${exportName}`, source, machine: module[exportName] as MachineLike, order: base });
    }
  }
  // In the order of their file names, wherever the file lives (as before machines had folders).
  const machines = loaded.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0)).map(({ order: _order, ...machine }) => machine);
  return { machines, notes };
}

/** Every generated file, by path relative to the output directory. */
export async function generate(machines: LoadedMachine[]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const { name, source, machine } of machines) {
    const graph = buildGraph(machine, name, source);
    files.set(`${name}.mmd`, toMermaid(graph));
    files.set(`${name}.svg`, toSvg(await layoutDiagram(graph)));
    files.set(`${name}.json`, toJson(graph));
  }
  // The rule ids of the machines' comments, for the live inspector's clicked-state list.
  const rules: MachineRules = { states: {}, transitions: {} };
  for (const { source, machine } of machines) {
    const found = machineRules(await readFile(join(ROOT, source), "utf8"), machine.id, source);
    Object.assign(rules.states, found.states);
    Object.assign(rules.transitions, found.transitions);
  }
  files.set("machine-rules.json", `${JSON.stringify(rules, null, 1)}\n`);
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
