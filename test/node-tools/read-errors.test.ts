/**
 * search_text over files whose read fails after they opened (procfs answers EINVAL, a failing disk
 * EIO): such a file is skipped with a note, as an unopenable one is, and a search is never failed
 * by one file with the system's raw message. `readBounded` is wrapped so a file whose text starts
 * with FAIL reads as procfs's /proc/self/attr/current does.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { readFileTool, searchTextTool } from "../../src/node/tools/index.js";
import { run, textOf } from "./fixture.js";

vi.mock("../../src/node/tools/confined-open.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/node/tools/confined-open.js")>();
  return {
    ...original,
    readBounded: async (...args: Parameters<typeof original.readBounded>) => {
      const read = await original.readBounded(...args);
      if (read.buffer.subarray(0, 4).toString() === "FAIL") throw Object.assign(new Error("EINVAL: invalid argument, read"), { code: "EINVAL", errno: -22, syscall: "read" });
      return read;
    },
  };
});

const root = mkdtempSync(path.join(tmpdir(), "xal-read-errors-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(path.join(root, "attr"));
writeFileSync(path.join(root, "a.txt"), "needle\n");
writeFileSync(path.join(root, "attr/current"), "FAIL needle\n");
writeFileSync(path.join(root, "big.txt"), `needle\n${"x".repeat(1024 * 1024)}`);

describe("search_text: a file that opens but cannot be read", () => {
  it("is skipped with a note naming the error's code, and neither it nor an oversized file counts as searched", async () => {
    const result = await run(searchTextTool({ cwd: root }), { pattern: "needle" });
    expect(textOf(result).split("\n")).toEqual([
      "1 match in 1 file (1 searched)",
      "a.txt:1: needle",
      "skipped 2 entries: attr/current (could not be read: EINVAL), big.txt (larger than 1048576 bytes)",
    ]);
    expect(result.details).toMatchObject({ filesSearched: 1, files: 1 });
  });

  it("named by the call, it is the call's error with the same reason, not the system's message", async () => {
    await expect(run(searchTextTool({ cwd: root }), { pattern: "needle", path: "attr/current" })).rejects.toMatchObject({
      name: "ToolInputError",
      message: "attr/current could not be read: EINVAL",
    });
  });
});

describe("read_file: a file that opens but cannot be read", () => {
  it("is the call's error naming the error's code, not the system's message", async () => {
    await expect(run(readFileTool({ cwd: root }), { path: "attr/current" })).rejects.toMatchObject({
      name: "ToolInputError",
      message: "attr/current could not be read: EINVAL",
    });
  });
});
