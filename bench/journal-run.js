// npm run bench (issue 20): bench (a)'s workload (runs of 5 turns x 3 parallel tools) journaled,
// side by side in one process: no store, the in-memory store, the SQLite store (WAL,
// synchronous=NORMAL, a temporary file). Target: the SQLite-journaled run <= 2x the in-memory one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgentLoop, createMemoryStore } from "../dist/index.js";
import { openSqliteStore } from "../dist/sqlite.js";
import { prompt, toolTurnsStream, turnConfig, turnTools } from "./scenarios.js";
import { beforeSample, median, wholeDesigns, williams } from "./sample.js";

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

// Rounds in whole Williams designs of the three kinds (6 rounds a design: every kind in every
// position and right after every other equally often; BENCH_ROUNDS 5 gives 6). Before each sample
// a macrotask turn and a scavenge (bench/sample.js), one full collection before the warm-up: a full
// collection before each sample, as until 2026-12-07, deoptimized every kind's hot code, so each
// sample timed its re-optimization (bench/README.md, "The four benches' harness").
const times = { none: [], memory: [], sqlite: [] };
const kinds = Object.keys(times);
const design = williams(kinds.length);
const total = wholeDesigns(ROUNDS, design);
global.gc?.();
await runs("none");
await runs("memory");
await runs("sqlite");
for (let round = 0; round < total; round++) {
  for (const kind of design[round % design.length].map((i) => kinds[i])) {
    await beforeSample();
    const start = performance.now();
    await runs(kind);
    times[kind].push((performance.now() - start) / RUNS);
  }
}
const [none, memory, sqlite] = [median(times.none), median(times.memory), median(times.sqlite)];
const ratio = sqlite / memory;
console.log(`\n(j) journaled runs (5 turns x 3 parallel tools), ${RUNS} per round, median of ${total} rounds`);
console.log(`    no store ${none.toFixed(2)} ms/run   in-memory store ${memory.toFixed(2)} ms/run (${(memory / none).toFixed(2)}x)   SQLite store ${sqlite.toFixed(2)} ms/run`);
console.log(`    SQLite / in-memory ${ratio.toFixed(2)}  (target <= 2)  ${ratio <= 2 ? "PASS" : "MISS"}   records per run: ${stores.memory.readSession("s1").records().length}`);
for (const store of Object.values(stores)) store.close();
rmSync(dir, { recursive: true, force: true });
