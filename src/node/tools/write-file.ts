/**
 * `write_file`: creates or replaces a text file of the workspace. Sequential (a batch containing it
 * runs one call at a time), and meant to be gated by a permission policy (see `permission.ts`).
 */
import { z } from "zod";
import { defineTool } from "../../tools/index.js";
import type { AgentTool } from "../../types.js";
import { writeInWorkspace } from "./confined-write.js";
import { rootOf, type WorkspaceToolOptions } from "./options.js";
import { deniedPaths, resolveInWorkspace, workspaceRelative } from "./workspace.js";

export const writeFileParameters = z.object({
  path: z.string().describe("File to create or replace, relative to the working directory."),
  content: z.string().describe("The complete new content of the file."),
});

export interface WriteFileDetails {
  path: string;
  bytes: number;
  created: boolean;
}

export function writeFileTool(options: WorkspaceToolOptions = {}): AgentTool<z.output<typeof writeFileParameters>, WriteFileDetails> {
  const root = rootOf(options);
  const denied = deniedPaths(options.deniedPaths);
  return defineTool({
    name: "write_file",
    label: "Write file",
    description:
      "Create or replace a text file of the working directory with the given content (parent directories are created). " +
      "Symbolic links are not followed, and only regular files are replaced. The user may be asked to confirm, and may refuse.",
    parameters: writeFileParameters,
    executionMode: "sequential",
    async execute(_id, params, signal) {
      const file = resolveInWorkspace(root, params.path);
      denied.refuse(params.path, file);
      const shown = workspaceRelative(root, file);
      const { created } = await writeInWorkspace(root, params.path, params.content, signal, options.confinement);
      const bytes = Buffer.byteLength(params.content, "utf8");
      return {
        content: [{ type: "text", text: `${created ? "Created" : "Replaced"} ${shown} (${bytes} bytes).` }],
        details: { path: shown, bytes, created },
      };
    },
  });
}
