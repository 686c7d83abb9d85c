/**
 * Issue 16: `npm test` and `npm run example:web` on a fresh clone build dist/ themselves, with the
 * build `npm run build` runs (scripts/build.ts), and know when it is up to date.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildInputsHash, ensureLibraryBuilt, publishedFiles, staleReason } from "../../scripts/build.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

describe("issue 16: the library build", () => {
  it("ensureLibraryBuilt() leaves every file package.json publishes in place, and dist/ up to date", async () => {
    await ensureLibraryBuilt();
    const files = publishedFiles();
    expect(files.length).toBeGreaterThanOrEqual(9);
    expect(files).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "dist/src/node/cli/main.js"]));
    for (const file of files) expect(existsSync(join(ROOT, file)), file).toBe(true);
    expect(staleReason()).toBeNull();
    expect(await ensureLibraryBuilt()).toEqual({ rebuilt: false });
  }, 180_000);

  describe("staleness is read from the inputs' content, not their mtimes", () => {
    const root = mkdtempSync(join(tmpdir(), "xal-build-inputs-"));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const put = (file: string, text: string) => {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    };
    for (const file of ["tsconfig.json", "tsconfig.build.json", "scripts/build.ts", "scripts/entry-shims.mjs", "node_modules/typescript/package.json", "machines/run.machine.ts", "src/index.ts", "src/deep/util.ts"]) {
      put(file, `// ${file}\n`);
    }
    put("src/notes.md", "not an input\n");

    it("a fresh clone's new mtimes change nothing; a content change, a new or renamed source, the compiler's version do", () => {
      const before = buildInputsHash(root);
      const later = new Date(Date.now() + 86_400_000);
      utimesSync(join(root, "src/index.ts"), later, later);
      expect(buildInputsHash(root)).toBe(before);
      put("src/notes.md", "edited, still not an input\n");
      expect(buildInputsHash(root)).toBe(before);

      put("src/deep/util.ts", "// edited\n");
      const edited = buildInputsHash(root);
      expect(edited).not.toBe(before);
      put("src/added.ts", "\n");
      const added = buildInputsHash(root);
      expect(added).not.toBe(edited);
      renameSync(join(root, "src/added.ts"), join(root, "src/renamed.ts"));
      const renamed = buildInputsHash(root);
      expect(renamed).not.toBe(added);
      put("node_modules/typescript/package.json", '{"version":"9.9.9"}');
      expect(buildInputsHash(root)).not.toBe(renamed);
    });
  });
});
