/** `read_file`: a text file of the workspace, whole or a range of lines, with line numbers. */
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { resolveLossyName } from "./lossy-name.js";
import { createPacer } from "./pace.js";
import { reportProgress } from "./progress.js";
import { resolveInWorkspace, ToolInputError, workspaceRelative } from "./workspace.js";

/** Files larger than this are refused (use search_text to find what you need). */
export const MAX_READ_BYTES = 5 * 1024 * 1024;
/** At most this many lines per call. */
export const MAX_READ_LINES = 2000;

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
  /** True when the range was cut at MAX_READ_LINES. */
  truncated: boolean;
}

export function readFileTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof readFileParameters>, ReadFileDetails> {
  const root = rootOf(options);
  return defineTool({
    name: "read_file",
    label: "Read file",
    description:
      "Read a text file of the working directory. Lines are returned numbered (`  12│ text`). " +
      `Give startLine/endLine (1-based, inclusive) to read part of a long file; at most ${MAX_READ_LINES} lines per call.`,
    parameters: readFileParameters,
    async execute(_id, params, signal, onUpdate) {
      const resolved = resolveInWorkspace(root, params.path);
      const shown = workspaceRelative(root, resolved);
      // A name list_files showed with U+FFFD (not UTF-8) is opened by its real bytes.
      const file = (await stat(resolved).catch(() => undefined)) ? resolved : (resolveLossyName(root, resolved) ?? resolved);
      const info = await stat(file).catch(() => undefined);
      if (!info) throw new ToolInputError(`No such file: ${params.path}`);
      if (info.isDirectory()) throw new ToolInputError(`${params.path} is a directory (use list_files)`);
      if (info.size > MAX_READ_BYTES) {
        throw new ToolInputError(`${params.path} is too large to read (${info.size} bytes); use search_text to find the lines you need.`);
      }
      const buffer = await readFile(file, { signal });
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
      const truncated = endLine < wanted;

      const pacer = createPacer(options.minDurationMs ?? 0, signal);
      const width = String(endLine).length;
      const out: string[] = [];
      const count = endLine - startLine + 1;
      const steps = Math.min(count, 10);
      for (let line = startLine; line <= endLine; line++) {
        out.push(`${String(line).padStart(width)}│ ${lines[line - 1]}`);
        const done = line - startLine + 1;
        if (done % Math.ceil(count / steps) === 0 || done === count) {
          await pacer.step(done, count);
          reportProgress(onUpdate, `${done}/${count} lines`, { done, total: count, unit: "lines" });
        }
      }
      const range = startLine === 1 && endLine === totalLines ? `${totalLines} line${totalLines === 1 ? "" : "s"}` : `lines ${startLine}-${endLine} of ${totalLines}`;
      const note = truncated ? `\n… (cut at ${MAX_READ_LINES} lines; continue with startLine ${endLine + 1})` : "";
      return {
        content: [{ type: "text", text: `${shown} (${range})\n${out.join("\n")}${note}` }],
        details: { path: shown, startLine, endLine, totalLines, truncated },
      };
    },
  });
}
