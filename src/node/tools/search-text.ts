/**
 * `search_text`: ripgrep-like search of the workspace's text files, in JS: an RE2 regular expression
 * (linear time: no pattern can stall the event loop) or a literal, an optional glob filter,
 * node_modules and .git skipped, symlinks not followed, reads and lines bounded, results capped,
 * progress reported per file through `onUpdate`.
 */
import { RE2JS } from "re2js";
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { openDirectory, openFileForRead, openFileIn, readBounded, readFailure, realRootOf, type OpenedFile } from "./confined-open.js";
import { globMatcher } from "./glob.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { createPacer, throttle } from "./pace.js";
import { reportProgress } from "./progress.js";
import { describeSkipped, MAX_SKIPPED_DETAILS, shownPath, skippedInto, throwIfAborted, walk, type SkippedEntry } from "./walk.js";
import { deniedPaths, resolveInWorkspace, ToolInputError, workspaceRelative } from "./workspace.js";

/** Files larger than this are skipped. */
export const MAX_SEARCH_FILE_BYTES = 1024 * 1024;
/** Only this much of a line is matched against the pattern (the rest is not searched). */
export const MAX_SEARCH_LINE_CHARS = 100_000;
/** The text shown for a matching line. */
const MAX_LINE_CHARS = 200;
/** Matching yields to the event loop after about this many characters, so that abort is honoured. */
const YIELD_EVERY_CHARS = 256 * 1024;

export const searchTextParameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe("A regular expression in RE2 syntax (JavaScript-like, without backreferences or lookaround), or literal text when literal is true."),
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
  /** Files whose text was matched against the pattern (not those in `skipped`). */
  filesSearched: number;
  /** True when the search stopped at maxResults. */
  truncated: boolean;
  /** Files and directories not searched: symlinks, unreadable, special, oversized or binary files. */
  skipped: SkippedEntry[];
}

export function searchTextTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof searchTextParameters>, SearchTextDetails> {
  const root = rootOf(options);
  const denied = deniedPaths(options.deniedPaths);
  const tool: ReturnType<typeof searchTextTool> = defineTool({
    name: "search_text",
    label: "Search text",
    // R13, R81: it only reads, so a resume runs it again rather than answering "interrupted".
    replay: "safe",
    description:
      "Search the text files of the working directory for a regular expression (RE2 syntax) or literal text, like ripgrep. " +
      "Returns matching lines as path:line: text. node_modules, .git and symbolic links are skipped; results are capped at maxResults.",
    parameters: searchTextParameters,
    async execute(_id, params, signal, onUpdate) {
      const regex = compilePattern(params.pattern, params.literal, params.ignoreCase);
      const anywhere = compilePattern(params.pattern, params.literal, params.ignoreCase, true);
      const start = resolveInWorkspace(root, params.path);
      denied.refuse(params.path, start);
      const matchesGlob = params.glob ? globMatcher(params.glob) : () => true;
      const shownStart = workspaceRelative(root, start);
      const prefix = shownStart === "." ? "" : `${shownStart}/`;

      const skipped: SkippedEntry[] = [];
      const dir = await openDirectory(root, params.path, options.confinement).catch((error: Error) => {
        if (/No such file/.test(error.message)) throw new ToolInputError(`No such file or directory: ${params.path}`);
        if (/not a directory/i.test(error.message)) return undefined; // a file: searched alone (or refused when opened)
        throw error;
      });
      const realRoot = await realRootOf(root);
      const deniedInWalk = denied.walkFilter(start);
      const walkOptions = (into: SkippedEntry[]) => ({ recursive: true, signal, realRoot, skipped: skippedInto(into, prefix), mode: options.confinement, denied: deniedInWalk });

      /** The files to search, each opened from its directory while the walk holds it open. */
      async function* files(): AsyncGenerator<{ shown: string; open: () => Promise<OpenedFile> }> {
        if (!dir) {
          yield { shown: shownStart, open: () => openFileForRead(root, params.path, options.confinement) };
          return;
        }
        for await (const entry of walk(dir, walkOptions(skipped))) {
          const shown = prefix + entry.relative;
          if (entry.kind === "symlink") skipped.push({ path: shown, reason: "a symbolic link, not followed" });
          else if (entry.kind === "file" && matchesGlob(shown)) {
            yield { shown, open: () => openFileIn(entry.parent, entry.name, realRoot, shown, options.confinement) };
          }
        }
      }

      try {
        // A first walk counts the files, for progress; the second reads them.
        let total = 1;
        if (dir) {
          total = 0;
          for await (const entry of walk(dir, walkOptions([]))) if (entry.kind === "file" && matchesGlob(prefix + entry.relative)) total++;
        }
        const pacer = createPacer(options.minDurationMs ?? 0, signal);
        const report = throttle(40);
        const matches: SearchMatch[] = [];
        const matchedFiles = new Set<string>();
        // Progress counts every file the walk gave; the summary only those whose text was matched
        // (a skipped file was not searched, and saying so would tell the model it holds no match).
        let visited = 0;
        let filesSearched = 0;
        let truncated = false;
        for await (const file of files()) {
          throwIfAborted(signal);
          // A single file named by the call is refused with its reason; one found by the walk is skipped.
          const text = await readText(file.shown, file.open, signal, dir ? skipped : undefined);
          visited++;
          total = Math.max(total, visited); // the tree may have grown since it was counted
          if (text !== undefined) {
            filesSearched++;
            truncated = await searchLines(text, file.shown);
          }
          await pacer.step(visited, total);
          report(
            () =>
              reportProgress(onUpdate, `${visited}/${total} files, ${matches.length} match${matches.length === 1 ? "" : "es"}`, {
                done: visited,
                total,
                unit: "files",
              }),
            visited === total,
          );
          if (truncated) break;
        }

        /** Adds the matching lines of one file; true when maxResults was reached. */
        async function searchLines(text: string, shown: string): Promise<boolean> {
          // One pass over the whole file first: a line that matches is a match of the file's text
          // read line by line (multiline, CRLF as LF), so a file without a hit needs no line split.
          if (!anywhere.test(text.replace(/\r\n/g, "\n"))) return false;
          const lines = text.split(/\r?\n/);
          let sinceYield = 0;
          for (let index = 0; index < lines.length; index++) {
            const line = lines[index].length > MAX_SEARCH_LINE_CHARS ? lines[index].slice(0, MAX_SEARCH_LINE_CHARS) : lines[index];
            sinceYield += line.length;
            if (sinceYield > YIELD_EVERY_CHARS) {
              sinceYield = 0;
              await new Promise((resolve) => setImmediate(resolve));
              throwIfAborted(signal);
            }
            if (!regex.test(line)) continue;
            if (matches.length >= params.maxResults) return true;
            matches.push({ path: shown, line: index + 1, text: clip(line.trim()) });
            matchedFiles.add(shown);
          }
          return false;
        }

        const summary =
          `${matches.length}${truncated ? "+" : ""} match${matches.length === 1 ? "" : "es"} in ${matchedFiles.size} file${matchedFiles.size === 1 ? "" : "s"} ` +
          `(${filesSearched} searched)` +
          (truncated ? `; stopped at maxResults=${params.maxResults}, narrow the search with path or glob` : "");
        // A path that could forge a line is quoted as the listing quotes it.
        const lines = matches.map((match) => `${shownPath(match.path)}:${match.line}: ${match.text}`);
        return {
          content: [{ type: "text", text: [summary, ...lines].join("\n") + describeSkipped(skipped) }],
          details: { pattern: params.pattern, matches, files: matchedFiles.size, filesSearched, truncated, skipped: skipped.slice(0, MAX_SKIPPED_DETAILS) },
        };
      } finally {
        await dir?.close();
      }
    },
  });
  // SPEC R70: a read never conflicts with another call, so it may start while the model streams.
  tool.isConcurrencySafe = () => true;
  return tool;
}

/** RE2 (linear time); backreferences and lookaround, which need backtracking, get a clear error. */
export function compilePattern(pattern: string, literal: boolean, ignoreCase: boolean, multiline = false): RE2JS {
  const source = literal ? RE2JS.quote(pattern) : pattern;
  try {
    return RE2JS.compile(source, (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (multiline ? RE2JS.MULTILINE : 0));
  } catch (error) {
    if (/\\[1-9]|\(\?<?[=!]/.test(pattern)) {
      throw new ToolInputError(
        `Unsupported regular expression ${JSON.stringify(pattern)}: search_text uses RE2 syntax, which runs in linear time and has no ` +
          "backreferences (\\1) or lookaround ((?=…), (?!…), (?<=…), (?<!…)). Search for a simpler pattern and filter the lines, or set literal: true.",
      );
    }
    throw new ToolInputError(`Invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}. Set literal: true to search for the text as is.`);
  }
}

/**
 * The file's text, or undefined when it is not searched (when `skipped` is given (files found by a
 * walk): oversized, binary, or a file that cannot be opened or read: noted in `skipped`). A file
 * named by the call throws instead, a `ToolInputError` for a read that fails, an oversized or a
 * binary file. Only an abort goes through as it is.
 */
async function readText(shown: string, open: () => Promise<OpenedFile>, signal: AbortSignal | undefined, skipped: SkippedEntry[] | undefined): Promise<string | undefined> {
  let opened: OpenedFile;
  try {
    opened = await open();
  } catch (error) {
    throwIfAborted(signal);
    if (!skipped) throw error;
    // One file the walk found must not fail the search: whatever stops its open, it is noted.
    skipped.push({ path: shown, reason: error instanceof ToolInputError ? error.message : readFailure(error) });
    return undefined;
  }
  // A file named by the call and not searched is the call's error: "0 matches" would read as "not in it".
  const tooLarge = (size: string) => new ToolInputError(`${shown} is too large to search (${size} bytes): search_text reads at most ${MAX_SEARCH_FILE_BYTES} bytes of a file.`);
  try {
    if (opened.stats.size > MAX_SEARCH_FILE_BYTES) {
      if (!skipped) throw tooLarge(String(opened.stats.size));
      skipped.push({ path: shown, reason: `larger than ${MAX_SEARCH_FILE_BYTES} bytes` });
      return undefined;
    }
    let read: Awaited<ReturnType<typeof readBounded>>;
    try {
      read = await readBounded(opened.handle, MAX_SEARCH_FILE_BYTES, signal, opened.stats.size);
    } catch (error) {
      throwIfAborted(signal);
      // A regular file whose read fails (procfs's EINVAL, a disk's EIO): noted, or the call's reason.
      if (!skipped) throw new ToolInputError(`${shown} ${readFailure(error)}`);
      skipped.push({ path: shown, reason: readFailure(error) });
      return undefined;
    }
    if (read.exceeded) {
      if (!skipped) throw tooLarge(`more than ${MAX_SEARCH_FILE_BYTES}`);
      skipped.push({ path: shown, reason: `larger than ${MAX_SEARCH_FILE_BYTES} bytes` });
      return undefined;
    }
    // A NUL in the first 8,000 bytes, as git decides. Its text is never matched, so it is not
    // counted as searched: "0 matches" must not say that a binary file lacks the pattern.
    if (read.buffer.subarray(0, 8000).includes(0)) {
      if (!skipped) throw new ToolInputError(`${shown} looks like a binary file; only text files are searched.`);
      skipped.push({ path: shown, reason: "binary" });
      return undefined;
    }
    return read.buffer.toString("utf8");
  } finally {
    await opened.handle.close();
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}
