// npm run bench (after file-tools.js): the durable store (issue 20, R80). On each SQLite engine this
// Node has (WAL, synchronous=NORMAL, a file in the temp directory):
//   - the cost of one journal append (median and p99 of single appends; target: median <= 100 µs),
//   - saving the snapshot of a 1,000-message transcript, and reading it back with the journal after
//     it, in this store and in a store opened afresh as a resuming process would (target <= 50 ms).
// The memory store's append is printed for comparison.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createMemoryStore } from "../dist/index.js";
import { openSqliteStore, StoreEngineUnavailableError } from "../dist/sqlite.js";
import { median } from "./sample.js";

const APPENDS = Number(process.env.BENCH_APPENDS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const APPEND_TARGET_US = 100;
const RESUME_TARGET_MS = 50;

const dir = mkdtempSync(path.join(tmpdir(), "xal-bench-store-"));
const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

/** A journal record of the size the run writes per tool call (an intent or an outcome). */
const record = (i) => ({
  type: i % 2 ? "tool_outcome" : "tool_intent",
  toolCallId: `toolu_${String(i).padStart(20, "0")}`,
  name: "read_file",
  args: { path: `src/module-${i % 97}.ts`, offset: 0, limit: 200 },
  at: 1_764_000_000_000 + i,
});

/** A 1,000-message transcript: user prompts, assistant turns with tool calls, tool results of a few hundred bytes. */
function transcript() {
  const messages = [];
  for (let i = 0; messages.length < 1000; i++) {
    messages.push({ role: "user", content: [{ type: "text", text: `Request ${i}: ${"please look at the module and fix it. ".repeat(3)}` }], timestamp: i });
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Reading module ${i}. `.repeat(4) },
        { type: "toolCall", id: `toolu_${i}`, name: "read_file", arguments: { path: `src/module-${i}.ts` } },
      ],
      usage: { input: 1200 + i, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1280 + i },
      stopReason: "toolUse",
      timestamp: i,
    });
    messages.push({ role: "toolResult", toolCallId: `toolu_${i}`, toolName: "read_file", content: [{ type: "text", text: `export const x${i} = ${i};\n`.repeat(12) }], isError: false, timestamp: i });
    messages.push({ role: "assistant", content: [{ type: "text", text: `Module ${i} is fine. `.repeat(5) }], stopReason: "stop", timestamp: i });
  }
  return { value: "idle", context: { messages: messages.slice(0, 1000) } };
}

function appendCost(store, sessionId) {
  const writer = store.openSession(sessionId);
  for (let i = 0; i < 200; i++) writer.append(record(i)); // warm-up: statements, pages, JIT
  const times = new Array(APPENDS);
  for (let i = 0; i < APPENDS; i++) {
    const start = performance.now();
    writer.append(record(i));
    times[i] = (performance.now() - start) * 1000;
  }
  writer.release();
  return { median: median(times), p99: p99(times) };
}

const engines = [];
for (const engine of ["node:sqlite", "better-sqlite3"]) {
  try {
    openSqliteStore(path.join(dir, `probe-${engines.length}.db`), { engine }).close();
    engines.push(engine);
  } catch (error) {
    if (!(error instanceof StoreEngineUnavailableError)) throw error;
  }
}

let missed = 0;
const verdict = (pass) => {
  if (!pass) missed++;
  return pass ? "PASS" : "MISS";
};
try {
  console.log(`journal store (issue 20), Node ${process.versions.node}, ${APPENDS.toLocaleString("en")} appends, snapshot median of ${ROUNDS} rounds:`);
  const memory = appendCost(createMemoryStore(), "bench");
  console.log(`  memory store append: median ${memory.median.toFixed(1)} µs, p99 ${memory.p99.toFixed(1)} µs  (information)`);
  for (const engine of engines) {
    const file = path.join(dir, `${engine.replace(":", "-")}.db`);
    const store = openSqliteStore(file, { engine });
    const append = appendCost(store, "appends");
    console.log(`  ${verdict(append.median <= APPEND_TARGET_US)}  ${engine} append: median ${append.median.toFixed(1)} µs, p99 ${append.p99.toFixed(1)} µs  (target median <= ${APPEND_TARGET_US} µs)`);

    // A 1,000-message session: its journal (3 records a message), then the snapshot at its end.
    const snapshot = transcript();
    const bytes = JSON.stringify(snapshot).length;
    const writer = store.openSession("resume");
    for (let i = 0; i < 3000; i++) writer.append(record(i));
    const saves = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      writer.saveSnapshot(snapshot, 3000 - 100);
      saves.push(performance.now() - start);
    }
    writer.release();
    const readBack = (target) => {
      const start = performance.now();
      const reader = target.readSession("resume");
      const saved = reader.snapshot();
      const after = reader.records(saved.atSeq);
      const ms = performance.now() - start;
      if (saved.snapshot.context.messages.length !== 1000 || after.length !== 100) throw new Error("the read-back lost data");
      return ms;
    };
    const reads = Array.from({ length: ROUNDS }, () => readBack(store));
    store.close();
    // A resuming process opens the store first: the file checks (quick_check) are part of its cost.
    const opens = [];
    const freshReads = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      const reopened = openSqliteStore(file, { engine });
      opens.push(performance.now() - start);
      freshReads.push(readBack(reopened));
      reopened.close();
    }
    const resume = median(opens) + median(freshReads);
    const megabytes = (statSync(file).size / 1024 / 1024).toFixed(1);
    console.log(`        ${engine} snapshot of 1,000 messages (${(bytes / 1024).toFixed(0)} KB): save ${median(saves).toFixed(1)} ms, read back with the 100 records after it ${median(reads).toFixed(1)} ms`);
    console.log(`  ${verdict(resume <= RESUME_TARGET_MS)}  ${engine} resume of a 1,000-message session in a new store object: open (${megabytes} MB file) ${median(opens).toFixed(1)} ms + read back ${median(freshReads).toFixed(1)} ms = ${resume.toFixed(1)} ms  (target <= ${RESUME_TARGET_MS} ms)`);
  }
  if (engines.length === 0) console.log("  MISS  no SQLite engine in this runtime");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (missed) console.log(`  ${missed} missed their target`);
