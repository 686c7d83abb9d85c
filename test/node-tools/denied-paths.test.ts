/**
 * Issue 20 item 5: `deniedPaths` keeps the tools out of a path inside the workspace (the terminal
 * agent's session store when cwd is $HOME): read, write, list and search refuse it with a typed
 * error, walks leave it out, and a symlink to it is refused too.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeniedPathError, listFilesTool, readFileTool, searchTextTool, writeFileTool, type ListFilesDetails, type SearchTextDetails } from "../../src/node/tools/index.js";
import { makeWorkspace, run, textOf } from "./fixture.js";

let root: string;
let cleanup: () => void;
let store: string;
beforeAll(() => {
  ({ root, cleanup } = makeWorkspace());
  store = path.join(root, ".local/state/xstate-agent/abc");
  mkdirSync(store, { recursive: true });
  writeFileSync(path.join(store, "sessions.db"), "TODO secret journal\n");
  symlinkSync(store, path.join(root, "link-to-store"));
});
afterAll(() => cleanup());

const options = () => ({ cwd: root, deniedPaths: [store] });

describe("issue 20 item 5: the tools refuse denied paths inside the workspace", () => {
  it("read_file, write_file, list_files and search_text throw DeniedPathError for the path, a file in it and a symlink to it", async () => {
    const attempts: [string, () => Promise<unknown>][] = [
      ["read", () => run(readFileTool(options()), { path: ".local/state/xstate-agent/abc/sessions.db" })],
      ["read by absolute path", () => run(readFileTool(options()), { path: path.join(store, "sessions.db") })],
      ["read through a symlink", () => run(readFileTool(options()), { path: "link-to-store/sessions.db" })],
      ["write", () => run(writeFileTool(options()), { path: ".local/state/xstate-agent/abc/sessions.db", content: "forged" })],
      ["write a new file", () => run(writeFileTool(options()), { path: "link-to-store/new.db", content: "forged" })],
      ["list", () => run(listFilesTool(options()), { path: ".local/state/xstate-agent/abc" })],
      ["search", () => run(searchTextTool(options()), { pattern: "TODO", path: ".local/state/xstate-agent/abc" })],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt().then(() => undefined, (caught: unknown) => caught);
      expect(error, what).toBeInstanceOf(DeniedPathError);
      expect((error as DeniedPathError).message, what).toMatch(/off limits to the tools/);
    }
    expect(readFileSync(path.join(store, "sessions.db"), "utf8")).toBe("TODO secret journal\n");
  });

  it("recursive walks leave the denied path out; its parents stay listed", async () => {
    const listed = await run<ListFilesDetails>(listFilesTool(options()), { path: ".", recursive: true });
    expect(listed.details.entries).toContain(".local/state/xstate-agent/");
    expect(listed.details.entries.some((entry) => entry.includes("abc"))).toBe(false);
    const searched = await run<SearchTextDetails>(searchTextTool(options()), { pattern: "TODO", path: "." });
    expect(searched.details.matches.length).toBeGreaterThan(0);
    expect(searched.details.matches.some((match) => match.path.includes("sessions.db"))).toBe(false);
    expect(textOf(searched)).not.toContain("secret journal");
  });

  it("without deniedPaths the same file is readable (the option is what refuses it)", async () => {
    expect(textOf(await run(readFileTool({ cwd: root }), { path: ".local/state/xstate-agent/abc/sessions.db" }))).toContain("secret journal");
  });
});
