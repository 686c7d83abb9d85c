/**
 * Issue 16, "shipped source maps must not point at missing files": the build's compiler options
 * (tsconfig.build.json) put each source into its map, so dist/ maps are complete without src/.
 * Checked by emitting one library module with those options, in memory.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MODULE = fileURLToPath(new URL("../../src/api/default-stream-fn.ts", import.meta.url));

describe("issue 16: source maps", () => {
  it("every emitted map carries the full text of each source it names", () => {
    const { config } = ts.readConfigFile(`${ROOT}tsconfig.build.json`, ts.sys.readFile);
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
    expect([options.sourceMap, options.inlineSources]).toEqual([true, true]);

    const written = new Map<string, string>();
    const program = ts.createProgram({ rootNames: [MODULE], options: { ...options, noEmit: false, declaration: false } });
    program.emit(program.getSourceFile(MODULE), (name, text) => written.set(name, text));
    const maps = [...written].filter(([name]) => name.endsWith(".js.map"));
    expect(maps).toHaveLength(1);
    const map = JSON.parse(maps[0][1]) as { sources: string[]; sourcesContent?: (string | null)[] };
    expect(map.sources).toHaveLength(1);
    expect(map.sourcesContent).toEqual([ts.sys.readFile(MODULE)]);
  });
});
