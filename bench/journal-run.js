// npm run bench (issue 20): bench (a)'s workload (runs of 5 turns x 3 parallel tools) journaled,
// side by side in one process: no store, the in-memory store, the SQLite store (WAL,
// synchronous=NORMAL, a temporary file). Target: the SQLite-journaled run <= 2x the in-memory one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgentLoop, createMemoryStore } from "../dist/index.js";
import { openSqliteStore } from "../dist/sqlite.js";
import { prompt, toolTurnsStream, turnConfig, turnTools } from "./scenarios.js";

const RUNS = Number(process.env.BENCH_JOURNAL_RUNS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const dir = mkdtempSync(join(tmpdir(), "bench-journal-"));
const stores = { memory: createMemoryStore(), sqlite: openSqliteStore(join(dir, "sessions.db")) };
let session = 0;

async function runs(kind) {
  for (let i = 0; i < RUNS; i++) {
    const options = kind === "none" ? {} : { durable: { store: stores[kind], sessionId: `s${session++}` } };
    await runAgentLoop(prompt(), { messages: [], tools: turnTools }, turnConfig, () => {}, undefined, toolTurnsStream(), options);
  }
}

const times = { none: [], memory: [], sqlite: [] };
await runs("none");
await runs("memory");
await runs("sqlite");
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ["none", "memory", "sqlite"] : ["sqlite", "memory", "none"];
  for (const kind of order) {
    global.gc?.();
    const start = performance.now();
    await runs(kind);
    times[kind].push((performance.now() - start) / RUNS);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const [none, memory, sqlite] = [median(times.none), median(times.memory), median(times.sqlite)];
const ratio = sqlite / memory;
console.log(`\n(j) journaled runs (5 turns x 3 parallel tools), ${RUNS} per round, median of ${ROUNDS} rounds`);
console.log(`    no store ${none.toFixed(2)} ms/run   in-memory store ${memory.toFixed(2)} ms/run (${(memory / none).toFixed(2)}x)   SQLite store ${sqlite.toFixed(2)} ms/run`);
console.log(`    SQLite / in-memory ${ratio.toFixed(2)}  (target <= 2)  ${ratio <= 2 ? "PASS" : "MISS"}   records per run: ${stores.memory.readSession("s1").records().length}`);
for (const store of Object.values(stores)) store.close();
rmSync(dir, { recursive: true, force: true });
