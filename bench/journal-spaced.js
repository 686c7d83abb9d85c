// node bench/journal-spaced.js [dist dir] (issue 33): what R81's write-ahead of provisional events
// costs when a model's deltas arrive one at a time (a real stream: each delta in its own task).
// Durable runs of one 500-delta response on the SQLite store, each delta a macrotask apart; prints
// records per run, CPU per run and the store's size. Compare two builds by passing their dist/.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { deltaStream, prompt, turnConfig } from "./scenarios.js";

const dist = resolve(process.argv[2] ?? new URL("../dist/", import.meta.url).pathname);
const { runAgentLoop } = await import(pathToFileURL(join(dist, "index.js")).href);
const { openSqliteStore } = await import(pathToFileURL(join(dist, "sqlite.js")).href);
const DELTAS = 500;
const RUNS = Number(process.env.BENCH_JOURNAL_RUNS ?? 20);

/** deltaStream's events, each after a setImmediate: what a network-paced provider looks like. */
const spacedStream = () => (...args) => {
  const inner = deltaStream(DELTAS)(...args);
  return {
    async *[Symbol.asyncIterator]() {
      for await (const event of inner) {
        await new Promise((next) => setImmediate(next));
        yield event;
      }
    },
    result: () => inner.result(),
  };
};

const dir = mkdtempSync(join(tmpdir(), "bench-spaced-"));
const file = join(dir, "sessions.db");
const store = openSqliteStore(file);
const started = process.cpuUsage();
for (let i = 0; i < RUNS; i++) {
  await runAgentLoop(prompt(), { messages: [], tools: [] }, turnConfig, () => {}, undefined, spacedStream(), { durable: { store, sessionId: `s${i}` } });
}
const cpu = process.cpuUsage(started);
const records = store.readSession("s1").records().length;
const bytes = [file, `${file}-wal`].reduce((sum, path) => sum + (statSync(path, { throwIfNoEntry: false })?.size ?? 0), 0);
store.close();
rmSync(dir, { recursive: true, force: true });
console.log(`journal, ${DELTAS} spaced deltas a run (${dist}): ${records} records a run, CPU ${((cpu.user + cpu.system) / 1000 / RUNS).toFixed(1)} ms a run, store ${(bytes / 1024 / RUNS).toFixed(0)} KB a run`);
