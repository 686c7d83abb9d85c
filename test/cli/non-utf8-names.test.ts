/**
 * Issue 16: a file whose name is not UTF-8 is listed (with U+FFFD for the bad bytes) and can be
 * read by that listed name. (Linux file names are bytes; macOS refuses such names.)
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listFilesTool, readFileTool, searchTextTool, type SearchTextDetails } from "../../src/node/index.js";
import { run, textOf } from "../node-tools/fixture.js";

let root: string;
let outside: string;
const latin1 = (name: string) => Buffer.from(name, "latin1");

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "xal-names-"));
  outside = mkdtempSync(path.join(tmpdir(), "xal-names-out-"));
  writeFileSync(Buffer.concat([Buffer.from(`${root}/`), latin1("café.txt")]), "un café\n");
  writeFileSync(path.join(outside, "secret.txt"), "secret\n");
  symlinkSync(path.join(outside, "secret.txt"), Buffer.concat([Buffer.from(`${root}/`), latin1("lié.txt")]));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe.skipIf(process.platform === "darwin")("issue 16: non-UTF-8 file names", () => {
  it("a listed name can be read", async () => {
    const listing = textOf(await run(listFilesTool({ cwd: root }), { path: "." }));
    const listed = listing.split("\n").find((line) => line.startsWith("caf"))!;
    expect(listed).toBe("caf\uFFFD.txt");
    const result = await run(readFileTool({ cwd: root }), { path: listed });
    expect(textOf(result)).toBe("caf\uFFFD.txt (1 line)\n1│ un café");
  });

  it("search_text reads it too", async () => {
    const result = await run(searchTextTool({ cwd: root }), { pattern: "un café", literal: true });
    expect((result.details as SearchTextDetails).matches.map((match) => [match.path, match.line])).toEqual([["caf\uFFFD.txt", 1]]);
  });

  it("a lossy name that is a symlink out of the directory is refused", async () => {
    // Links are never followed by the confined open (issue 15), lossy names included.
    await expect(run(readFileTool({ cwd: root }), { path: "li\uFFFD.txt" })).rejects.toThrow(/is a symbolic link; links are not followed/);
  });
});
