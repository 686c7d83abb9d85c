/** Tools that work on the working directory (Node only). */
import type { AgentTool } from "../../types.js";
import { listFilesTool } from "./list-files.js";
import type { WorkspaceToolOptions } from "./options.js";
import { readFileTool } from "./read-file.js";
import { searchTextTool } from "./search-text.js";
import { writeFileTool } from "./write-file.js";

export { listFilesTool, listFilesParameters, MAX_LIST_CHARS, type ListFilesDetails } from "./list-files.js";
export { readFileTool, readFileParameters, MAX_READ_BYTES, MAX_READ_LINES, MAX_READ_LINE_CHARS, MAX_READ_CHARS, type ReadFileDetails } from "./read-file.js";
export { searchTextTool, searchTextParameters, MAX_SEARCH_FILE_BYTES, MAX_SEARCH_LINE_CHARS, type SearchMatch, type SearchTextDetails } from "./search-text.js";
export { writeFileTool, writeFileParameters, type WriteFileDetails } from "./write-file.js";
export { permissionPolicy, type PermissionPolicyOptions, type PermissionRequest, type PermissionDecision, type BeforeToolCall } from "./permission.js";
export { resolveInWorkspace, workspaceRelative, ToolInputError, DeniedPathError, SKIPPED_DIRECTORIES } from "./workspace.js";
export { globMatcher, globToRe2Source, MAX_GLOB_LENGTH } from "./glob.js";
export { reportProgress, progressOf, type ToolProgress, type ProgressDetails } from "./progress.js";
export type { WorkspaceToolOptions } from "./options.js";
export { defaultConfinementMode, type ConfinementMode } from "./confined-open.js";
export type { SkippedEntry } from "./walk.js";

/** list_files, read_file, search_text and write_file over one working directory. */
export function createWorkspaceTools(options: WorkspaceToolOptions = {}): AgentTool[] {
  const resolved = { ...options, cwd: options.cwd ?? process.cwd() };
  return [listFilesTool(resolved), readFileTool(resolved), searchTextTool(resolved), writeFileTool(resolved)];
}
