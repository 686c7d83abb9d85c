/** R13, R81: the CLI's read-only tools run again after a resume (`replay: "safe"`); the write does not. */
import { describe, expect, it } from "vitest";
import { listFilesTool, readFileTool, searchTextTool, writeFileTool } from "../../src/node/tools/index.js";

describe("R13: replay declarations of the workspace tools", () => {
  it("R13, R81: list_files, read_file and search_text are replay-safe; write_file is not", () => {
    const cwd = process.cwd();
    const tools = [listFilesTool({ cwd }), readFileTool({ cwd }), searchTextTool({ cwd }), writeFileTool({ cwd })];
    expect(tools.map((tool) => [tool.name, tool.replay ?? null])).toEqual([
      ["list_files", "safe"],
      ["read_file", "safe"],
      ["search_text", "safe"],
      ["write_file", null],
    ]);
  });
});
