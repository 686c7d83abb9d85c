/**
 * File names that are not UTF-8. `readdir` decodes them with U+FFFD in place of the bad bytes, so
 * `list_files` shows them that way and the model asks for that name, which does not exist. This
 * finds the entry the name was decoded from (when exactly one matches) as a Buffer path, which
 * `fs` opens by its real bytes.
 */
import { readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { ToolInputError } from "./workspace.js";

const REPLACEMENT = "\uFFFD";

/**
 * The real path of `absolute` (inside `root`) if its name was decoded lossily, else undefined.
 * Throws `ToolInputError` when the real file lies outside `root` (a symlink).
 */
export function resolveLossyName(root: string, absolute: string): Buffer | undefined {
  if (!absolute.includes(REPLACEMENT)) return undefined;
  const parts = path.relative(root, absolute).split(path.sep);
  let current: Buffer = Buffer.from(path.resolve(root));
  for (const part of parts) {
    let name: Buffer = Buffer.from(part);
    if (part.includes(REPLACEMENT)) {
      let entries: Buffer[];
      try {
        entries = readdirSync(current, { encoding: "buffer" });
      } catch {
        return undefined;
      }
      const matches = entries.filter((entry) => entry.toString("utf8") === part);
      if (matches.length !== 1) return undefined;
      name = matches[0];
    }
    current = Buffer.concat([current, Buffer.from(path.sep), name]);
  }
  let real: Buffer;
  try {
    // The native realpath keeps the bytes (the JS one decodes the path to a string).
    real = realpathSync.native(current, { encoding: "buffer" });
  } catch {
    return undefined;
  }
  const base = Buffer.from(realpathSync(path.resolve(root)) + path.sep);
  if (!real.subarray(0, base.length).equals(base)) throw new ToolInputError(`Path "${path.relative(root, absolute)}" leads outside the working directory through a symbolic link.`);
  return current;
}
