/**
 * R84: a path that cannot hold a store is the typed `StorePathError` naming it, never a raw
 * EISDIR/ENOTDIR/SQLITE_CANTOPEN error, and nothing is written: a store already there still opens
 * and reads as it was once the layout is put right.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, StorePathError } from "../../src/sqlite.js";
import { thrown } from "../support/thrown.js";
import { availableEngines, tempDirectory } from "./engines.js";

const temp = tempDirectory("hostile-paths");

/** A store with one session of one record at `file`, closed. */
function writeStore(file: string, options: Parameters<typeof openSqliteStore>[1]) {
  const store = openSqliteStore(file, options);
  const writer = store.openSession("kept");
  writer.append("record");
  writer.release();
  store.close();
}

for (const engine of availableEngines()) {
  describe(`R84: hostile store paths (${engine})`, () => {
    it("the path is a directory; a directory on the way is a file; a dangling symbolic link", () => {
      const dir = temp();
      mkdirSync(join(dir, "a-directory.db"));
      writeFileSync(join(dir, "a-file"), "x");
      symlinkSync(join(dir, "nowhere", "target.db"), join(dir, "dangling.db"));
      for (const path of [join(dir, "a-directory.db"), join(dir, "a-file", "store.db"), join(dir, "dangling.db")]) {
        const error = thrown(() => openSqliteStore(path, { engine }));
        expect(error, path).toBeInstanceOf(StorePathError);
        expect(error).toMatchObject({ path });
        expect((error as Error).message).toContain(`the session store at ${path} cannot be opened`);
      }
      expect(readFileSync(join(dir, "a-file"), "utf8")).toBe("x");
    });

    it("a dangling symbolic link whose target's directory exists: StorePathError, and nothing is created at the target", () => {
      const dir = temp();
      const link = join(dir, "store.db");
      symlinkSync(join(dir, "target.db"), link);
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = thrown(() => openSqliteStore(link, { engine }));
        expect(error).toBeInstanceOf(StorePathError);
        expect((error as Error).message).toContain(`${join(dir, "target.db")}, which does not exist (a dangling link); nothing was written`);
        expect(readdirSync(dir)).toEqual(["store.db"]);
      }
      // The link is the user's: once its target is a store, it opens through it.
      writeStore(join(dir, "target.db"), { engine });
      const store = openSqliteStore(link, { engine });
      expect(store.readSession("kept").records()).toEqual([{ seq: 1, record: "record" }]);
      store.close();
    });

    for (const beside of ["-wal", "-shm"]) {
      it(`SQLite's ${beside} file is a directory: refused, the store untouched, and it opens once the directory is gone`, () => {
        const file = join(temp(), "store.db");
        writeStore(file, { engine });
        const bytes = readFileSync(file);
        mkdirSync(`${file}${beside}`);
        expect(thrown(() => openSqliteStore(file, { engine }))).toBeInstanceOf(StorePathError);
        expect(readFileSync(file).equals(bytes)).toBe(true);
        rmSync(`${file}${beside}`, { recursive: true });
        const store = openSqliteStore(file, { engine });
        expect(store.readSession("kept").records()).toEqual([{ seq: 1, record: "record" }]);
        store.close();
      });
    }
  });
}
