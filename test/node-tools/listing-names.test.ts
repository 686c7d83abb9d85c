/**
 * A file name may hold anything but `/` and NUL. The listing the model reads must stay one entry
 * per line with unambiguous markers: a name with a line break must not forge entries, a regular
 * file named `foo@` must not read as the symlink `foo`. Such paths are JSON strings.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listFilesTool, searchTextTool } from "../../src/node/index.js";
import { shownPath } from "../../src/node/tools/walk.js";
import { run, textOf } from "./fixture.js";

const root = mkdtempSync(path.join(tmpdir(), "xal-names-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(path.join(root, "plain.txt"), "needle\n");
writeFileSync(path.join(root, "notes\nsecrets.txt@"), "needle\n"); // would show as two lines, the second a "symlink"
writeFileSync(path.join(root, "foo@"), "");
writeFileSync(path.join(root, '"quoted"'), "");
mkdirSync(path.join(root, "dir\x1b[2J"));
writeFileSync(path.join(root, "dir\x1b[2J", "in\u2028side"), "");
symlinkSync("plain.txt", path.join(root, "link"));

describe("listings: one entry per line, markers unambiguous", () => {
  it("a path that could be misread is a JSON string, its marker after the quote; the rest are as they are", async () => {
    const result = await run(listFilesTool({ cwd: root }), { recursive: true });
    expect(textOf(result).split("\n")).toEqual([
      ".: 6 files, 1 directory (@ marks a symbolic link, not followed) (a quoted path is a JSON string)",
      '"\\"quoted\\""',
      '"dir\\u001b[2J"/',
      '"dir\\u001b[2J/in\\u2028side"',
      '"foo@"',
      "link@",
      '"notes\\nsecrets.txt@"',
      "plain.txt",
    ]);
    // Each quoted entry decodes to the path the other tools take.
    expect(JSON.parse('"dir\\u001b[2J/in\\u2028side"')).toBe("dir\x1b[2J/in\u2028side");
  });

  it("search_text quotes such a path the same way before :line:", async () => {
    const result = await run(searchTextTool({ cwd: root }), { pattern: "needle" });
    expect(textOf(result).split("\n")).toEqual(["2 matches in 2 files (5 searched)", '"notes\\nsecrets.txt@":1: needle', "plain.txt:1: needle", "skipped 1 entry: link (a symbolic link, not followed)"]);
  });

  it("shownPath leaves ordinary names, spaces, unicode and inner @ as they are", () => {
    expect(["src/a.ts", "a b.txt", "naïve/日本.md", "user@host.txt", "@scope/pkg"].map(shownPath)).toEqual(["src/a.ts", "a b.txt", "naïve/日本.md", "user@host.txt", "@scope/pkg"]);
    expect(["x\x9by", "x\x7f"].map(shownPath)).toEqual(['"x\\u009by"', '"x\\u007f"']);
  });
});
