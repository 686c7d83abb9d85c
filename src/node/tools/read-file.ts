/** `read_file`: a text file of the workspace, whole or a range of lines, with line numbers. */
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { openFileForRead, readBounded, readFailure } from "./confined-open.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { createPacer } from "./pace.js";
import { reportProgress } from "./progress.js";
import { deniedPaths, resolveInWorkspace, ToolInputError, workspaceRelative } from "./workspace.js";

/** Files larger than this are refused (search_text reads less: MAX_SEARCH_FILE_BYTES). */
export const MAX_READ_BYTES = 5 * 1024 * 1024;
/** At most this many lines per call. */
export const MAX_READ_LINES = 2000;
/** A longer line is cut (a minified bundle is one line). */
export const MAX_READ_LINE_CHARS = 2000;
/** The numbered text returned stops at about this many characters (continue with startLine). */
export const MAX_READ_CHARS = 100_000;

export const readFileParameters = z.object({
  path: z.string().describe("File to read, relative to the working directory."),
  startLine: z.number().int().min(1).optional().describe("First line to return (1-based, inclusive). Default 1."),
  endLine: z.number().int().min(1).optional().describe(`Last line to return (inclusive). Default: the end, at most ${MAX_READ_LINES} lines.`),
});

export interface ReadFileDetails {
  path: string;
  startLine: number;
  endLine: number;
  totalLines: number;
  /** True when the range was cut at MAX_READ_LINES lines or MAX_READ_CHARS characters. */
  truncated: boolean;
}

export function readFileTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof readFileParameters>, ReadFileDetails> {
  const root = rootOf(options);
  const denied = deniedPaths(options.deniedPaths);
  const tool: ReturnType<typeof readFileTool> = defineTool({
    name: "read_file",
    label: "Read file",
    // R13, R81: it only reads, so a resume runs it again rather than answering "interrupted".
    replay: "safe",
    description:
      "Read a text file of the working directory. Lines are returned numbered (`  12│ text`). " +
      `Give startLine/endLine (1-based, inclusive) to read part of a long file; at most ${MAX_READ_LINES} lines per call.`,
    parameters: readFileParameters,
    async execute(_id, params, signal, onUpdate) {
      const file = resolveInWorkspace(root, params.path);
      denied.refuse(params.path, file);
      const shown = workspaceRelative(root, file);
      const opened = await openFileForRead(root, params.path, options.confinement).catch((error: Error) =>
        Promise.reject(/^No such file/.test(error.message) ? new ToolInputError(`No such file: ${params.path}`) : error),
      );
      // Not "use search_text": it reads less of a file (MAX_SEARCH_FILE_BYTES) and would refuse it too.
      const tooLarge = (size: string) => new ToolInputError(`${params.path} is too large to read (${size} bytes): read_file reads at most ${MAX_READ_BYTES} bytes of a file.`);
      let buffer: Buffer;
      try {
        if (opened.stats.size > MAX_READ_BYTES) {
          throw tooLarge(String(opened.stats.size));
        }
        // The size may change after fstat: the read itself is bounded too. A read that fails
        // (procfs's EINVAL, a disk's EIO) is the call's error, with its code.
        const read = await readBounded(opened.handle, MAX_READ_BYTES, signal, opened.stats.size).catch((error: unknown) => {
          throw signal?.aborted ? error : new ToolInputError(`${shown} ${readFailure(error)}`);
        });
        if (read.exceeded) {
          throw tooLarge(`more than ${MAX_READ_BYTES}`);
        }
        buffer = read.buffer;
      } finally {
        await opened.handle.close();
      }
      if (buffer.subarray(0, 8000).includes(0)) throw new ToolInputError(`${params.path} looks like a binary file; only text files can be read.`);
      const text = buffer.toString("utf8");
      const lines = text.split(/\r?\n/);
      if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
      const totalLines = text === "" ? 0 : lines.length;

      const startLine = params.startLine ?? 1;
      if (params.endLine !== undefined && params.endLine < startLine) {
        throw new ToolInputError(`endLine (${params.endLine}) is before startLine (${startLine}).`);
      }
      if (totalLines === 0) {
        return { content: [{ type: "text", text: `${shown} is empty.` }], details: { path: shown, startLine: 0, endLine: 0, totalLines: 0, truncated: false } };
      }
      if (startLine > totalLines) {
        throw new ToolInputError(`startLine ${startLine} is past the end of ${shown} (${totalLines} lines).`);
      }
      const wanted = Math.min(params.endLine ?? totalLines, totalLines);
      const endLine = Math.min(wanted, startLine + MAX_READ_LINES - 1);

      const pacer = createPacer(options.minDurationMs ?? 0, signal);
      const width = String(endLine).length;
      const out: string[] = [];
      const count = endLine - startLine + 1;
      const steps = Math.min(count, 10);
      let chars = 0;
      let lastLine = endLine;
      for (let line = startLine; line <= endLine; line++) {
        const numbered = `${String(line).padStart(width)}│ ${clipLine(lines[line - 1])}`;
        // Always at least one line, so that startLine always makes progress.
        if (out.length > 0 && chars + numbered.length > MAX_READ_CHARS) {
          lastLine = line - 1;
          break;
        }
        out.push(numbered);
        chars += numbered.length + 1;
        const done = line - startLine + 1;
        if (done % Math.ceil(count / steps) === 0 || done === count) {
          await pacer.step(done, count);
          reportProgress(onUpdate, `${done}/${count} lines`, { done, total: count, unit: "lines" });
        }
      }
      const cutByChars = lastLine < endLine;
      const truncated = endLine < wanted || cutByChars;
      const range = startLine === 1 && lastLine === totalLines ? `${totalLines} line${totalLines === 1 ? "" : "s"}` : `lines ${startLine}-${lastLine} of ${totalLines}`;
      const limit = cutByChars ? `${MAX_READ_CHARS} characters` : `${MAX_READ_LINES} lines`;
      const note = truncated ? `\n… (cut at ${limit}; continue with startLine ${lastLine + 1})` : "";
      return {
        content: [{ type: "text", text: `${shown} (${range})\n${out.join("\n")}${note}` }],
        details: { path: shown, startLine, endLine: lastLine, totalLines, truncated },
      };
    },
  });
  // SPEC R70: a read never conflicts with another call, so it may start while the model streams.
  tool.isConcurrencySafe = () => true;
  return tool;
}

function clipLine(line: string): string {
  return line.length > MAX_READ_LINE_CHARS ? `${line.slice(0, MAX_READ_LINE_CHARS)}… (${line.length - MAX_READ_LINE_CHARS} more characters on this line)` : line;
}
