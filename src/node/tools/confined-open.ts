/**
 * Opening what a path names, checked on what was actually opened (not on the path string, which
 * another process can change between a check and the open).
 *
 * - Final components are opened with `O_NOFOLLOW` (a symlink swapped in is refused) and `O_NONBLOCK`
 *   (opening a FIFO is what blocks), then `fstat`ed: anything but a regular file or directory is
 *   refused before a byte is read.
 * - `"proc"` mode (Linux): Node has no `openat`, but a path through `/proc/self/fd/N/` resolves
 *   relative to the open directory N, which is `openat` in effect. Every component is opened that way
 *   from the real workspace root with `O_NOFOLLOW`, and the opened descriptor's location (readlink of
 *   `/proc/self/fd/N`) is confirmed inside the root: no swap of a file or a directory can make a read
 *   or a write land outside.
 * - `"path"` mode (macOS, Windows, no `/proc`): the real path is opened with `O_NOFOLLOW` (where the
 *   platform has it), and after the open the path's real location and inode are compared with the
 *   descriptor's. This closes final-link swaps and special files; an intermediate directory swapped
 *   and swapped back between the open and the check is not caught (docs/guides/cli.md: Workspace confinement).
 */
import { constants, existsSync, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { isInside, realpathOfExistingPart, resolveInWorkspace, ToolInputError } from "./workspace.js";

export type ConfinementMode = "proc" | "path";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIRECTORY_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

let detected: ConfinementMode | undefined;
/** `"proc"` where `/proc/self/fd` exists (Linux), else `"path"`. */
export function defaultConfinementMode(): ConfinementMode {
  detected ??= process.platform === "linux" && existsSync("/proc/self/fd") ? "proc" : "path";
  return detected;
}

/** A directory to list and descend from: `path` names it for readdir and for joining child names. */
export interface DirectoryRef {
  path: string;
  close(): Promise<void>;
}

export interface OpenedFile {
  handle: FileHandle;
  stats: Stats;
}

const fdPath = (handle: FileHandle) => `/proc/self/fd/${handle.fd}`;

/** The real workspace root and the components from it to `requested`'s real location. */
export async function locate(root: string, requested: string): Promise<{ realRoot: string; components: string[] }> {
  const absolute = resolveInWorkspace(root, requested);
  const realRoot = await realRootOf(root);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    // A name shown with U+FFFD (not UTF-8 on disk) does not exist as a string: locate the deepest
    // directory that does, and let the opens find the rest by their bytes (each checked as usual).
    // A link named in a call is followed when it stays inside: ELOOP here is a loop, not a link refused.
    if ((error as NodeJS.ErrnoException).code === "ELOOP") {
      throw new ToolInputError(`Path "${requested}" goes through a symbolic link loop (too many levels of links); nothing was read or written.`);
    }
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !absolute.includes("\uFFFD")) throw fsError(error, requested);
    real = realpathOfExistingPart(absolute);
  }
  if (!isInside(realRoot, real)) throw new ToolInputError(`Path "${requested}" leads outside the working directory through a symbolic link.`);
  const relative = path.relative(realRoot, real);
  return { realRoot, components: relative === "" ? [] : relative.split(path.sep) };
}

/** The workspace root's real path; a missing root is a clear error, not a raw ENOENT. */
export async function realRootOf(root: string): Promise<string> {
  try {
    return await realpath(root);
  } catch (error) {
    throw new ToolInputError(`The working directory ${root} cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}

/** A regular file of the workspace, opened for reading. */
export async function openFileForRead(root: string, requested: string, mode = defaultConfinementMode()): Promise<OpenedFile> {
  const { realRoot, components } = await locate(root, requested);
  if (components.length === 0) throw new ToolInputError(`${requested} is a directory (use list_files)`);
  const parent =
    mode === "proc"
      ? await openDirectoryChain(realRoot, components.slice(0, -1), requested)
      : { path: path.join(realRoot, ...components.slice(0, -1)), close: async () => {} };
  try {
    return await openFileIn(parent, components.at(-1)!, realRoot, requested, mode);
  } finally {
    await parent.close();
  }
}

/** The regular file `name` of the open directory `parent`, opened for reading and checked. */
export async function openFileIn(parent: DirectoryRef, name: string, realRoot: string, requested: string, mode = defaultConfinementMode()): Promise<OpenedFile> {
  const target = mode === "proc" ? `${parent.path}/${name}` : path.join(parent.path, name);
  const handle = await openEntry(parent.path, name, target, READ_FLAGS, requested).catch((error) => Promise.reject(fsError(error, requested)));
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new ToolInputError(`${requested} is a directory (use list_files)`);
    if (!stats.isFile()) throw new ToolInputError(`${requested} is not a regular file (${kindOf(stats)}); only regular files are read.`);
    await confirmLocation(handle, stats, realRoot, path.join(parent.path, name), requested, mode);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** A directory of the workspace, opened for listing. */
export async function openDirectory(root: string, requested: string, mode = defaultConfinementMode()): Promise<DirectoryRef> {
  const { realRoot, components } = await locate(root, requested);
  if (mode === "path") {
    const real = path.join(realRoot, ...components);
    const stats = await lstat(real).catch((error) => Promise.reject(fsError(error, requested)));
    if (!stats.isDirectory()) throw new ToolInputError(`Not a directory: ${requested} (use read_file for files)`);
    return { path: real, close: async () => {} };
  }
  return openDirectoryChain(realRoot, components, requested);
}

/**
 * The subdirectory `name` of `parent`, not following a symlink. In `"proc"` mode its location is
 * confirmed inside `realRoot` (a directory moved out while the walk holds it is not entered).
 */
export async function openChildDirectory(parent: DirectoryRef, name: string, realRoot: string, mode = defaultConfinementMode()): Promise<DirectoryRef> {
  if (mode === "path") {
    const child = path.join(parent.path, name);
    if (!(await lstat(child)).isDirectory()) throw Object.assign(new Error(`${child} is no longer a directory`), { code: "ENOTDIR" });
    return { path: child, close: async () => {} };
  }
  const handle = await openEntry(parent.path, name, `${parent.path}/${name}`, DIRECTORY_FLAGS, name);
  const ref = { path: fdPath(handle), close: () => handle.close() };
  if (!isInside(realRoot, await readlink(ref.path).catch(() => "/"))) {
    await ref.close();
    throw Object.assign(new Error(`${name} moved outside the working directory`), { code: "EXDEV" });
  }
  return ref;
}

/** Entries of an open directory, with their types. */
export const readDirectory = (dir: DirectoryRef) => readdir(dir.path, { withFileTypes: true });

/**
 * Opens `components` one by one from `realRoot`, never following a symlink ("proc" mode); with
 * `create`, a missing one is made inside the directory already open.
 */
export async function openDirectoryChain(realRoot: string, components: readonly string[], requested: string, create = false): Promise<DirectoryRef> {
  let handle = await open(realRoot, DIRECTORY_FLAGS);
  try {
    for (const component of components) {
      const child = `${fdPath(handle)}/${component}`;
      if (create) await mkdir(child).catch((error: NodeJS.ErrnoException) => (error.code === "EEXIST" ? undefined : Promise.reject(fsError(error, requested, true))));
      const next = await openEntry(fdPath(handle), component, child, DIRECTORY_FLAGS, requested).catch((error) => Promise.reject(fsError(error, requested, true)));
      await handle.close();
      handle = next;
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  const opened = handle;
  return { path: fdPath(opened), close: () => opened.close() };
}

/** Refuses a descriptor whose real location is not inside the workspace. */
export async function confirmLocation(handle: FileHandle, stats: Stats, realRoot: string, realPath: string, requested: string, mode: ConfinementMode): Promise<void> {
  const outside = new ToolInputError(`Path "${requested}" changed while it was opened and now leads outside the working directory; nothing was read or written.`);
  if (mode === "proc") {
    const location = await readlink(fdPath(handle)).catch(() => undefined);
    if (location === undefined || !isInside(realRoot, location)) throw outside;
    return;
  }
  // No way to ask where a descriptor is: the path must still resolve, inside, to the same inode, and
  // resolve the same after that inode was looked up (narrows, does not close, a directory swap).
  const now = await realpath(realPath).catch(() => undefined);
  const current = now === undefined ? undefined : await lstat(now).catch(() => undefined);
  const again = current && (await realpath(realPath).catch(() => undefined));
  if (now === undefined || again !== now || !isInside(realRoot, now) || !current || current.ino !== stats.ino || current.dev !== stats.dev) throw outside;
}

/** A filesystem error as the message the model sees. */
export function fsError(error: unknown, requested: string, intermediate = false): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return new ToolInputError(`No such file or directory: ${requested}`);
    case "ELOOP":
      return new ToolInputError(
        intermediate
          ? `Path "${requested}" changed while it was opened (a directory became a symbolic link); nothing was read or written.`
          : `${requested} is a symbolic link; links are not followed here (use the path of its target).`,
      );
    case "ENOTDIR":
      return new ToolInputError(`Path "${requested}" goes through something that is not a directory.`);
    case "EISDIR":
      return new ToolInputError(`${requested} is a directory.`);
    case "ENXIO":
      return new ToolInputError(`${requested} is not a regular file (a FIFO or socket); only regular files are read or written.`);
    case "EACCES":
    case "EPERM":
      return new ToolInputError(`Permission denied: ${requested}`);
    case "ENAMETOOLONG":
      return new ToolInputError(`The path is too long: ${requested.length > 200 ? `${requested.slice(0, 200)}…` : requested}`);
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}

export function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isDirectory()) return "a directory";
  return "not a regular file";
}

/** Why a file that opened could not be read, for the model: the error's code (procfs's EINVAL, a disk's EIO), not the system's raw message. */
export function readFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return `could not be read: ${code ?? (error instanceof Error ? error.message : String(error))}`;
}

/** Reads at most `maxBytes` (one more tells that the file is longer), checking `signal` between chunks. */
export async function readBounded(handle: FileHandle, maxBytes: number, signal?: AbortSignal, sizeHint = 0): Promise<{ buffer: Buffer; exceeded: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  // The first chunk fits the size fstat reported (plus one byte, to see growth): small files cost little.
  let want = Math.min(sizeHint + 1, 256 * 1024);
  while (length <= maxBytes) {
    if (signal?.aborted) throw new Error("Aborted");
    const chunk = Buffer.allocUnsafe(Math.min(want, maxBytes + 1 - length));
    want = 256 * 1024;
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
    chunks.push(chunk.subarray(0, bytesRead));
    length += bytesRead;
    // A regular file reads short only at its end (as fs.readFile assumes).
    if (bytesRead < chunk.length) break;
  }
  const buffer = Buffer.concat(chunks, length);
  return { buffer: buffer.subarray(0, Math.min(length, maxBytes)), exceeded: length > maxBytes };
}

/**
 * Opens the entry `name` of `directory` (`target` is its path) with `flags`. A name with U+FFFD (a
 * listing shows bytes that are not UTF-8 so) is looked up among the entries' bytes: the one entry
 * shown as `name` (a literal U+FFFD name included) is opened by its real bytes, with the same flags
 * and checks (a symlink is still refused); two entries shown alike are refused, never one picked.
 */
async function openEntry(directory: string, name: string, target: string, flags: number, requested: string): Promise<FileHandle> {
  if (!name.includes("\uFFFD")) return open(target, flags);
  const entries = await readdir(directory, { encoding: "buffer" }).catch(() => [] as Buffer[]);
  const matches = entries.filter((entry) => entry.toString("utf8") === name);
  if (matches.length > 1) {
    throw new ToolInputError(`${requested}: its name is not UTF-8 and more than one entry of its directory is shown as "${name}"; it cannot be opened by that name.`);
  }
  return matches.length === 1 ? open(Buffer.concat([Buffer.from(`${directory}${path.sep}`), matches[0]!]), flags) : open(target, flags);
}
