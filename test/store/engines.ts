/** The SQLite engines this Node can load: node:sqlite from Node 22.13, better-sqlite3 where it is installed and built for this Node. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { loadEngine, type SqliteEngineName } from "../../src/store/sqlite/engine.js";

export function availableEngines(): SqliteEngineName[] {
  return (["node:sqlite", "better-sqlite3"] as const).filter((engine) => {
    try {
      // Loading is not enough: better-sqlite3 built for another Node fails when it opens.
      loadEngine(engine)(":memory:").close();
      return true;
    } catch {
      return false;
    }
  });
}

/** Node ≥ 22.13 (or 23.4+) has node:sqlite unflagged. */
export function nodeHasSqlite(): boolean {
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 13);
}

/** A temporary directory for this test file, removed after it. */
export function tempDirectory(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    made.push(dir);
    return dir;
  };
}
