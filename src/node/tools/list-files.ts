/** `list_files`: the entries of a directory of the workspace, optionally recursive and glob-filtered. */
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { openDirectory, realRootOf } from "./confined-open.js";
import { globMatcher } from "./glob.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { createPacer, throttle } from "./pace.js";
import { reportProgress } from "./progress.js";
import { describeSkipped, MAX_SKIPPED_DETAILS, shownPath, skippedInto, walk, type SkippedEntry, type WalkEntry } from "./walk.js";
import { deniedPaths, resolveInWorkspace, ToolInputError, workspaceRelative } from "./workspace.js";

export const listFilesParameters = z.object({
  path: z.string().default(".").describe("Directory to list, relative to the working directory."),
  recursive: z.boolean().default(false).describe("List subdirectories too (node_modules and .git are not entered)."),
  glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "src/**/*.test.ts".'),
  limit: z.number().int().min(1).max(5000).default(500).describe("Maximum number of entries returned."),
});

/** The listing stops at about this many characters (as read_file's MAX_READ_CHARS): names can be long and paths deep. */
export const MAX_LIST_CHARS = 100_000;

export interface ListFilesDetails {
  path: string;
  /** The listing's lines: each path as `shownPath` shows it (JSON-quoted when it could be misread), `/` after a directory, `@` after a symlink. */
  entries: string[];
  files: number;
  directories: number;
  truncated: boolean;
  /** Entries not listed or not entered: unreadable directories, FIFOs, sockets, devices. */
  skipped: SkippedEntry[];
}

export function listFilesTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof listFilesParameters>, ListFilesDetails> {
  const root = rootOf(options);
  const denied = deniedPaths(options.deniedPaths);
  const tool: ReturnType<typeof listFilesTool> = defineTool({
    name: "list_files",
    label: "List files",
    // R13, R81: it only reads, so a resume runs it again rather than answering "interrupted".
    replay: "safe",
    description:
      "List the files and directories under a directory of the working directory (directories end with /). " +
      "Use recursive for a whole tree; node_modules and .git are never entered. Symbolic links end with @ and are not followed. " +
      'A path in double quotes is a JSON string (its name holds a line break, another control character, a leading " or a trailing @): decode it to use it.',
    parameters: listFilesParameters,
    async execute(_id, params, signal, onUpdate) {
      const dir = resolveInWorkspace(root, params.path);
      denied.refuse(params.path, dir);
      const matches = params.glob ? globMatcher(params.glob) : undefined;
      const shown = workspaceRelative(root, dir);
      const prefix = shown === "." ? "" : `${shown}/`;
      const opened = await openDirectory(root, params.path, options.confinement).catch((error: Error) =>
        Promise.reject(
          /^No such file/.test(error.message)
            ? new ToolInputError(`No such directory: ${params.path}`)
            : /ENOTDIR|not a directory|Not a directory/.test(`${(error as NodeJS.ErrnoException).code} ${error.message}`)
              ? new ToolInputError(`Not a directory: ${params.path} (use read_file for files)`)
              : error,
        ),
      );

      const collected: WalkEntry[] = [];
      const skipped: SkippedEntry[] = [];
      try {
        const walking = walk(opened, { recursive: params.recursive, signal, realRoot: await realRootOf(root), skipped: skippedInto(skipped, prefix), mode: options.confinement, denied: denied.walkFilter(dir) });
        for await (const entry of walking) collected.push(entry);
      } finally {
        await opened.close();
      }
      const selected = collected.filter((entry) => entry.isDirectory ? !matches : !matches || matches(prefix + entry.relative));
      let kept = selected.slice(0, params.limit);

      const pacer = createPacer(options.minDurationMs ?? 0, signal);
      const report = throttle(40);
      const entries: string[] = [];
      let chars = 0;
      for (const [index, entry] of kept.entries()) {
        const line = shownPath(prefix + entry.relative) + (entry.isDirectory ? "/" : entry.kind === "symlink" ? "@" : "");
        // Always at least one entry; then no more than MAX_LIST_CHARS characters.
        if (entries.length > 0 && chars + line.length > MAX_LIST_CHARS) break;
        entries.push(line);
        chars += line.length + 1;
        await pacer.step(index + 1, kept.length);
        report(() => reportProgress(onUpdate, `${entries.length}/${kept.length} entries`, { done: entries.length, total: kept.length, unit: "entries" }));
      }
      const cutByChars = entries.length < kept.length;
      kept = kept.slice(0, entries.length);
      const truncated = selected.length > kept.length;
      const directories = kept.filter((entry) => entry.isDirectory).length;
      const files = kept.length - directories;
      const summary =
        `${shown}: ${files} file${files === 1 ? "" : "s"}, ${directories} director${directories === 1 ? "y" : "ies"}` +
        (truncated ? ` (first ${kept.length} of ${selected.length} entries${cutByChars ? `, cut at ${MAX_LIST_CHARS} characters; narrow with path or glob` : ""})` : "") +
        (kept.some((entry) => entry.kind === "symlink") ? " (@ marks a symbolic link, not followed)" : "") +
        (entries.some((entry) => entry.startsWith('"')) ? " (a quoted path is a JSON string)" : "");
      const body = entries.length ? entries.join("\n") : "(empty)";
      return {
        content: [{ type: "text", text: `${summary}\n${body}${describeSkipped(skipped)}` }],
        details: { path: shown, entries, files, directories, truncated, skipped: skipped.slice(0, MAX_SKIPPED_DETAILS) },
      };
    },
  });
  // SPEC R70: a read never conflicts with another call, so it may start while the model streams.
  tool.isConcurrencySafe = () => true;
  return tool;
}
