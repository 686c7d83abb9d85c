/**
 * A browser bundle of one entry (Vite library mode, browser conditions, every dependency
 * bundled), recording each import of a Node built-in module instead of failing (Vite only warns
 * about those and swaps in an empty stub). Used by test/web/core-bundle.test.ts and the MCP bundle test.
 */
import { builtinModules } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin, type Rolldown } from "vite";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith("_")));

/** `fs`, `node:fs`, `fs/promises`, `node:test` (prefix-only modules count too). */
export function isNodeBuiltin(specifier: string): boolean {
  if (specifier.startsWith("node:")) return true;
  return BUILTINS.has(specifier) || BUILTINS.has(specifier.split("/")[0]!);
}

export interface BrowserBundle {
  /** Every import of a Node built-in: what was imported, and from which module. */
  builtins: { specifier: string; importer: string }[];
  /** The bundled modules (absolute paths). */
  modules: string[];
  /** Imports left outside the bundle. */
  external: string[];
}

export async function bundleForBrowser(entry: string): Promise<BrowserBundle> {
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
    build: { lib: { entry, formats: ["es"], fileName: "bundle" }, write: false, minify: false, emptyOutDir: false, target: "es2022" },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const chunks = outputs.flatMap((output) => output.output).filter((item): item is Rolldown.OutputChunk => item.type === "chunk");
  return {
    builtins,
    modules: [...new Set(chunks.flatMap((chunk) => chunk.moduleIds))],
    external: [...new Set(chunks.flatMap((chunk) => [...chunk.imports, ...chunk.dynamicImports]))].filter((name) => !chunks.some((chunk) => chunk.fileName === name)),
  };
}
