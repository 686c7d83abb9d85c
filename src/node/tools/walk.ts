/**
 * Walking the workspace: names sorted, directories before their contents, `node_modules` and `.git`
 * not entered, symlinks listed but never followed, at most `MAX_WALK_DEPTH` levels read, each
 * subdirectory opened from its open parent (see confined-open.ts), so that a directory swapped for
 * a symlink mid-walk is not entered.
 * Unreadable and special entries (FIFOs, sockets, devices) are skipped and reported, not fatal.
 */
import type { Dirent } from "node:fs";
import { defaultConfinementMode, openChildDirectory, readDirectory, type ConfinementMode, type DirectoryRef } from "./confined-open.js";
import { SKIPPED_DIRECTORIES } from "./workspace.js";

export interface WalkEntry {
  /** Relative to the directory walked, with forward slashes. */
  relative: string;
  /** The entry's name in `parent`, which stays open until the walk moves on to the next entry. */
  name: string;
  parent: DirectoryRef;
  kind: "file" | "directory" | "symlink";
  isDirectory: boolean;
}

/** An entry the walk could not or would not look at, with why. */
export interface SkippedEntry {
  /** Relative to the directory walked, with forward slashes. */
  path: string;
  reason: string;
}

export interface WalkOptions {
  recursive: boolean;
  signal?: AbortSignal;
  /** The real workspace root (children found outside it are not entered). */
  realRoot: string;
  /** Receives what was skipped. */
  skipped: { push(entry: SkippedEntry): unknown };
  mode?: ConfinementMode;
  /** Entries (relative to the walked directory) left out entirely: denied paths. */
  denied?: (relative: string) => boolean;
}

/** Entries of the open directory `dir` (recursively when asked). */
export async function* walk(dir: DirectoryRef, options: WalkOptions, prefix = "", depth = 0): AsyncGenerator<WalkEntry> {
  const mode = options.mode ?? defaultConfinementMode();
  let entries: Dirent[];
  try {
    entries = await readDirectory(dir);
  } catch (error) {
    if (prefix === "") throw error;
    options.skipped.push({ path: prefix, reason: reasonOf(error) });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    throwIfAborted(options.signal);
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (options.denied?.(relative)) continue;
    if (entry.isSymbolicLink()) {
      yield { relative, name: entry.name, parent: dir, kind: "symlink", isDirectory: false };
      continue;
    }
    if (entry.isFile()) {
      yield { relative, name: entry.name, parent: dir, kind: "file", isDirectory: false };
      continue;
    }
    if (!entry.isDirectory()) {
      options.skipped.push({ path: relative, reason: specialKind(entry) });
      continue;
    }
    // A recursive walk leaves node_modules and .git out entirely; a flat listing shows them.
    if (options.recursive && SKIPPED_DIRECTORIES.has(entry.name)) continue;
    yield { relative, name: entry.name, parent: dir, kind: "directory", isDirectory: true };
    if (!options.recursive) continue;
    // Bounded: every level is one more generator and one more open directory (thousands overflowed the stack).
    if (depth + 1 >= MAX_WALK_DEPTH) {
      options.skipped.push({ path: relative, reason: `${MAX_WALK_DEPTH} levels down, not entered` });
      continue;
    }
    let child: DirectoryRef;
    try {
      child = await openChildDirectory(dir, entry.name, options.realRoot, mode);
    } catch (error) {
      options.skipped.push({ path: relative, reason: reasonOf(error) });
      continue;
    }
    try {
      yield* walk(child, options, relative, depth + 1);
    } finally {
      await child.close();
    }
  }
}

/**
 * A recursive walk reads at most this many levels of directories: the one it starts in and those
 * down to `MAX_WALK_DEPTH - 1` levels below it. A directory `MAX_WALK_DEPTH` levels down is listed
 * and noted as skipped, not entered, so nothing below it is seen (each level holds its directory
 * open).
 */
export const MAX_WALK_DEPTH = 100;

/** At most this many skipped entries are kept in a result's details (the text shows fewer). */
export const MAX_SKIPPED_DETAILS = 1000;

/** Collects skipped entries with `prefix` put before their paths (to make them workspace-relative). */
export const skippedInto = (into: SkippedEntry[], prefix: string) => ({
  push: (entry: SkippedEntry) => into.push({ path: prefix + entry.path, reason: entry.reason }),
});

// eslint-disable-next-line no-control-regex
const MISREADABLE = /[\x00-\x1f\x7f-\x9f\u2028\u2029]|^"|@$/;
// eslint-disable-next-line no-control-regex
const UNESCAPED_BY_JSON = /[\x7f-\x9f\u2028\u2029]/g;

/**
 * A path as the tools show it to the model: as it is, or as a JSON string when it could be misread.
 * A name may hold anything but `/` and NUL: a line break in it would show as two entries (a crafted
 * name could forge lines), a file named `foo@` would read as the symlink `foo`, and a name that
 * starts with `"` would look quoted. Such a path is JSON-quoted (control characters, DEL, C1 and
 * the line separators escaped), and the listing's markers (`/`, `@`) go after the closing quote.
 */
export function shownPath(path: string): string {
  if (!MISREADABLE.test(path)) return path;
  return JSON.stringify(path).replace(UNESCAPED_BY_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** "path (reason)" lines for a result, at most `max` of them. */
export function describeSkipped(skipped: readonly SkippedEntry[], max = 20): string {
  if (skipped.length === 0) return "";
  const shown = skipped.slice(0, max).map((entry) => `${shownPath(entry.path)} (${entry.reason})`);
  const more = skipped.length > max ? `, … ${skipped.length - max} more` : "";
  return `\nskipped ${skipped.length} entr${skipped.length === 1 ? "y" : "ies"}: ${shown.join(", ")}${more}`;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error("Aborted");
}

function reasonOf(error: unknown): string {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ELOOP":
    case "ENOTDIR":
    case "EXDEV":
      return "changed during the walk, not entered";
    case "ENOENT":
      return "removed during the walk";
    case "ENAMETOOLONG":
      return "its path is too long, not entered";
    case "EMFILE":
    case "ENFILE":
      return "too many open files, not entered";
    default:
      return (error as Error | undefined)?.message ?? String(error);
  }
}

function specialKind(entry: Dirent): string {
  if (entry.isFIFO()) return "a FIFO, not read";
  if (entry.isSocket()) return "a socket, not read";
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return "a device, not read";
  return "not a regular file, not read";
}
