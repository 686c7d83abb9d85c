/**
 * The root entry runs outside Node: bundled for the browser (Vite library mode, browser
 * conditions, every dependency bundled), its import graph reaches no Node built-in module. Vite
 * only warns about those (it swaps in an empty stub), so a plugin records every import of one.
 */
import { builtinModules } from "node:module";
import { join, relative, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin, type Rolldown } from "vite";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureLibraryBuilt } from "../../scripts/example-web.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith("_")));

/** `fs`, `node:fs`, `fs/promises`, `node:test` (prefix-only modules count too). */
export function isNodeBuiltin(specifier: string): boolean {
  if (specifier.startsWith("node:")) return true;
  return BUILTINS.has(specifier) || BUILTINS.has(specifier.split("/")[0]);
}

interface BrowserBundle {
  /** Every import of a Node built-in: what was imported, and from which module. */
  builtins: { specifier: string; importer: string }[];
  /** The bundled modules (absolute paths). */
  modules: string[];
  /** Imports left outside the bundle. */
  external: string[];
}

/** Bundles `entry` for the browser with nothing external, recording Node built-ins instead of failing. */
async function bundleForBrowser(entry: string): Promise<BrowserBundle> {
  const builtins: BrowserBundle["builtins"] = [];
  const detector: Plugin = {
    name: "detect-node-builtins",
    enforce: "pre",
    resolveId(specifier, importer) {
      if (!isNodeBuiltin(specifier)) return null;
      builtins.push({ specifier, importer: importer ? relative(ROOT, importer) : "(entry)" });
      return { id: specifier, external: true };
    },
  };
  const result = await build({
    configFile: false,
    root: ROOT,
    logLevel: "silent",
    plugins: [detector],
    // Browser resolution (the client conditions: "browser", "module", "import"/"default").
    build: {
      lib: { entry, formats: ["es"], fileName: "bundle" },
      write: false,
      minify: false,
      emptyOutDir: false,
      // No Node target, and no dependency externalized: the whole import graph is walked.
      target: "es2022",
    },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const chunks = outputs.flatMap((output) => output.output).filter((item): item is Rolldown.OutputChunk => item.type === "chunk");
  return {
    builtins,
    modules: [...new Set(chunks.flatMap((chunk) => chunk.moduleIds))],
    external: [...new Set(chunks.flatMap((chunk) => [...chunk.imports, ...chunk.dynamicImports]))].filter(
      (name) => !chunks.some((chunk) => chunk.fileName === name),
    ),
  };
}

describe("the core in a browser bundle", () => {
  beforeAll(async () => {
    await ensureLibraryBuilt();
  }, 180_000);

  it("the detector sees Node built-ins (control: the ./node subpath uses them)", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/src/node/index.js"));
    expect(bundle.builtins.map((found) => found.specifier).some((name) => /^(node:)?(fs|path|child_process)/.test(name))).toBe(true);
  });

  it("the root entry (dist/index.js) imports no Node built-in, directly or through its dependencies", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/index.js"));
    expect(bundle.builtins).toEqual([]);
    expect(bundle.external).toEqual([]);
    // The dependencies were bundled, so their imports were checked too.
    for (const dependency of ["/node_modules/xstate/", "/node_modules/rxjs/", "/node_modules/@cfworker/json-schema/"]) {
      expect(bundle.modules.some((id) => id.includes(dependency)), dependency).toBe(true);
    }
    for (const file of ["dist/src/agent/agent.js", "dist/machines/run.machine.js", "dist/machines/session.machine.js"]) {
      expect(bundle.modules, file).toContain(join(ROOT, file));
    }
  });

  it("so does ./inspect, which the browser example uses", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/src/inspect/index.js"));
    expect(bundle.builtins).toEqual([]);
    expect(bundle.external).toEqual([]);
  });
});
