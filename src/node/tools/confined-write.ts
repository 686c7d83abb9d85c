/**
 * Writing a file of the workspace through the same discipline as reading (see confined-open.ts):
 * parent directories are opened (and created) one by one without following links, the file is
 * created exclusively (`O_CREAT|O_EXCL` never follows a link, dangling or not) or opened with
 * `O_NOFOLLOW`, its descriptor is checked (a regular file, inside the workspace), and only then is
 * a byte written. A file found outside after the open is one this call created: it is removed again.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { confirmLocation, defaultConfinementMode, fsError, kindOf, openDirectoryChain, realRootOf, type ConfinementMode, type DirectoryRef } from "./confined-open.js";
import { isInside, realpathOfExistingPart, resolveInWorkspace, ToolInputError } from "./workspace.js";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NONBLOCK;
const REPLACE_FLAGS = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK;

/** Creates or replaces `requested` with `content`; `created` tells which. */
export async function writeInWorkspace(
  root: string,
  requested: string,
  content: string,
  signal?: AbortSignal,
  mode: ConfinementMode = defaultConfinementMode(),
): Promise<{ created: boolean }> {
  const absolute = resolveInWorkspace(root, requested);
  if (absolute === path.resolve(root)) throw new ToolInputError(`${requested} is a directory.`);
  // U+FFFD is how a listing shows bytes that are not UTF-8: writing through such a name would make a
  // lookalike entry beside the real one (and hide it from the tools), so it is not done.
  if (path.relative(path.resolve(root), absolute).includes("\uFFFD")) {
    throw new ToolInputError(`${requested}: a name with U+FFFD (how a listing shows a name that is not UTF-8) cannot be written through; nothing was written.`);
  }
  const realRoot = await realRootOf(root);
  const realParent = realpathOfExistingPart(path.dirname(absolute));
  if (!isInside(realRoot, realParent)) throw new ToolInputError(`Path "${requested}" leads outside the working directory through a symbolic link.`);
  const name = path.basename(absolute);
  const relative = path.relative(realRoot, realParent);
  const components = relative === "" ? [] : relative.split(path.sep);

  let parent: DirectoryRef | undefined;
  let target: string;
  if (mode === "proc") {
    parent = await openDirectoryChain(realRoot, components, requested, true);
    target = `${parent.path}/${name}`;
  } else {
    await mkdir(realParent, { recursive: true }).catch((error) => Promise.reject(fsError(error, requested, true)));
    const now = await realpath(realParent).catch((error) => Promise.reject(fsError(error, requested, true)));
    if (now !== realParent) throw new ToolInputError(`Path "${requested}" changed while it was opened; nothing was written.`);
    target = path.join(realParent, name);
  }
  try {
    let handle: FileHandle;
    let created = true;
    try {
      handle = await open(target, CREATE_FLAGS, 0o666);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw fsError(error, requested);
      created = false;
      handle = await open(target, REPLACE_FLAGS).catch((reason) => Promise.reject(fsError(reason, requested)));
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new ToolInputError(`${requested} is not a regular file (${kindOf(stats)}); only regular files are written.`);
      try {
        await confirmLocation(handle, stats, realRoot, path.join(realParent, name), requested, mode);
      } catch (error) {
        // Remove what this call created outside, and only that (same inode), before any byte.
        const now = created ? await lstat(target).catch(() => undefined) : undefined;
        if (now && now.ino === stats.ino && now.dev === stats.dev) await unlink(target).catch(() => {});
        throw error;
      }
      if (!created) await handle.truncate(0);
      await handle.writeFile(content, { encoding: "utf8", signal });
      return { created };
    } finally {
      await handle.close();
    }
  } finally {
    await parent?.close();
  }
}
