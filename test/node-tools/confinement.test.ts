/**
 * Issue 15 items 1, 2, 4, 5, 6: the terminal agent's file tools cannot be led out of the workspace,
 * never block on a special file, and stay bounded in time and size. Real symlinks, a real FIFO and
 * a link to /dev/zero in a temp directory; each case in both confinement modes where it applies.
 * (Item 3, the races, is races.test.ts; the unreadable directory, which needs another user, is
 * unreadable.test.ts.)
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  listFilesTool,
  MAX_READ_CHARS,
  readFileTool,
  searchTextTool,
  writeFileTool,
  type ListFilesDetails,
  type ReadFileDetails,
  type SearchTextDetails,
} from "../../src/node/index.js";
import { defaultConfinementMode, type ConfinementMode } from "../../src/node/tools/confined-open.js";
import { run, textOf } from "./fixture.js";

let bases: string[] = [];
afterEach(() => {
  for (const base of bases) rmSync(base, { recursive: true, force: true });
  bases = [];
});

/** A workspace and, beside it, an outside directory holding a secret. */
function layout() {
  const base = mkdtempSync(path.join(tmpdir(), "xal-confine-"));
  bases.push(base);
  const ws = path.join(base, "ws");
  const outside = path.join(base, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.txt"), "root:SECRET:1\n");
  writeFileSync(path.join(ws, "README.md"), "# inside\nhello\n");
  return { ws, outside, at: (name: string) => path.join(ws, name) };
}

const modes: ConfinementMode[] = defaultConfinementMode() === "proc" ? ["proc", "path"] : ["path"];
const tools = (cwd: string, confinement: ConfinementMode) => ({
  read: readFileTool({ cwd, confinement }),
  write: writeFileTool({ cwd, confinement }),
  list: listFilesTool({ cwd, confinement }),
  search: searchTextTool({ cwd, confinement }),
});

describe.each(modes)("issue 15 item 1: symlinks that point outside are not followed (%s mode)", (mode) => {
  it("item 1: search_text over . does not read a symlinked file or directory that leads outside", async () => {
    const { ws, outside, at } = layout();
    symlinkSync(path.join(outside, "secret.txt"), at("notes.txt")); // absolute
    symlinkSync("../outside/secret.txt", at("notes2.txt")); // relative
    symlinkSync(outside, at("linked-dir"));
    const { search } = tools(ws, mode);
    const result = await run<SearchTextDetails>(search, { pattern: "SECRET|root" });
    expect(result.details.matches).toEqual([]);
    expect(textOf(result)).not.toContain("SECRET");
    expect(result.details.skipped).toEqual([
      { path: "linked-dir", reason: "a symbolic link, not followed" },
      { path: "notes.txt", reason: "a symbolic link, not followed" },
      { path: "notes2.txt", reason: "a symbolic link, not followed" },
    ]);
    expect(textOf(result)).toContain("skipped 3 entries: linked-dir (a symbolic link, not followed)");
  });

  it("item 1: naming the link is refused by read_file, search_text and list_files", async () => {
    const { ws, outside, at } = layout();
    symlinkSync(path.join(outside, "secret.txt"), at("notes.txt"));
    symlinkSync(outside, at("linked-dir"));
    const { read, search, list } = tools(ws, mode);
    await expect(run(read, { path: "notes.txt" })).rejects.toThrow(/outside the working directory/);
    await expect(run(search, { pattern: "SECRET", path: "notes.txt" })).rejects.toThrow(/outside the working directory/);
    await expect(run(list, { path: "linked-dir" })).rejects.toThrow(/outside the working directory/);
    await expect(run(read, { path: "linked-dir/secret.txt" })).rejects.toThrow(/outside the working directory/);
  });

  it("item 1: list_files marks symlinks with @ and does not enter them", async () => {
    const { ws, outside, at } = layout();
    symlinkSync(outside, at("linked-dir"));
    const result = await run<ListFilesDetails>(tools(ws, mode).list, { recursive: true });
    expect(result.details.entries).toEqual(["README.md", "linked-dir@"]);
    expect(textOf(result)).toContain("(@ marks a symbolic link, not followed)");
  });

  it("item 1: a symlink that stays inside is still read when named", async () => {
    const { ws, at } = layout();
    symlinkSync("README.md", at("inner.md"));
    const result = await run<ReadFileDetails>(tools(ws, mode).read, { path: "inner.md" });
    expect(textOf(result)).toContain("hello");
  });
});

describe.each(modes)("issue 15 item 2: write_file never follows a link (%s mode)", (mode) => {
  it("item 2: dangling links (absolute, relative, chained) are refused and nothing appears outside", async () => {
    const { ws, outside, at } = layout();
    symlinkSync(path.join(outside, "new1.txt"), at("notes.md"));
    symlinkSync("../outside/new2.txt", at("rel.md"));
    symlinkSync("chain2.md", at("chain.md"));
    symlinkSync("../outside/new3.txt", at("chain2.md"));
    const { write } = tools(ws, mode);
    for (const name of ["notes.md", "rel.md", "chain.md", "chain2.md"]) {
      await expect(run(write, { path: name, content: "pwned\n" }), name).rejects.toThrow(/symbolic link|outside the working directory/);
    }
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("item 2: a link to an existing file (outside or inside) is not written through", async () => {
    const { ws, outside, at } = layout();
    symlinkSync(path.join(outside, "secret.txt"), at("secret-link"));
    symlinkSync("README.md", at("inner.md"));
    const { write } = tools(ws, mode);
    await expect(run(write, { path: "secret-link", content: "pwned\n" })).rejects.toThrow(/outside the working directory|symbolic link/);
    await expect(run(write, { path: "inner.md", content: "changed\n" })).rejects.toThrow("inner.md is a symbolic link; links are not followed here");
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("root:SECRET:1\n");
    expect(readFileSync(at("README.md"), "utf8")).toBe("# inside\nhello\n");
  });

  it("item 2: a directory link that leads outside is refused, inside one is written through", async () => {
    const { ws, outside, at } = layout();
    symlinkSync(outside, at("out"));
    mkdirSync(at("real"));
    symlinkSync("real", at("alias"));
    const { write } = tools(ws, mode);
    await expect(run(write, { path: "out/x.txt", content: "pwned\n" })).rejects.toThrow(/outside the working directory/);
    await expect(run(write, { path: "out/deeper/x.txt", content: "pwned\n" })).rejects.toThrow(/outside the working directory/);
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    await run(write, { path: "alias/y.txt", content: "ok\n" });
    expect(readFileSync(at("real/y.txt"), "utf8")).toBe("ok\n");
  });

  it("item 2: creates missing parents and replaces a regular file in place", async () => {
    const { ws, at } = layout();
    const { write } = tools(ws, mode);
    expect(textOf(await run(write, { path: "a/b/c.txt", content: "one\n" }))).toBe("Created a/b/c.txt (4 bytes).");
    expect(textOf(await run(write, { path: "a/b/c.txt", content: "2\n" }))).toBe("Replaced a/b/c.txt (2 bytes).");
    expect(readFileSync(at("a/b/c.txt"), "utf8")).toBe("2\n");
    await expect(run(write, { path: "a", content: "x" })).rejects.toThrow("a is a directory.");
  });
});

describe.each(modes)("issue 15 item 4: FIFOs and devices never block or stream (%s mode)", (mode) => {
  it("item 4: a FIFO is refused by read_file and write_file, skipped by search_text, and the pool stays free", async () => {
    const { ws, at } = layout();
    execFileSync("mkfifo", [at("f")]);
    const { read, write, search } = tools(ws, mode);
    // More calls than libuv's 4 threads: a blocking open would exhaust the pool.
    const calls = Array.from({ length: 8 }, (_, i) =>
      i % 2 ? run(read, { path: "f" }) : run(write, { path: "f", content: "x" }),
    );
    const settled = await Promise.allSettled(calls);
    for (const outcome of settled) {
      expect(outcome.status).toBe("rejected");
      expect(String((outcome as PromiseRejectedResult).reason.message)).toMatch(/f is not a regular file \((a FIFO|a FIFO or socket)\)/);
    }
    const result = await run<SearchTextDetails>(search, { pattern: "hello" });
    expect(result.details.matches).toEqual([{ path: "README.md", line: 2, text: "hello" }]);
    expect(result.details.skipped).toEqual([{ path: "f", reason: "a FIFO, not read" }]);
    await expect(run(search, { pattern: "x", path: "f" })).rejects.toThrow(/not a regular file/);
    await expect(run(tools(ws, mode).list, { path: "f" })).rejects.toThrow("Not a directory: f (use read_file for files)");
    await expect(run(tools(ws, mode).list, { path: "README.md" })).rejects.toThrow("Not a directory: README.md (use read_file for files)");
    expect(textOf(await run(read, { path: "README.md" }))).toContain("hello");
  });

  it("item 4: skipped entries of a subdirectory are named relative to the workspace", async () => {
    const { ws, at } = layout();
    mkdirSync(at("sub"));
    execFileSync("mkfifo", [at("sub/p")]);
    const { list, search } = tools(ws, mode);
    const listed = await run<ListFilesDetails>(list, { path: "sub", recursive: true });
    expect(listed.details.skipped).toEqual([{ path: "sub/p", reason: "a FIFO, not read" }]);
    expect(textOf(listed)).toContain("skipped 1 entry: sub/p (a FIFO, not read)");
    expect((await run<SearchTextDetails>(search, { pattern: "x", path: "sub" })).details.skipped).toEqual([{ path: "sub/p", reason: "a FIFO, not read" }]);
  });

  it("item 4: a symlink to /dev/zero is not read (search_text . finishes, read_file refuses)", async () => {
    const { ws, at } = layout();
    symlinkSync("/dev/zero", at("zero"));
    const { read, search, list } = tools(ws, mode);
    const result = await run<SearchTextDetails>(search, { pattern: "x" });
    expect(result.details.skipped).toEqual([{ path: "zero", reason: "a symbolic link, not followed" }]);
    await expect(run(read, { path: "zero" })).rejects.toThrow(/outside the working directory/);
    await expect(run(search, { pattern: "x", path: "zero" })).rejects.toThrow(/outside the working directory/);
    expect((await run<ListFilesDetails>(list, {})).details.entries).toEqual(["README.md", "zero@"]);
  });
});

describe("issue 15 item 4: abort is honoured mid-walk and mid-search", () => {
  function wideTree() {
    const { ws, at } = layout();
    for (let i = 0; i < 100; i++) {
      mkdirSync(at(`d${i}/e`), { recursive: true });
      writeFileSync(at(`d${i}/e/f.txt`), "needle\n");
    }
    return ws;
  }

  it("item 4: list_files settles with Aborted when the signal aborts during the walk", async () => {
    const ws = wideTree();
    const controller = new AbortController();
    const pending = listFilesTool({ cwd: ws }).execute("c", { path: ".", recursive: true, limit: 5000 }, controller.signal);
    // The walk of 200 directories takes many turns of the event loop; abort at the first.
    setImmediate(() => controller.abort());
    await expect(pending).rejects.toThrow("Aborted");
  });

  it("item 4: search_text settles with Aborted when the signal aborts during the walk or after the first file", async () => {
    const ws = wideTree();
    const walking = new AbortController();
    const duringWalk = searchTextTool({ cwd: ws }).execute("c", { pattern: "needle", literal: false, path: ".", ignoreCase: false, maxResults: 1000 }, walking.signal);
    setImmediate(() => walking.abort());
    await expect(duringWalk).rejects.toThrow("Aborted");

    const searching = new AbortController();
    const onUpdate = () => searching.abort();
    const duringSearch = searchTextTool({ cwd: ws }).execute("c", { pattern: "needle", literal: false, path: ".", ignoreCase: false, maxResults: 1000 }, searching.signal, onUpdate);
    await expect(duringSearch).rejects.toThrow("Aborted");
  });
});

describe("issue 15 item 5: patterns and globs run in linear time", () => {
  it("item 5: search_text ^(a+)+$ over 10^5 a's finishes (RE2), well within 5 s", async () => {
    const { ws, at } = layout();
    writeFileSync(at("a.txt"), `${"a".repeat(100_000)}\n${"a".repeat(26)}!\n`);
    const started = performance.now();
    const result = await run<SearchTextDetails>(searchTextTool({ cwd: ws }), { pattern: "^(a+)+$", path: "a.txt" });
    const ms = performance.now() - started;
    console.log(`search_text ^(a+)+$ over 1e5 a's: ${ms.toFixed(1)} ms`);
    expect(result.details.matches.map((match) => match.line)).toEqual([1]);
    expect(ms).toBeLessThan(5_000);
  });

  it("item 5: anchors and classes match per line, with LF and CRLF line ends", async () => {
    const { ws, at } = layout();
    writeFileSync(at("crlf.txt"), "foo\r\nbar foo\r\n  bar\r\n");
    writeFileSync(at("lf.txt"), "a\nb\n");
    const search = searchTextTool({ cwd: ws });
    const lines = async (pattern: string, file: string) => (await run<SearchTextDetails>(search, { pattern, path: file })).details.matches.map((m) => m.line);
    expect(await lines("foo$", "crlf.txt")).toEqual([1, 2]);
    expect(await lines("^bar", "crlf.txt")).toEqual([2]);
    expect(await lines("^\\s+bar$", "crlf.txt")).toEqual([3]);
    expect(await lines("a\\sb", "lf.txt")).toEqual([]); // never across lines
  });

  it("item 5: backreferences and lookaround get a clear error", async () => {
    const { ws } = layout();
    const search = searchTextTool({ cwd: ws });
    for (const pattern of ["(a)\\1", "foo(?=bar)", "foo(?!bar)", "(?<=x)y", "(?<!x)y"]) {
      await expect(run(search, { pattern }), pattern).rejects.toThrow(/uses RE2 syntax, which runs in linear time and has no backreferences .* or lookaround/);
    }
    await expect(run(search, { pattern: "(" })).rejects.toThrow(/Invalid regular expression "\(".*literal: true/);
  });

  it("item 5: ten **/ against a 30-level tree finish (picomatch parsed, RE2 run), well within 5 s", async () => {
    const { ws, at } = layout();
    const levels = Array.from({ length: 30 }, (_, i) => `l${i}`);
    for (let depth = 1; depth <= 30; depth++) {
      mkdirSync(at(levels.slice(0, depth).join("/")), { recursive: true });
      writeFileSync(at(`${levels.slice(0, depth).join("/")}/f.txt`), "x\n");
    }
    const list = listFilesTool({ cwd: ws });
    const started = performance.now();
    const all = await run<ListFilesDetails>(list, { recursive: true, glob: `${"**/".repeat(10)}*.txt` });
    // picomatch's own regex takes seconds on this one (each `l*` segment can start anywhere).
    const none = await run<ListFilesDetails>(list, { recursive: true, glob: `${"**/l*/".repeat(10)}*.tx` });
    const searched = await run<SearchTextDetails>(searchTextTool({ cwd: ws }), { pattern: "x", glob: `${"**/".repeat(10)}f.txt` });
    const ms = performance.now() - started;
    console.log(`ten-**/ globs over a 30-level tree (3 calls): ${ms.toFixed(1)} ms`);
    expect(all.details.files).toBe(30);
    expect(none.details.entries).toEqual([]);
    expect(searched.details.files).toBe(30);
    expect(ms).toBeLessThan(5_000);
  });

  it("item 5: a negated extglob, which needs a lookahead, gets a clear error", async () => {
    const { ws } = layout();
    await expect(run(listFilesTool({ cwd: ws }), { recursive: true, glob: "!(a).ts" })).rejects.toThrow(/negated extglobs like !\(…\) are not supported/);
  });
});

describe("issue 15 item 6: bounded output and reads", () => {
  it("item 6: a 4 MB single-line file is returned cut, with a note", async () => {
    const { ws, at } = layout();
    writeFileSync(at("min.js"), "x".repeat(4 * 1024 * 1024));
    const result = await run<ReadFileDetails>(readFileTool({ cwd: ws }), { path: "min.js" });
    const text = textOf(result);
    expect(text.length).toBeLessThan(2_200);
    expect(text).toContain(`… (${4 * 1024 * 1024 - 2000} more characters on this line)`);
    const search = await run<SearchTextDetails>(searchTextTool({ cwd: ws }), { pattern: "x" });
    expect(search.details.skipped).toEqual([{ path: "min.js", reason: "larger than 1048576 bytes" }]);
  });

  it("item 6: many long lines stop at MAX_READ_CHARS, and startLine continues", async () => {
    const { ws, at } = layout();
    writeFileSync(at("wide.txt"), Array.from({ length: 1000 }, (_, i) => `${i + 1}:${"y".repeat(998)}`).join("\n"));
    const read = readFileTool({ cwd: ws });
    const first = await run<ReadFileDetails>(read, { path: "wide.txt" });
    expect(textOf(first).length).toBeLessThan(MAX_READ_CHARS + 200);
    expect(first.details.truncated).toBe(true);
    const next = first.details.endLine + 1;
    expect(textOf(first)).toContain(`continue with startLine ${next}`);
    const second = await run<ReadFileDetails>(read, { path: "wide.txt", startLine: next, endLine: next });
    expect(textOf(second)).toContain(`${next}│ ${next}:yyy`);
  });

  it("item 6: files over the byte limits are refused before they are read", async () => {
    const { ws, at } = layout();
    writeFileSync(at("big.txt"), Buffer.alloc(5 * 1024 * 1024 + 1, 0x61));
    await expect(run(readFileTool({ cwd: ws }), { path: "big.txt" })).rejects.toThrow(/too large to read \(5242881 bytes\)/);
    expect(existsSync(at("big.txt"))).toBe(true);
  });
});
