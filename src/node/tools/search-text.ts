/**
 * `search_text`: ripgrep-like search of the workspace's text files, in JS: a regular expression or
 * a literal, an optional glob filter, node_modules and .git skipped, results capped, progress
 * reported per file through `onUpdate`.
 */
import { readFile, stat } from "node:fs/promises";
import { resolveLossyName } from "./lossy-name.js";
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { globMatcher } from "./glob.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { createPacer, throttle } from "./pace.js";
import { reportProgress } from "./progress.js";
import { throwIfAborted, walk } from "./walk.js";
import { resolveInWorkspace, ToolInputError, workspaceRelative } from "./workspace.js";

/** Files larger than this are skipped. */
export const MAX_SEARCH_FILE_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 200;

export const searchTextParameters = z.object({
  pattern: z.string().min(1).describe("A JavaScript regular expression, or literal text when literal is true."),
  literal: z.boolean().default(false).describe("Treat pattern as plain text, not a regular expression."),
  path: z.string().default(".").describe("File or directory to search, relative to the working directory."),
  glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**".'),
  ignoreCase: z.boolean().default(false).describe("Case-insensitive matching."),
  maxResults: z.number().int().min(1).max(1000).default(100).describe("Stop after this many matching lines."),
});

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

export interface SearchTextDetails {
  pattern: string;
  matches: SearchMatch[];
  /** Files with at least one match. */
  files: number;
  filesSearched: number;
  /** True when the search stopped at maxResults. */
  truncated: boolean;
}

export function searchTextTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof searchTextParameters>, SearchTextDetails> {
  const root = rootOf(options);
  return defineTool({
    name: "search_text",
    label: "Search text",
    description:
      "Search the text files of the working directory for a regular expression (or literal text), like ripgrep. " +
      "Returns matching lines as path:line: text. node_modules and .git are skipped; results are capped at maxResults.",
    parameters: searchTextParameters,
    async execute(_id, params, signal, onUpdate) {
      let regex: RegExp;
      try {
        const source = params.literal ? params.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : params.pattern;
        regex = new RegExp(source, params.ignoreCase ? "i" : "");
      } catch (error) {
        throw new ToolInputError(`Invalid regular expression ${JSON.stringify(params.pattern)}: ${(error as Error).message}. Set literal: true to search for the text as is.`);
      }
      const start = resolveInWorkspace(root, params.path);
      const info = await stat(start).catch(() => undefined);
      if (!info) throw new ToolInputError(`No such file or directory: ${params.path}`);
      const matchesGlob = params.glob ? globMatcher(params.glob) : () => true;

      const candidates: string[] = [];
      if (info.isDirectory()) {
        for await (const entry of walk(start, { recursive: true, signal })) {
          if (!entry.isDirectory && matchesGlob(workspaceRelative(root, entry.absolute))) candidates.push(entry.absolute);
        }
      } else candidates.push(start);

      const pacer = createPacer(options.minDurationMs ?? 0, signal);
      const report = throttle(40);
      const matches: SearchMatch[] = [];
      const matchedFiles = new Set<string>();
      let filesSearched = 0;
      let truncated = false;
      for (const file of candidates) {
        throwIfAborted(signal);
        const shown = workspaceRelative(root, file);
        const text = await readText(file, root);
        filesSearched++;
        if (text !== undefined) {
          const lines = text.split(/\r?\n/);
          for (let index = 0; index < lines.length; index++) {
            if (!regex.test(lines[index])) continue;
            if (matches.length >= params.maxResults) {
              truncated = true;
              break;
            }
            matches.push({ path: shown, line: index + 1, text: clip(lines[index].trim()) });
            matchedFiles.add(shown);
          }
        }
        await pacer.step(filesSearched, candidates.length);
        report(
          () =>
            reportProgress(onUpdate, `${filesSearched}/${candidates.length} files, ${matches.length} match${matches.length === 1 ? "" : "es"}`, {
              done: filesSearched,
              total: candidates.length,
              unit: "files",
            }),
          filesSearched === candidates.length,
        );
        if (truncated) break;
      }

      const summary =
        `${matches.length}${truncated ? "+" : ""} match${matches.length === 1 ? "" : "es"} in ${matchedFiles.size} file${matchedFiles.size === 1 ? "" : "s"} ` +
        `(${filesSearched} searched)` +
        (truncated ? `; stopped at maxResults=${params.maxResults}, narrow the search with path or glob` : "");
      const lines = matches.map((match) => `${match.path}:${match.line}: ${match.text}`);
      return {
        content: [{ type: "text", text: [summary, ...lines].join("\n") }],
        details: { pattern: params.pattern, matches, files: matchedFiles.size, filesSearched, truncated },
      };
    },
  });
}

/** The file's text, or undefined for binary or oversized files. */
async function readText(path: string, root: string): Promise<string | undefined> {
  try {
    // A name that is not UTF-8 was decoded with U+FFFD by the walk: open it by its real bytes.
    const file = (await stat(path).catch(() => undefined)) ? path : (resolveLossyName(root, path) ?? path);
    const info = await stat(file);
    if (info.size > MAX_SEARCH_FILE_BYTES) return undefined;
    const buffer = await readFile(file);
    if (buffer.subarray(0, 8000).includes(0)) return undefined;
    return buffer.toString("utf8");
  } catch {
    return undefined;
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}
