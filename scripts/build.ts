/**
 * The library build, the one `npm run build` runs: a clean `dist/` compiled by
 * `tsc -p tsconfig.build.json`, then the top-level entry files of scripts/entry-shims.mjs.
 *
 *   npm run build                     always builds
 *   tsx scripts/build.ts --if-stale   builds only when dist/ is missing or stale
 *
 * Tests, `npm run example:web` and `npm pack` call `ensureLibraryBuilt()`: "stale" means a file
 * package.json publishes from dist/ is missing, the build's inputs (their content, not their
 * mtimes: a fresh clone gives every file the clone's time) differ from those of the build that
 * wrote dist/, or dist/ changed since (e.g. a bare `tsc` wrote it).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");

/** Outside dist/, so `npm pack` never ships it and `rm -rf dist` leaves nothing that vouches for a missing build. */
const STAMP = join(ROOT, "node_modules/.cache/xstate-agent-loop/build.json");

interface Stamp {
  inputs: string;
  /** mtime of every published file as this build wrote them: any other writer makes dist/ stale. */
  outputs: Record<string, number>;
}

/** The files the build reads: the compiled sources, the configs, this script and the compiler's version. */
function inputFiles(root: string): string[] {
  const files = ["tsconfig.json", "tsconfig.build.json", "scripts/build.ts", "scripts/entry-shims.mjs", "node_modules/typescript/package.json"];
  for (const dir of ["machines", "src"]) {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
      if (entry.isFile() && entry.name.endsWith(".ts")) files.push(relative(root, join(entry.parentPath, entry.name)));
    }
  }
  return files.sort();
}

/** A hash over the names and contents of the build's inputs (≈100 files: a few milliseconds). */
export function buildInputsHash(root = ROOT): string {
  const hash = createHash("sha256");
  for (const file of inputFiles(root)) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** Every dist/ file package.json names (`main`, `types`, `bin`, `exports`), relative to the root. */
export function publishedFiles(root = ROOT): string[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    main?: string;
    types?: string;
    bin?: Record<string, string>;
    exports?: Record<string, string | Record<string, string>>;
  };
  const exported = Object.values(pkg.exports ?? {}).flatMap((target) => (typeof target === "string" ? [target] : Object.values(target)));
  const files = [pkg.main, pkg.types, ...Object.values(pkg.bin ?? {}), ...exported].flatMap((file) => (file ? [file.replace(/^\.\//, "")] : []));
  return [...new Set(files.filter((file) => file.startsWith("dist/")))].sort();
}

function publishedOutputs(): Record<string, number> | null {
  const outputs: Record<string, number> = {};
  for (const file of publishedFiles()) {
    const info = statSync(join(ROOT, file), { throwIfNoEntry: false });
    if (!info) return null;
    outputs[file] = info.mtimeMs;
  }
  return outputs;
}

/** Why dist/ must be rebuilt, or null when it is up to date. */
export function staleReason(): string | null {
  const outputs = publishedOutputs();
  if (!outputs) return "dist/ is missing or incomplete";
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, "utf8")) as Stamp;
  } catch {
    return "dist/ was not written by this build";
  }
  if (JSON.stringify(stamp.outputs) !== JSON.stringify(outputs)) return "dist/ changed since the last build";
  if (stamp.inputs !== buildInputsHash()) return "sources changed since the last build";
  return null;
}

/** Runs the build: removes dist/ (no file of a deleted source survives), compiles, writes the entry files and the stamp. */
async function buildLibrary(): Promise<void> {
  // Hashed before compiling: a source edited during the build leaves dist/ stale, as it should.
  const inputs = buildInputsHash();
  rmSync(DIST, { recursive: true, force: true });
  await run("tsc", [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"]);
  await run("entry-shims", [join(ROOT, "scripts/entry-shims.mjs")]);
  const outputs = publishedOutputs();
  if (!outputs) throw new Error(`the build did not write every file package.json publishes: ${publishedFiles().join(", ")}`);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, JSON.stringify({ inputs, outputs } satisfies Stamp));
}

/** Runs a Node script with this Node (so a Node 24 leg builds with 24), in the project root. */
async function run(name: string, args: string[]): Promise<void> {
  const code = await new Promise<number | null>((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", fail);
    child.once("exit", done);
  });
  if (code !== 0) throw new Error(`library build failed (${name} exit code ${code})`);
}

/**
 * Builds if dist/ is stale (or always, with `force`); one build at a time across processes (test
 * files run in parallel workers, and `npm run example:web` may run beside them).
 */
export async function ensureLibraryBuilt(log: (line: string) => void = () => {}, { force = false } = {}): Promise<{ rebuilt: boolean }> {
  const lock = join(tmpdir(), `xstate-agent-loop-build-${createHash("sha256").update(ROOT).digest("hex").slice(0, 16)}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another process is building; a lock older than three minutes was abandoned.
      const info = statSync(lock, { throwIfNoEntry: false });
      if (info && Date.now() - info.mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((wake) => setTimeout(wake, 200));
    }
  }
  try {
    const reason = force ? "npm run build" : staleReason();
    if (reason === null) return { rebuilt: false };
    log(`building the library (${reason})…`);
    await buildLibrary();
    return { rebuilt: true };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const ifStale = process.argv.includes("--if-stale");
  const started = performance.now();
  ensureLibraryBuilt(ifStale ? (line) => console.log(line) : () => {}, { force: !ifStale }).then(
    ({ rebuilt }) => console.log(rebuilt ? `dist/ built in ${((performance.now() - started) / 1000).toFixed(1)} s` : "dist/ is up to date"),
    (error: unknown) => {
      console.error(`build: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
