// One process of `npm run bench:peers`: every peer that loads on this Node, every scenario, CPU time
// per run over interleaved rounds; prints one JSON line. Run by bench/peers/run.js.
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
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function round(scenario, column, runs) {
  global.gc?.();
  const start = cpuMs();
  for (let i = 0; i < runs; i++) {
    startRun(scenario);
    await column.run();
    checkRun(scenario, column.column, column.streams);
  }
  return ((cpuMs() - start) * 1000) / runs;
}

const results = {};
for (const scenario of SCENARIO_NAMES) {
  // A mode that delivers no deltas has nothing to do on the stream scenario.
  const here = columns.filter((column) => scenario !== "stream" || column.streams);
  const times = Object.fromEntries(here.map((column) => [column.column, []]));
  for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
    // Interleaved: every column once a round, the order rotating.
    const order = here.map((_, i) => here[(i + r) % here.length]);
    for (const column of order) {
      const perRun = await round(scenario, column, RUNS[scenario]);
      if (r >= WARMUP_ROUNDS) times[column.column].push(perRun);
    }
  }
  results[scenario] = Object.fromEntries(
    Object.entries(times).map(([column, xs]) => [column, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }]),
  );
}
console.log(JSON.stringify({ node: process.version, rounds: ROUNDS, runs: RUNS, notLoaded, columns: columns.map(({ column, kind, streams }) => ({ column, kind, streams })), results }));
