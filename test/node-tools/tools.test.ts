import { existsSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentToolResult } from "../../src/index.js";
import {
  globMatcher,
  listFilesTool,
  progressOf,
  readFileTool,
  resolveInWorkspace,
  searchTextTool,
  writeFileTool,
  type ReadFileDetails,
  type SearchTextDetails,
} from "../../src/node/index.js";
import { makeWorkspace, run, textOf } from "./fixture.js";

let root: string;
let cleanup: () => void;
beforeAll(() => ({ root, cleanup } = makeWorkspace()));
afterAll(() => cleanup());

describe("confinement: every path stays inside the working directory", () => {
  it("resolves relative and absolute paths inside the root", () => {
    expect(resolveInWorkspace(root, "src/a.ts")).toBe(path.join(root, "src/a.ts"));
    expect(resolveInWorkspace(root, path.join(root, "README.md"))).toBe(path.join(root, "README.md"));
    expect(resolveInWorkspace(root, "src/../README.md")).toBe(path.join(root, "README.md"));
  });

  it("rejects .. escapes and absolute paths elsewhere with a clear message", () => {
    expect(() => resolveInWorkspace(root, "../etc/passwd")).toThrow(/outside the working directory/);
    expect(() => resolveInWorkspace(root, "/etc/passwd")).toThrow(/outside the working directory/);
  });

  it("rejects a symlink that leads out", () => {
    symlinkSync("/tmp", path.join(root, "escape"));
    expect(() => resolveInWorkspace(root, "escape/x")).toThrow(/symbolic link/);
  });

  it("every tool refuses an escape (an error result for the model)", async () => {
    await expect(run(readFileTool({ cwd: root }), { path: "../secret" })).rejects.toThrow(/outside the working directory/);
    await expect(run(listFilesTool({ cwd: root }), { path: ".." })).rejects.toThrow(/outside the working directory/);
    await expect(run(searchTextTool({ cwd: root }), { pattern: "x", path: "../.." })).rejects.toThrow(/outside the working directory/);
    await expect(run(writeFileTool({ cwd: root }), { path: "../evil.txt", content: "x" })).rejects.toThrow(/outside the working directory/);
  });
});

describe("read_file: whole files and line ranges", () => {
  it("numbers the lines of a whole file", async () => {
    const result = await run<ReadFileDetails>(readFileTool({ cwd: root }), { path: "src/a.ts" });
    expect(textOf(result)).toBe("src/a.ts (3 lines)\n1│ export const a = 1;\n2│ // TODO: rename a\n3│ export const b = 2;");
    expect(result.details).toEqual({ path: "src/a.ts", startLine: 1, endLine: 3, totalLines: 3, truncated: false });
  });

  it("returns an inclusive range, clamped to the end of the file", async () => {
    const range = await run<ReadFileDetails>(readFileTool({ cwd: root }), { path: "notes.txt", startLine: 9, endLine: 11 });
    expect(textOf(range)).toBe("notes.txt (lines 9-11 of 30)\n 9│ line 9\n10│ line 10\n11│ line 11");
    const tail = await run<ReadFileDetails>(readFileTool({ cwd: root }), { path: "notes.txt", startLine: 29, endLine: 99 });
    expect(tail.details).toMatchObject({ startLine: 29, endLine: 30, totalLines: 30 });
  });

  it("explains bad ranges, missing files, directories and binary files", async () => {
    const tool = readFileTool({ cwd: root });
    await expect(run(tool, { path: "notes.txt", startLine: 40 })).rejects.toThrow("startLine 40 is past the end of notes.txt (30 lines).");
    await expect(run(tool, { path: "notes.txt", startLine: 5, endLine: 2 })).rejects.toThrow("endLine (2) is before startLine (5).");
    await expect(run(tool, { path: "nope.txt" })).rejects.toThrow("No such file: nope.txt");
    await expect(run(tool, { path: "src" })).rejects.toThrow(/is a directory/);
    await expect(run(tool, { path: "binary.bin" })).rejects.toThrow(/binary/);
    await expect(run(tool, { path: "notes.txt", startLine: 0 })).rejects.toThrow(/startLine/);
  });

  it("reports progress in lines", async () => {
    const updates: AgentToolResult[] = [];
    await run(readFileTool({ cwd: root }), { path: "notes.txt" }, (update) => updates.push(update));
    expect(progressOf(updates.at(-1))).toEqual({ done: 30, total: 30, unit: "lines" });
  });
});

describe("list_files", () => {
  it("lists one directory, directories marked with /", async () => {
    const result = await run(listFilesTool({ cwd: root }), { path: "src" });
    expect(textOf(result)).toBe("src: 2 files, 1 directory\nsrc/a.ts\nsrc/b.ts\nsrc/deep/");
  });

  it("walks recursively without entering node_modules or .git, with a glob filter", async () => {
    const all = await run(listFilesTool({ cwd: root }), { recursive: true });
    expect(textOf(all)).toContain("src/deep/c.test.ts");
    expect(textOf(all)).not.toContain("node_modules");
    expect(textOf(all)).not.toContain("node_modules/dep");
    expect(textOf(all)).not.toContain(".git/HEAD");
    const tests = await run(listFilesTool({ cwd: root }), { recursive: true, glob: "*.test.ts" });
    expect(textOf(tests)).toBe(".: 1 file, 0 directories\nsrc/deep/c.test.ts");
  });

  it("caps the entries", async () => {
    const result = await run(listFilesTool({ cwd: root }), { recursive: true, limit: 2 });
    expect(result.details).toMatchObject({ truncated: true });
    expect(textOf(result)).toMatch(/first 2 of \d+ entries/);
  });
});

describe("search_text: ripgrep-like", () => {
  it("finds a regex, skipping node_modules, .git and binary files (a binary one is noted, not counted as searched)", async () => {
    const result = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "TODO\\b" });
    expect(result.details.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["src/a.ts:2", "src/b.ts:3", "src/deep/c.test.ts:1"]);
    expect(result.details).toMatchObject({ files: 3, filesSearched: 6 });
    // (An earlier test of this file adds a symlink, noted as well.)
    expect(result.details.skipped.filter((entry) => entry.reason !== "a symbolic link, not followed")).toEqual([{ path: "binary.bin", reason: "binary" }]);
    const lines = textOf(result).split("\n");
    expect(lines[0]).toBe("3 matches in 3 files (6 searched)");
    expect(lines.at(-1)).toMatch(/^skipped \d+ entr(y|ies): .*binary\.bin \(binary\)/);
  });

  it("literal and case-insensitive search", async () => {
    const literal = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "TODO(x)", literal: true });
    expect(literal.details.matches).toEqual([{ path: "src/b.ts", line: 3, text: "return 42; // TODO(x): answer" }]);
    const caseless = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "todo", ignoreCase: true, path: "src/b.ts" });
    expect(caseless.details.matches.map((m) => m.line)).toEqual([1, 3]);
  });

  it("filters by glob and caps the results", async () => {
    const globbed = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "TODO", glob: "*.test.ts" });
    expect(globbed.details.matches.map((m) => m.path)).toEqual(["src/deep/c.test.ts"]);
    const capped = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "line", maxResults: 5 });
    expect(capped.details.matches).toHaveLength(5);
    expect(capped.details.truncated).toBe(true);
    expect(textOf(capped)).toMatch(/^5\+ matches .*stopped at maxResults=5/);
  });

  it("explains an invalid regex", async () => {
    await expect(run(searchTextTool({ cwd: root }), { pattern: "(" })).rejects.toThrow(/Invalid regular expression "\(".*literal: true/);
  });

  it("streams progress per file, ending at the total", async () => {
    const updates: AgentToolResult[] = [];
    await run(searchTextTool({ cwd: root, minDurationMs: 120 }), { pattern: "TODO" }, (update) => updates.push(update));
    expect(updates.length).toBeGreaterThan(1);
    expect(progressOf(updates.at(-1))).toEqual({ done: 7, total: 7, unit: "files" });
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    const tool = searchTextTool({ cwd: root, minDurationMs: 5_000 });
    const pending = tool.execute("c", { pattern: "x", literal: false, path: ".", ignoreCase: false, maxResults: 10 }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toThrow("Aborted");
  });
});

describe("write_file", () => {
  it("is sequential and creates parent directories", async () => {
    const tool = writeFileTool({ cwd: root });
    expect(tool.executionMode).toBe("sequential");
    const result = await run(tool, { path: "out/new.txt", content: "hello\n" });
    expect(textOf(result)).toBe("Created out/new.txt (6 bytes).");
    expect(readFileSync(path.join(root, "out/new.txt"), "utf8")).toBe("hello\n");
    expect(textOf(await run(tool, { path: "out/new.txt", content: "x" }))).toBe("Replaced out/new.txt (1 bytes).");
    expect(existsSync(path.join(root, "out"))).toBe(true);
  });
});

describe("globs", () => {
  it.each([
    ["*.ts", "src/a.ts", true],
    ["*.ts", "src/a.tsx", false],
    ["src/**/*.ts", "src/deep/c.test.ts", true],
    ["src/**/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/deep/c.test.ts", false],
    ["*.{md,json}", "package.json", true],
    ["file?.txt", "file1.txt", true],
  ])("%s matches %s: %s", (glob, file, expected) => {
    expect(globMatcher(glob)(file)).toBe(expected);
  });
});

describe("list_files: a flat listing shows node_modules and .git (not entered)", () => {
  it("lists them as directories", async () => {
    const result = await run(listFilesTool({ cwd: root }), {});
    expect(textOf(result)).toContain("\n.git/");
    expect(textOf(result)).toContain("\nnode_modules/");
  });
});
