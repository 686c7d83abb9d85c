import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, SessionLockedError, StoreEngineUnavailableError, StoreInputError } from "../../src/sqlite.js";
import { loadEngine } from "../../src/store/sqlite/engine.js";
import { describeStoreContract } from "./store-contract.js";
import { availableEngines, nodeHasSqlite, tempDirectory } from "./engines.js";

const temp = tempDirectory("sqlite-store");
const engines = availableEngines();

describe("SQLite engines", () => {
  it("R80: node:sqlite is used where Node has it (≥ 22.13), better-sqlite3 otherwise", () => {
    // On Node 20 the devDependency better-sqlite3 must load: the contract below then runs on it.
    expect(engines).toContain(nodeHasSqlite() ? "node:sqlite" : "better-sqlite3");
    const store = openSqliteStore(join(temp(), "auto.db"));
    expect(store.engine).toBe(nodeHasSqlite() ? "node:sqlite" : "better-sqlite3");
    store.close();
  });

  it("R84: neither engine available is StoreEngineUnavailableError naming both", () => {
    const loaders = {
      nodeSqlite: () => undefined,
      betterSqlite: () => {
        throw new Error("Cannot find module 'better-sqlite3'");
      },
    };
    expect(() => loadEngine("auto", loaders)).toThrow(StoreEngineUnavailableError);
    expect(() => openSqliteStore(join(temp(), "none.db"), { engineLoaders: loaders })).toThrow(
      /no SQLite engine is available \(Node .* has no node:sqlite .*; better-sqlite3 did not load: Cannot find module 'better-sqlite3'\)/,
    );
    expect(() => loadEngine("node:sqlite", loaders)).toThrow(expect.objectContaining({ tried: ["node:sqlite"] }));
  });

  it("R84: a better-sqlite3 whose native addon does not load (built for another Node) is StoreEngineUnavailableError", () => {
    class Unbuilt {
      constructor() {
        throw new Error("The module 'better_sqlite3.node' was compiled against a different Node.js version");
      }
    }
    const loaders = { nodeSqlite: () => undefined, betterSqlite: () => Unbuilt as never };
    expect(() => openSqliteStore(join(temp(), "unbuilt.db"), { engineLoaders: loaders })).toThrow(
      expect.objectContaining({ name: "StoreEngineUnavailableError", message: expect.stringContaining("compiled against a different Node.js version") }),
    );
  });

  it("R84: a path that is not a file is StoreInputError", () => {
    expect(() => openSqliteStore("")).toThrow(StoreInputError);
    expect(() => openSqliteStore(":memory:")).toThrow(StoreInputError);
  });
});

for (const engine of engines) {
  describeStoreContract(`SQLite store (${engine})`, (clock) => openSqliteStore(join(temp(), "store.db"), { engine, clock }));

  describe(`SQLite store (${engine}): durability and sharing`, () => {
    it("R80: what was appended is there after the store is closed and opened again", () => {
      const file = join(temp(), "reopen.db");
      const first = openSqliteStore(file, { engine });
      const writer = first.openSession("s1", { meta: { title: "t" } });
      writer.append({ n: 1 });
      writer.append({ n: 2 });
      writer.saveSnapshot({ at: 2 }, 2);
      first.close();
      const second = openSqliteStore(file, { engine });
      const reader = second.readSession("s1");
      expect([reader.records(), reader.snapshot(), reader.info().meta]).toEqual([
        [
          { seq: 1, record: { n: 1 } },
          { seq: 2, record: { n: 2 } },
        ],
        { snapshot: { at: 2 }, atSeq: 2 },
        { title: "t" },
      ]);
      // close() released the first store's lock.
      expect(second.openSession("s1").append({ n: 3 })).toBe(3);
      second.close();
    });

    it("retention: a deleted session's pages are given back, so the file shrinks", () => {
      const file = join(temp(), "shrink.db");
      const store = openSqliteStore(file, { engine });
      const big = store.openSession("big");
      for (let i = 0; i < 500; i++) big.append({ i, text: "x".repeat(1000) });
      big.release();
      store.openSession("small").append("kept");
      store.close(); // checkpoints the WAL into the file
      const full = statSync(file).size;
      const again = openSqliteStore(file, { engine });
      again.deleteSession("big");
      again.close();
      expect(statSync(file).size).toBeLessThan(full / 5);
      const last = openSqliteStore(file, { engine });
      expect(last.readSession("small").records()).toEqual([{ seq: 1, record: "kept" }]);
      last.close();
    });

    it("R84: two stores on one file in one process: one writer per session, other sessions free", () => {
      const file = join(temp(), "two.db");
      const a = openSqliteStore(file, { engine });
      const b = openSqliteStore(file, { engine });
      const writer = a.openSession("s");
      writer.append("from a");
      expect(() => b.openSession("s")).toThrow(SessionLockedError);
      expect(() => b.deleteSession("s")).toThrow(SessionLockedError);
      expect(b.openSession("t").append("from b")).toBe(1);
      // b reads what a wrote, and a what b wrote: one file.
      expect(b.readSession("s").records()).toEqual([{ seq: 1, record: "from a" }]);
      expect(a.readSession("t").records()).toEqual([{ seq: 1, record: "from b" }]);
      writer.release();
      expect(b.openSession("s").append("now b")).toBe(2);
      a.close();
      b.close();
    });
  });
}
