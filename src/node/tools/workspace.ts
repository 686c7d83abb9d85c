/** Path confinement: every tool path resolves inside the working directory (the workspace root). */
import { realpathSync } from "node:fs";
import path from "node:path";

/** A tool input the tool refuses; its message is what the model sees. */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

/** Directories no tool walks into. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(["node_modules", ".git"]);

/**
 * The absolute path of `requested` (relative to `root`, or absolute) if it lies inside `root`,
 * following symlinks of the part that exists. Throws `ToolInputError` for `..` escapes, absolute
 * paths elsewhere, and symlinks that lead out.
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

export function realpathOrSelf(target: string): string {
  try {
    return realpathSync(target);
  } catch {
    return target;
  }
}

/** The real path of the deepest existing ancestor, with the rest appended. */
export function realpathOfExistingPart(target: string): string {
  let existing = target;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(existing), ...rest.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return target;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}
