/** `list_files`: the entries of a directory of the workspace, optionally recursive and glob-filtered. */
import { stat } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { globMatcher } from "./glob.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { createPacer, throttle } from "./pace.js";
import { reportProgress } from "./progress.js";
import { walk, type WalkEntry } from "./walk.js";
import { resolveInWorkspace, ToolInputError, workspaceRelative } from "./workspace.js";

export const listFilesParameters = z.object({
  path: z.string().default(".").describe("Directory to list, relative to the working directory."),
  recursive: z.boolean().default(false).describe("List subdirectories too (node_modules and .git are not entered)."),
  glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "src/**/*.test.ts".'),
  limit: z.number().int().min(1).max(5000).default(500).describe("Maximum number of entries returned."),
});

export interface ListFilesDetails {
  path: string;
  entries: string[];
  files: number;
  directories: number;
  truncated: boolean;
}

export function listFilesTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof listFilesParameters>, ListFilesDetails> {
  const root = rootOf(options);
  return defineTool({
    name: "list_files",
    label: "List files",
    description:
      "List the files and directories under a directory of the working directory (directories end with /). " +
      "Use recursive for a whole tree; node_modules and .git are never entered.",
    parameters: listFilesParameters,
    async execute(_id, params, signal, onUpdate) {
      const dir = resolveInWorkspace(root, params.path);
      const info = await stat(dir).catch(() => undefined);
      if (!info) throw new ToolInputError(`No such directory: ${params.path}`);
      if (!info.isDirectory()) throw new ToolInputError(`Not a directory: ${params.path} (use read_file for files)`);
      const matches = params.glob ? globMatcher(params.glob) : undefined;
      const shown = workspaceRelative(root, dir);
      const prefix = shown === "." ? "" : `${shown}/`;

      const collected: WalkEntry[] = [];
      for await (const entry of walk(dir, { recursive: params.recursive, signal })) collected.push(entry);
      const selected = collected.filter((entry) => entry.isDirectory ? !matches : !matches || matches(prefix + entry.relative));
      const truncated = selected.length > params.limit;
      const kept = selected.slice(0, params.limit);

      const pacer = createPacer(options.minDurationMs ?? 0, signal);
      const report = throttle(40);
      const entries: string[] = [];
      for (const [index, entry] of kept.entries()) {
        entries.push(prefix + entry.relative + (entry.isDirectory ? "/" : ""));
        await pacer.step(index + 1, kept.length);
        report(() => reportProgress(onUpdate, `${entries.length}/${kept.length} entries`, { done: entries.length, total: kept.length, unit: "entries" }));
      }
      const directories = kept.filter((entry) => entry.isDirectory).length;
      const files = kept.length - directories;
      const summary =
        `${shown}: ${files} file${files === 1 ? "" : "s"}, ${directories} director${directories === 1 ? "y" : "ies"}` +
        (truncated ? ` (first ${params.limit} of ${selected.length} entries)` : "");
      return {
        content: [{ type: "text", text: entries.length ? `${summary}\n${entries.join("\n")}` : `${summary}\n(empty)` }],
        details: { path: shown, entries, files, directories, truncated },
      };
    },
  });
}
