/**
 * Issue 15 item 6: one unreadable subdirectory no longer fails a whole recursive listing with a raw
 * EACCES. Root ignores file modes (and CI runs as root), so the tools run in a child process whose
 * privileges are dropped with `setpriv` to nobody (65534). The child is bundled into the temp
 * directory first (esbuild, which tsx brings), so that nobody need not be able to read the checkout.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";

const CHILD = path.join(import.meta.dirname, "unreadable-child.ts");
const asRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync("setpriv", ["--version"]).status === 0;
if (asRoot && !hasSetpriv) {
  if (process.env.CI) throw new Error("unreadable.test.ts: setpriv (util-linux) is required in CI to drop root's privileges");
  console.log("NOTICE: unreadable.test.ts skipped: running as root without setpriv (install util-linux), so file modes cannot be tested");
}

const base = mkdtempSync(path.join(tmpdir(), "xal-unreadable-"));
afterAll(() => {
  if (existsSync(path.join(base, "ws/locked"))) chmodSync(path.join(base, "ws/locked"), 0o755);
  rmSync(base, { recursive: true, force: true });
});

describe.skipIf(asRoot && !hasSetpriv)("issue 15 item 6: unreadable entries are skipped with a note", () => {
  it("item 6: a recursive listing and a search go on past an unreadable directory and file", async () => {
    const ws = path.join(base, "ws");
    mkdirSync(path.join(ws, "open"), { recursive: true });
    mkdirSync(path.join(ws, "locked"));
    writeFileSync(path.join(ws, "open/a.txt"), "needle\n");
    writeFileSync(path.join(ws, "locked/b.txt"), "needle\n");
    writeFileSync(path.join(ws, "locked-file.txt"), "needle\n");
    chmodSync(base, 0o755);
    chmodSync(path.join(ws, "locked"), 0o000);
    chmodSync(path.join(ws, "locked-file.txt"), 0o000);

    const bundle = path.join(base, "child.mjs");
    await build({
      entryPoints: [CHILD],
      outfile: bundle,
      bundle: true,
      platform: "node",
      format: "esm",
      logLevel: "silent",
      // CommonJS dependencies (picomatch) call require() for Node's built-ins.
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    });
    const command = asRoot ? "setpriv" : process.execPath;
    const args = [...(asRoot ? ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath] : []), bundle, ws];
    const output = execFileSync(command, args, { encoding: "utf8", cwd: tmpdir(), env: { ...process.env, HOME: tmpdir() } });
    const { uid, list, search, read } = JSON.parse(output.trim().split("\n").at(-1)!);
    expect(uid).not.toBe(0);
    expect(list).toEqual({
      ok: true,
      details: {
        path: ".",
        entries: ["locked/", "locked-file.txt", "open/", "open/a.txt"],
        files: 2,
        directories: 2,
        truncated: false,
        skipped: [{ path: "locked", reason: "permission denied" }],
      },
    });
    expect(search.ok).toBe(true);
    expect(search.details.matches).toEqual([{ path: "open/a.txt", line: 1, text: "needle" }]);
    expect(search.details.skipped).toEqual([
      { path: "locked", reason: "permission denied" },
      { path: "locked-file.txt", reason: "Permission denied: locked-file.txt" },
    ]);
    expect(read).toEqual({ ok: false, name: "ToolInputError", message: "Permission denied: locked-file.txt" });
  });
});
