/** Walking the workspace: sorted, skipping `node_modules` and `.git`, never following symlinked directories. */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { SKIPPED_DIRECTORIES } from "./workspace.js";

export interface WalkEntry {
  absolute: string;
  /** Relative to the directory walked, with forward slashes. */
  relative: string;
  isDirectory: boolean;
}

/** Entries of `dir` (recursively when asked), directories before their contents, names sorted. */
export async function* walk(dir: string, options: { recursive: boolean; signal?: AbortSignal }, prefix = ""): AsyncGenerator<WalkEntry> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    throwIfAborted(options.signal);
    const absolute = path.join(dir, entry.name);
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    let isDirectory = entry.isDirectory();
    if (entry.isSymbolicLink()) {
      // A symlinked directory is listed but never entered (no cycles, no escapes).
      const target = await stat(absolute).catch(() => undefined);
      if (!target) continue;
      if (target.isDirectory()) {
        yield { absolute, relative, isDirectory: true };
        continue;
      }
      isDirectory = false;
    }
    // A recursive walk leaves node_modules and .git out entirely; a flat listing shows them.
    if (isDirectory && options.recursive && SKIPPED_DIRECTORIES.has(entry.name)) continue;
    yield { absolute, relative, isDirectory };
    if (isDirectory && options.recursive) yield* walk(absolute, options, relative);
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error("Aborted");
}
