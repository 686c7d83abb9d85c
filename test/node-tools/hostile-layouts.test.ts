/**
 * Hostile file-system layouts (audit of the workspace tools): paths longer than the system's limit
 * through a deep tree, trees deeper than a walk enters, directories whose names are not UTF-8,
 * listings of very long names, and files search_text cannot search. Each layout is made in a temp
 * directory and removed with `rm -rf` (Node's rmSync cannot remove a tree deeper than PATH_MAX).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listFilesTool, MAX_LIST_CHARS, readFileTool, searchTextTool, ToolInputError, writeFileTool, type ListFilesDetails, type SearchTextDetails } from "../../src/node/index.js";
import { MAX_WALK_DEPTH } from "../../src/node/tools/walk.js";
import { MAX_PATH_DEPTH, realpathOfExistingPart } from "../../src/node/tools/workspace.js";
import { run, textOf } from "./fixture.js";

let bases: string[] = [];
afterEach(() => {
  for (const base of bases) execFileSync("rm", ["-rf", base]);
  bases = [];
});

function workspace(): string {
  const root = mkdtempSync(path.join(tmpdir(), "xal-hostile-"));
  bases.push(root);
  return root;
}

/** The path `root/` + `parts` as bytes (a part given as numbers is raw bytes: a name that is not UTF-8). */
const at = (root: string, ...parts: (string | number[])[]) => Buffer.concat([Buffer.from(`${root}/`), ...parts.map((part) => Buffer.from(part))]);

/** `levels` nested directories `name/name/…` under `root`, made from inside (a full path would pass PATH_MAX), with `file` at the bottom. */
function nest(root: string, name: string, levels: number, file?: string): void {
  const script = `const fs = require("fs"); process.chdir(${JSON.stringify(root)});
    for (let i = 0; i < ${levels}; i++) { fs.mkdirSync(${JSON.stringify(name)}); process.chdir(${JSON.stringify(name)}); }
    ${file ? `fs.writeFileSync(${JSON.stringify(file)}, "needle\\n");` : ""}`;
  execFileSync(process.execPath, ["-e", script]);
}

describe.skipIf(process.platform !== "linux")("a path longer than the system's limit", () => {
  it("is refused by every tool with a typed error before any lookup, not the system's ENAMETOOLONG", async () => {
    const root = workspace();
    // 20 components of 250 characters: 5,000 bytes, past Linux's PATH_MAX (4,096).
    const name = "n".repeat(250);
    nest(root, name, 20, "f.txt");
    const requested = `${Array(20).fill(name).join("/")}/f.txt`;
    const calls = [
      run(readFileTool({ cwd: root }), { path: requested }),
      run(listFilesTool({ cwd: root }), { path: path.dirname(requested) }),
      run(searchTextTool({ cwd: root }), { pattern: "needle", path: requested }),
      run(writeFileTool({ cwd: root }), { path: `${path.dirname(requested)}/g.txt`, content: "x" }),
    ];
    for (const outcome of await Promise.allSettled(calls)) {
      expect(outcome.status).toBe("rejected");
      const reason = (outcome as PromiseRejectedResult).reason as Error;
      expect(reason).toBeInstanceOf(ToolInputError);
      expect(reason.message).toMatch(/^The path is too long \(its absolute path has \d+ bytes; the system's limit is 4096\)\.$/);
    }
  });

  it("through 2,100 nested directories (one component each), read_file answers with the same typed error", async () => {
    // Before: resolving it called realpathSync once per missing component, each one lstat per
    // prefix: the event loop was blocked for seconds (minutes at 3,000 levels), then a raw ENAMETOOLONG.
    const root = workspace();
    nest(root, "d", 2100, "f.txt");
    await expect(run(readFileTool({ cwd: root }), { path: `${"d/".repeat(2100)}f.txt` })).rejects.toThrow(/^The path is too long/);
  });
});

describe.skipIf(process.platform !== "linux")("a path deeper than MAX_PATH_DEPTH, under the byte limit", () => {
  it("is refused by every tool with a typed error before any lookup (resolving it was quadratic in the depth, synchronous)", async () => {
    // Before: 1,300 levels (which write_file itself can build) plus missing names below them kept
    // the event loop blocked for seconds per call: one system realpath per missing name.
    const root = workspace();
    nest(root, "d", 1300);
    const requested = `${"d/".repeat(1300)}${"q/".repeat(50)}f.txt`;
    const calls = [
      run(readFileTool({ cwd: root }), { path: requested }),
      run(listFilesTool({ cwd: root }), { path: path.dirname(requested) }),
      run(writeFileTool({ cwd: root }), { path: requested, content: "x" }),
    ];
    for (const outcome of await Promise.allSettled(calls)) {
      expect(outcome.status).toBe("rejected");
      const reason = (outcome as PromiseRejectedResult).reason as Error;
      expect(reason).toBeInstanceOf(ToolInputError);
      expect(reason.message).toMatch(new RegExp(`^The path is too deep \\(135[01] levels below the working directory; at most ${MAX_PATH_DEPTH}\\)\\.$`));
    }
  });

  it(`a path of ${MAX_PATH_DEPTH} levels, most of them missing, is looked up as before: no such file; written, it is created`, async () => {
    const root = workspace();
    nest(root, "d", 100);
    const requested = `${"d/".repeat(100)}${"q/".repeat(MAX_PATH_DEPTH - 101)}f.txt`;
    await expect(run(readFileTool({ cwd: root }), { path: requested })).rejects.toThrow(/^No such file/);
    await run(writeFileTool({ cwd: root }), { path: requested, content: "deep\n" });
    expect(textOf(await run(readFileTool({ cwd: root }), { path: requested }))).toContain("deep");
  });
});

describe("realpathOfExistingPart", () => {
  it("resolves the deepest existing ancestor, through links, past a file, a dangling link and missing names", () => {
    const root = workspace();
    const real = realpathOfExistingPart(root);
    mkdirSync(path.join(root, "a/b/c"), { recursive: true });
    writeFileSync(path.join(root, "a/file"), "x");
    symlinkSync(path.join(root, "a/b"), path.join(root, "link"));
    symlinkSync(path.join(root, "nowhere"), path.join(root, "dangling"));
    expect(realpathOfExistingPart(path.join(root, "a/b/c/x/y/z"))).toBe(path.join(real, "a/b/c/x/y/z"));
    expect(realpathOfExistingPart(path.join(root, "link/c/x"))).toBe(path.join(real, "a/b/c/x"));
    expect(realpathOfExistingPart(path.join(root, "a/file/x/y"))).toBe(path.join(real, "a/file/x/y"));
    expect(realpathOfExistingPart(path.join(root, "dangling/x"))).toBe(path.join(real, "dangling/x"));
    expect(realpathOfExistingPart(path.join(root, "a/b/c"))).toBe(path.join(real, "a/b/c"));
    expect(realpathOfExistingPart("/")).toBe("/");
  });
});

describe.skipIf(process.platform !== "linux")("a tree deeper than a walk enters", () => {
  it(`list_files and search_text stop ${MAX_WALK_DEPTH} levels down with a note, not a stack overflow`, async () => {
    // Before: each level was one more nested generator and open directory. The built package
    // overflowed the stack at 2,500 levels (a raw RangeError, directories left to the garbage
    // collector); past about 2,040, readlink of a directory failed and it was noted "changed during
    // the walk".
    const root = workspace();
    nest(root, "d", 3000, "f.txt");
    writeFileSync(path.join(root, "top.txt"), "needle\n");
    const deepest = `${"d/".repeat(MAX_WALK_DEPTH - 1)}d`;
    const note = { path: deepest, reason: `${MAX_WALK_DEPTH} levels down, not entered` };

    const listed = await run<ListFilesDetails>(listFilesTool({ cwd: root }), { recursive: true });
    expect(listed.details.entries).toEqual([...Array.from({ length: MAX_WALK_DEPTH }, (_, i) => `${"d/".repeat(i + 1)}`), "top.txt"]);
    expect(listed.details.skipped).toEqual([note]);
    expect(textOf(listed)).toContain(`(${MAX_WALK_DEPTH} levels down, not entered)`);

    const searched = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "needle" });
    expect(searched.details.matches).toEqual([{ path: "top.txt", line: 1, text: "needle" }]);
    expect(searched.details.skipped).toEqual([note]);
  });

  it("a walk that starts deep counts its levels from where it starts", async () => {
    const root = workspace();
    nest(root, "d", MAX_WALK_DEPTH + 5, "f.txt");
    const start = "d/".repeat(10).slice(0, -1);
    const listed = await run<ListFilesDetails>(listFilesTool({ cwd: root }), { path: start, recursive: true });
    expect(listed.details.skipped).toEqual([]);
    expect(listed.details.entries.at(-1)).toBe(`${"d/".repeat(MAX_WALK_DEPTH + 5)}f.txt`);
  });
});

describe("a file search_text cannot search, named by the call", () => {
  it("is the call's error with the reason, not \"0 matches in 0 files\" (a sparse 5 GB file, a binary file)", async () => {
    // Before: "0 matches in 0 files (0 searched)" and no note, so the model took it for a file
    // without the text; read_file, refusing the same file, told it to use search_text.
    const root = workspace();
    execFileSync("truncate", ["-s", "5G", path.join(root, "huge.log")]);
    writeFileSync(path.join(root, "blob.bin"), Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0, 1, 2]));
    const search = searchTextTool({ cwd: root });
    await expect(run(search, { pattern: "needle", path: "huge.log" })).rejects.toThrow(
      new ToolInputError("huge.log is too large to search (5368709120 bytes): search_text reads at most 1048576 bytes of a file."),
    );
    await expect(run(search, { pattern: "needle", path: "blob.bin" })).rejects.toThrow(new ToolInputError("blob.bin looks like a binary file; only text files are searched."));
    await expect(run(readFileTool({ cwd: root }), { path: "huge.log" })).rejects.toThrow(
      new ToolInputError("huge.log is too large to read (5368709120 bytes): read_file reads at most 5242880 bytes of a file."),
    );
  });
});

describe("a listing of very long names", () => {
  it("stops at MAX_LIST_CHARS characters with a note, as read_file stops at MAX_READ_CHARS", async () => {
    // Before: 3,000 names of 244 characters, limit 5000: 750,180 characters in one result.
    const root = workspace();
    for (let i = 0; i < 3000; i++) writeFileSync(path.join(root, `${String(i).padStart(4, "0")}${"n".repeat(240)}`), "");
    const result = await run<ListFilesDetails>(listFilesTool({ cwd: root }), { limit: 5000 });
    const text = textOf(result);
    expect(text.length).toBeLessThanOrEqual(MAX_LIST_CHARS + 200);
    const shown = Math.floor(MAX_LIST_CHARS / 245);
    expect(result.details).toMatchObject({ files: shown, truncated: true });
    expect(result.details.entries).toHaveLength(shown);
    expect(text.split("\n")[0]).toBe(`.: ${shown} files, 0 directories (first ${shown} of 3000 entries, cut at ${MAX_LIST_CHARS} characters; narrow with path or glob)`);
  });
});

describe.skipIf(process.platform !== "linux")("a directory whose name is not UTF-8", () => {
  it("is entered by a walk and opened by its listed name, like such a file", async () => {
    // Before: the walk noted "caf\uFFFD (removed during the walk)", and read_file and list_files
    // answered "No such file" / "No such directory" for the name list_files showed.
    const root = workspace();
    mkdirSync(at(root, "caf", [0xe9]));
    writeFileSync(at(root, "caf", [0xe9], "/inner.txt"), "needle\n");
    const listed = await run<ListFilesDetails>(listFilesTool({ cwd: root }), { recursive: true });
    expect(listed.details).toMatchObject({ entries: ["caf\uFFFD/", "caf\uFFFD/inner.txt"], skipped: [] });
    const searched = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "needle" });
    expect(searched.details).toMatchObject({ matches: [{ path: "caf\uFFFD/inner.txt", line: 1, text: "needle" }], skipped: [] });
    expect(textOf(await run(readFileTool({ cwd: root }), { path: "caf\uFFFD/inner.txt" }))).toBe("caf\uFFFD/inner.txt (1 line)\n1│ needle");
    expect((await run<ListFilesDetails>(listFilesTool({ cwd: root }), { path: "caf\uFFFD" })).details.entries).toEqual(["caf\uFFFD/inner.txt"]);
  });

  it("two names shown alike are refused as ambiguous, not \"No such file\"", async () => {
    const root = workspace();
    writeFileSync(at(root, "x", [0xff], ".txt"), "one\n");
    writeFileSync(at(root, "x", [0xfe], ".txt"), "two\n");
    const ambiguous = 'x\uFFFD.txt: its name is not UTF-8 and more than one entry of its directory is shown as "x\uFFFD.txt"; it cannot be opened by that name.';
    await expect(run(readFileTool({ cwd: root }), { path: "x\uFFFD.txt" })).rejects.toThrow(new ToolInputError(ambiguous));
    const searched = await run<SearchTextDetails>(searchTextTool({ cwd: root }), { pattern: "one|two" });
    expect(searched.details.skipped).toEqual([
      { path: "x\uFFFD.txt", reason: ambiguous },
      { path: "x\uFFFD.txt", reason: ambiguous },
    ]);
  });
});

describe.skipIf(process.platform !== "linux")("a name shown with U+FFFD beside a real entry of that name", () => {
  it("write_file refuses to write through it (it made a lookalike directory that hid the real one)", async () => {
    const root = workspace();
    mkdirSync(at(root, "caf", [0xe9]));
    writeFileSync(at(root, "caf", [0xe9], "/inner.txt"), "needle\n");
    await expect(run(writeFileTool({ cwd: root }), { path: "caf\uFFFD/new.txt", content: "x" })).rejects.toThrow(/cannot be written through; nothing was written\.$/);
    // Nothing was made, and the real directory is still what the tools see.
    expect(readdirSync(root, { encoding: "buffer" }).map((name) => name.toString("hex"))).toEqual(["636166e9"]);
    expect((await run<ListFilesDetails>(listFilesTool({ cwd: root }), { recursive: true })).details.entries).toEqual(["caf\uFFFD/", "caf\uFFFD/inner.txt"]);
    expect(textOf(await run(readFileTool({ cwd: root }), { path: "caf\uFFFD/inner.txt" }))).toContain("needle");
  });

  it("write_file is refused only for a U+FFFD name below the workspace: a root whose own name has one writes", async () => {
    const root = path.join(workspace(), "proj\uFFFD");
    mkdirSync(root);
    await run(writeFileTool({ cwd: root }), { path: path.join(root, "b.txt"), content: "x" });
    await run(writeFileTool({ cwd: root }), { path: "x\uFFFD/../a.txt", content: "y" });
    expect(readdirSync(root).sort()).toEqual(["a.txt", "b.txt"]);
  });

  it("a non-UTF-8 name and a literal U+FFFD name shown alike are ambiguous: neither is picked", async () => {
    const root = workspace();
    writeFileSync(at(root, "x", [0xff], ".txt"), "bytes\n");
    writeFileSync(path.join(root, "x\uFFFD.txt"), "literal\n");
    await expect(run(readFileTool({ cwd: root }), { path: "x\uFFFD.txt" })).rejects.toThrow(/more than one entry of its directory is shown as/);
  });
});

describe("a symbolic link loop named by the call", () => {
  it("is refused as a loop, not as \"links are not followed here\" (links inside are followed when named)", async () => {
    // Before: "loop1 is a symbolic link; links are not followed here (use the path of its target)",
    // and the same for "loop1/x", which is no link; the loop has no target to use.
    const root = workspace();
    symlinkSync("loop2", path.join(root, "loop1"));
    symlinkSync("loop1", path.join(root, "loop2"));
    for (const requested of ["loop1", "loop1/x"]) {
      const loop = new ToolInputError(`Path "${requested}" goes through a symbolic link loop (too many levels of links); nothing was read or written.`);
      await expect(run(readFileTool({ cwd: root }), { path: requested })).rejects.toThrow(loop);
      await expect(run(listFilesTool({ cwd: root }), { path: requested })).rejects.toThrow(loop);
      await expect(run(searchTextTool({ cwd: root }), { pattern: "x", path: requested })).rejects.toThrow(loop);
    }
    await expect(run(writeFileTool({ cwd: root }), { path: "loop1/x", content: "x" })).rejects.toThrow(ToolInputError);
  });
});
