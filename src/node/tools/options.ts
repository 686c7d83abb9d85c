export interface WorkspaceToolOptions {
  /** The workspace root every path is confined to (default: `process.cwd()` when the tool is created). */
  cwd?: string;
  /**
   * Spread each call over at least this many milliseconds, reporting progress as it goes. For demos
   * on small repositories, where real calls finish too fast to see; default 0 (no delay).
   */
  minDurationMs?: number;
}

export const rootOf = (options: WorkspaceToolOptions): string => options.cwd ?? process.cwd();
