/**
 * The TypeScript blocks of the docs (README.md and docs/, recursively), extracted so the suite can
 * type-check each as its own module against the sources, and run the ones marked as complete
 * programs. `xstate-agent-loop` and its subpaths resolve to the sources through `paths`, taken from
 * the build's entry list (scripts/entry-shims.mjs), so a new subpath needs nothing here.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import MarkdownIt from "markdown-it";

export const REPO = path.resolve(import.meta.dirname, "../..");

/** A block's first line when the block is a complete program the suite runs (with tsx). */
export const RUN_MARKER = "// @runnable";

export interface Snippet {
  /** The markdown file, relative to the repository. */
  file: string;
  /** The line of the block's first code line in that file (1-based). */
  line: number;
  code: string;
  runnable: boolean;
}

/** README.md and every markdown file under docs/ but the generated API reference (docs/api/). */
export function docFiles(root = REPO): string[] {
  const docs = path.join(root, "docs");
  const files = ["README.md"];
  try {
    for (const entry of readdirSync(docs, { recursive: true, withFileTypes: true })) {
      const file = path.relative(root, path.join(entry.parentPath, entry.name));
      if (entry.isFile() && file.endsWith(".md") && !file.startsWith(path.join("docs", "api") + path.sep)) files.push(file);
    }
  } catch {
    // no docs/ yet
  }
  return files.sort();
}

/** Every ```ts / ```typescript block of a markdown text (CommonMark's fences, as markdown-it reads them). */
export function extractSnippets(file: string, markdown: string): Snippet[] {
  return new MarkdownIt()
    .parse(markdown, {})
    .filter((token) => token.type === "fence" && /^(ts|typescript)$/.test(token.info.trim()) && token.map)
    .map((token) => {
      const code = token.content.replace(/\n$/, "");
      return { file, line: token.map![0] + 2, code, runnable: code.split("\n", 1)[0]!.trim() === RUN_MARKER };
    });
}

/** The package's import specifiers and the source each resolves to, from the build's entry list. */
export function packagePaths(root = REPO): Record<string, string[]> {
  const shims = readFileSync(path.join(root, "scripts/entry-shims.mjs"), "utf8");
  const paths: Record<string, string[]> = {};
  for (const [, name, target] of shims.matchAll(/^\s*"?([\w-]+)"?: "\.\/(src\/[^"]+)\.js",?$/gm)) {
    paths[name === "index" ? "xstate-agent-loop" : `xstate-agent-loop/${name}`] = [path.join(root, `${target}.ts`)];
  }
  if (!paths["xstate-agent-loop"]) throw new Error("scripts/entry-shims.mjs: no index entry found");
  return paths;
}

/** A block's module name in the work directory: its file and line, readable in a diagnostic. */
export function moduleName(snippet: Snippet): string {
  return `${snippet.file.replace(/[\\/.]/g, "_")}_L${snippet.line}.ts`;
}

/**
 * Writes each block as a module (`export {}` keeps blocks without imports from sharing a global
 * scope) and a tsconfig that maps the package to the sources. Returns the tsconfig's path.
 */
export function writeWorkspace(dir: string, snippets: Snippet[], root = REPO): string {
  mkdirSync(dir, { recursive: true });
  for (const snippet of snippets) writeFileSync(path.join(dir, moduleName(snippet)), `${snippet.code}\nexport {};\n`);
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2022", "DOM", "DOM.Iterable"],
      types: ["node"],
      typeRoots: [path.join(root, "node_modules/@types")],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      esModuleInterop: true,
      resolveJsonModule: true,
      allowImportingTsExtensions: true,
      paths: packagePaths(root),
    },
    files: snippets.map(moduleName),
  };
  const file = path.join(dir, "tsconfig.json");
  writeFileSync(file, JSON.stringify(tsconfig, null, 2));
  return file;
}

/** tsc's diagnostics (`file(line,col): error TSnnnn: text`), keyed by module name, lines mapped back to the markdown. */
export function diagnosticsBySnippet(output: string, snippets: Snippet[]): Map<Snippet, string[]> {
  const byModule = new Map(snippets.map((snippet) => [moduleName(snippet), snippet] as const));
  const result = new Map<Snippet, string[]>();
  for (const [, file, line, message] of output.matchAll(/^(?:.*[\\/])?([^\\/(\s]+\.ts)\((\d+),\d+\): (error TS\d+: .*)$/gm)) {
    const snippet = byModule.get(file!);
    if (!snippet) continue;
    const list = result.get(snippet) ?? [];
    list.push(`${snippet.file}:${snippet.line + Number(line) - 1}: ${message}`);
    result.set(snippet, list);
  }
  return result;
}
