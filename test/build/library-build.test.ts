/**
 * Issue 16: `npm test` and `npm run example:web` on a fresh clone build dist/ themselves, with the
 * build `npm run build` runs (scripts/build.ts), and know when it is up to date.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildInputsHash, ensureLibraryBuilt, staleReason } from "../../scripts/build.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Every file package.json's `exports`, `main`, `types` and `bin` name. */
function publishedFiles(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    main: string;
    types: string;
    bin: Record<string, string>;
    exports: Record<string, string | Record<string, string>>;
  };
  const targets = Object.values(pkg.exports).flatMap((target) => (typeof target === "string" ? [target] : Object.values(target)));
  return [pkg.main, pkg.types, ...Object.values(pkg.bin), ...targets].filter((file) => file.startsWith("./dist/") || file.startsWith("dist/"));
}

describe("issue 16: the library build", () => {
  it("ensureLibraryBuilt() leaves every file package.json publishes in place, and dist/ up to date", async () => {
    await ensureLibraryBuilt();
    const files = publishedFiles();
    expect(files.length).toBeGreaterThanOrEqual(9);
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
    for (const file of ["tsconfig.json", "tsconfig.build.json", "scripts/build.ts", "node_modules/typescript/package.json", "machines/run.machine.ts", "src/index.ts", "src/deep/util.ts"]) {
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
