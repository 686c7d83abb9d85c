/** Path confinement: every tool path resolves inside the working directory (the workspace root). */
import { realpathSync } from "node:fs";
import path from "node:path";

/** A tool input the tool refuses; its message is what the model sees. */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

/**
 * A path the tools were told never to touch (`WorkspaceToolOptions.deniedPaths`), e.g. the terminal
 * agent's session store when it lies inside the workspace: refused even though it is inside.
 */
export class DeniedPathError extends ToolInputError {
  override name = "DeniedPathError";
  constructor(
    readonly requested: string,
    /** The denied path that covers it (absolute). */
    readonly denied: string,
  ) {
    super(`Path "${requested}" is off limits to the tools (it holds the agent's own data); leave it out.`);
  }
}

/** Answers whether an absolute path lies in one of the denied paths (as given, or after symlinks). */
export interface DeniedPaths {
  /** The denied path covering `absolute` (lexically or by its real path), if any. */
  covering(absolute: string): string | undefined;
  /** Throws `DeniedPathError` when `absolute` (what `requested` resolved to) is covered. */
  refuse(requested: string, absolute: string): void;
  /** For a walk of the directory `start` (absolute): whether an entry (relative to it) is covered. Walks follow no links. */
  walkFilter(start: string): ((relative: string) => boolean) | undefined;
}

export function deniedPaths(paths: readonly string[] | undefined): DeniedPaths {
  const bases = [...new Set((paths ?? []).flatMap((denied) => [path.resolve(denied), realpathOfExistingPart(path.resolve(denied))]))];
  const coveringReal = (real: string) => bases.find((base) => isInside(base, real));
  const covering = (absolute: string) => (bases.length === 0 ? undefined : (coveringReal(absolute) ?? coveringReal(realpathOfExistingPart(absolute))));
  return {
    covering,
    refuse(requested, absolute) {
      const denied = covering(absolute);
      if (denied !== undefined) throw new DeniedPathError(requested, denied);
    },
    walkFilter(start) {
      if (bases.length === 0) return undefined;
      const realStart = realpathOfExistingPart(start);
      return (relative) => coveringReal(path.join(realStart, ...relative.split("/"))) !== undefined || coveringReal(path.join(start, ...relative.split("/"))) !== undefined;
    },
  };
}

/**
 * The longest absolute path the system opens (Linux's PATH_MAX, 4,096 bytes with the NUL; macOS's
 * is 1,024). A longer one cannot be resolved, so it is refused before any lookup: resolving a path
 * through thousands of nested directories costs one lookup per component and prefix.
 */
export const MAX_PATH_BYTES = process.platform === "darwin" ? 1024 : 4096;

/**
 * At most this many directories below the workspace root in a path. Resolving a path costs the
 * system a lookup per component and prefix (quadratic in the depth, synchronous here): a model that
 * built a tree thousands of levels deep could otherwise stall the process on one call.
 */
export const MAX_PATH_DEPTH = 256;

/** Directories no tool walks into. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(["node_modules", ".git"]);

/**
 * The absolute path of `requested` (relative to `root`, or absolute) if it lies inside `root`,
 * following symlinks of the part that exists. Throws `ToolInputError` for `..` escapes, absolute
 * paths elsewhere, symlinks that lead out, paths of `MAX_PATH_BYTES` or more, and paths more than
 * `MAX_PATH_DEPTH` levels below `root`.
 */
export function resolveInWorkspace(root: string, requested: string): string {
  if (typeof requested !== "string" || requested.trim() === "") throw new ToolInputError("A path is required.");
  if (requested.includes("\0")) throw new ToolInputError("The path contains a NUL character.");
  const base = path.resolve(root);
  const absolute = path.resolve(base, requested);
  if (!isInside(base, absolute)) {
    throw new ToolInputError(
      `Path "${requested}" is outside the working directory (${base}); only paths inside it are allowed.`,
    );
  }
  const bytes = Buffer.byteLength(absolute);
  if (bytes >= MAX_PATH_BYTES) {
    throw new ToolInputError(`The path is too long (its absolute path has ${bytes} bytes; the system's limit is ${MAX_PATH_BYTES}).`);
  }
  const depth = absolute === base ? 0 : path.relative(base, absolute).split(path.sep).length;
  if (depth > MAX_PATH_DEPTH) {
    throw new ToolInputError(`The path is too deep (${depth} levels below the working directory; at most ${MAX_PATH_DEPTH}).`);
  }
  const realBase = realpathOrSelf(base);
  const realTarget = realpathOfExistingPart(absolute);
  if (!isInside(realBase, realTarget)) {
    throw new ToolInputError(`Path "${requested}" leads outside the working directory through a symbolic link.`);
  }
  return absolute;
}

/** `target` relative to `root` with forward slashes (`.` for the root itself). */
export function workspaceRelative(root: string, target: string): string {
  const relative = path.relative(path.resolve(root), target);
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/** Whether `target` is `base` or lies under it (both absolute). */
export function isInside(base: string, target: string): boolean {
  const relative = path.relative(base, target);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The system's realpath: one call, where Node's JS `realpathSync` lstats every prefix (quadratic in the depth). */
const realpathNow = realpathSync.native;

export function realpathOrSelf(target: string): string {
  try {
    return realpathNow(target);
  } catch {
    return target;
  }
}

/**
 * The real path of the deepest existing ancestor of `target` (absolute and normalised, as
 * `path.resolve` gives it: a `..` is taken lexically), with the rest appended. Whether a prefix resolves
 * only turns false once along the path (a missing, non-directory or dangling component fails every
 * longer prefix too), so that ancestor is found by bisection: a few lookups, not one per missing name.
 */
export function realpathOfExistingPart(target: string): string {
  const { root } = path.parse(target);
  const names = target.slice(root.length).split(path.sep).filter((name) => name !== "");
  const prefix = (count: number) => path.join(root, ...names.slice(0, count));
  const resolve = (count: number): string | undefined => {
    try {
      return realpathNow(prefix(count));
    } catch {
      return undefined;
    }
  };
  // Invariant: `low` names resolve (the root always does); more than `high` do not.
  let low = 0;
  let high = names.length;
  let real = resolve(high);
  if (real !== undefined) return real;
  high--;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (resolve(middle) !== undefined) low = middle;
    else high = middle - 1;
  }
  real = resolve(low);
  return real === undefined ? target : path.join(real, ...names.slice(low));
}
