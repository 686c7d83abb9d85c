// One process of `npm run bench:peers`: every peer that loads on this Node, every scenario, CPU time
// per run over interleaved rounds; prints one JSON line. Run by bench/peers/run.js.
import { beforeSample, median, wholeDesigns, williams } from "../sample.js";
import { checkRun, SCENARIOS, startRun } from "./script.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
/** Runs per round and scenario, so a round is long enough for the CPU clock (about 10–50 ms of work). */
const RUNS = { a: 20, one: 100, stream: 2 };
const WARMUP_ROUNDS = 2;
/** `BENCH_PEERS=ours,pi` measures only those (pi, ours, ai, openai, langgraph); `BENCH_SCENARIOS=a,one` only those scenarios. */
const PEERS = process.env.BENCH_PEERS ? new Set(process.env.BENCH_PEERS.split(",")) : undefined;
const wanted = (peer) => !PEERS || PEERS.has(peer);
const SCENARIO_NAMES = process.env.BENCH_SCENARIOS ? process.env.BENCH_SCENARIOS.split(",") : Object.keys(SCENARIOS);

const columns = [];
const notLoaded = {};
/** A peer that does not load on this Node is reported as such; pi and ours must load (build first: `npm run build`). */
async function load(label, importer, required = false) {
  try {
    columns.push(...(await importer()));
  } catch (error) {
    if (required) throw error;
    notLoaded[label] = String(error?.message ?? error).split("\n")[0].slice(0, 160);
  }
}
if (wanted("pi")) await load("pi", async () => {
  const { piLike } = await import("./impl/pi-like.js");
  return piLike("pi", await import("@earendil-works/pi-agent-core"));
}, true);
if (wanted("ours")) await load("ours", async () => {
  const { piLike } = await import("./impl/pi-like.js");
  return piLike("ours", await import("../../dist/index.js"));
}, true);
if (wanted("ai")) await load("AI SDK 7", async () => (await import("./impl/ai-sdk.js")).columns);
if (wanted("openai")) await load("OpenAI Agents", async () => (await import("./impl/openai-agents.js")).columns);
if (wanted("langgraph")) await load("LangGraph", async () => (await import("./impl/langgraph.js")).columns);

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function round(scenario, column, runs) {
  // A macrotask turn and a scavenge, not a full collection, which deoptimized every column's hot
  // code each turn: on the stream row, two runs a turn, half of every column's time (bench/sample.js;
  // bench/README.md, "bench:peers' stream row").
  await beforeSample();
  const start = cpuMs();
  for (let i = 0; i < runs; i++) {
    startRun(scenario);
    await column.run();
    checkRun(scenario, column.column, column.streams);
  }
  return ((cpuMs() - start) * 1000) / runs;
}

const results = {};
const rounds = {};
for (const scenario of SCENARIO_NAMES) {
  // A mode that delivers no deltas has nothing to do on the stream scenario.
  const here = columns.filter((column) => scenario !== "stream" || column.streams);
  const times = Object.fromEntries(here.map((column) => [column.column, []]));
  // The order of the columns in each round: a row of a Williams design (bench/sample.js). A column's
  // time depends on the one before it: a rotation always put our Agent after our loop and pi's
  // Agent after pi's loop. At least BENCH_ROUNDS rounds, in whole designs, so the balance holds.
  const design = williams(here.length);
  rounds[scenario] = wholeDesigns(ROUNDS, design);
  // The scenario before's garbage, collected once before this one's warm-up (which re-optimizes what
  // this full collection deoptimizes).
  global.gc?.();
  for (let r = 0; r < WARMUP_ROUNDS + rounds[scenario]; r++) {
    // Interleaved: every column once a round; the warm-up rounds use the design's last rows.
    const order = design[(r - WARMUP_ROUNDS + design.length * WARMUP_ROUNDS) % design.length].map((i) => here[i]);
    for (const column of order) {
      const perRun = await round(scenario, column, RUNS[scenario]);
      if (r >= WARMUP_ROUNDS) times[column.column].push(perRun);
    }
  }
  results[scenario] = Object.fromEntries(
    Object.entries(times).map(([column, xs]) => [column, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }]),
  );
}
console.log(JSON.stringify({ node: process.version, rounds, runs: RUNS, notLoaded, columns: columns.map(({ column, kind, streams }) => ({ column, kind, streams })), results }));
