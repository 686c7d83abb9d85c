import type { ConfinementMode } from "./confined-open.js";

export interface WorkspaceToolOptions {
  /** The workspace root every path is confined to (default: `process.cwd()` when the tool is created). */
  cwd?: string;
  /**
   * Spread each call over at least this many milliseconds, reporting progress as it goes. For demos
   * on small repositories, where real calls finish too fast to see; default 0 (no delay).
   */
  minDurationMs?: number;
  /**
   * How opened files are checked to lie inside the workspace: `"proc"` (Linux: through
   * `/proc/self/fd`, race-free) or `"path"` (elsewhere: path and inode compared after the open).
   * Default: `"proc"` where `/proc/self/fd` exists.
   */
  confinement?: ConfinementMode;
  /**
   * Absolute paths no tool reads, writes or lists, even inside the workspace (`DeniedPathError`;
   * walks leave them out), e.g. where the terminal agent keeps its sessions when cwd is $HOME.
   */
  deniedPaths?: readonly string[];
}

export const rootOf = (options: WorkspaceToolOptions): string => options.cwd ?? process.cwd();
