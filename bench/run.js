// npm run bench: the statechart runtime against the reference (pi-agent-core 1.6.0's runAgentLoop),
// side by side in one process, same stream function, tools and sink. Medians over alternating rounds.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runAgentLoop as statechartLoop, Agent as StatechartAgent } from "../dist/index.js";
import { runAgentLoop as referenceLoop, Agent as ReferenceAgent } from "@earendil-works/pi-agent-core";
import { concurrentLoopRuns, concurrentPrompts, convertToLlm, deltaStream, E_SCALE_MS, manyBlocksStream, model, newAgent, prompt, promptsOnOneAgent, promptsThroughLoop, runToolTurns, timedToolRun, transcript } from "./scenarios.js";
import { beforeSample, median, wholeDesigns, williams } from "./sample.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const loops = { statechart: statechartLoop, reference: referenceLoop };
const sink = () => {};

// One run is ~5 ms, below the timer's noise: a round times 10 runs; the ratio is per run either way.
async function runDeltas(loop, history) {
  for (let i = 0; i < 10; i++) {
    await loop(prompt(), { messages: history, tools: [] }, { model, convertToLlm }, sink, undefined, deltaStream(10_000));
  }
}

const repeat = async (times, body) => {
  for (let i = 0; i < times; i++) await body();
};
const pct = (x) => `${(x * 100).toFixed(0)}%`;

// Time spent in garbage collection during a round (GC entries are delivered asynchronously, so a
// round's total is read after a macrotask).
let gcTime = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcTime += entry.duration;
}).observe({ entryTypes: ["gc"] });
const settleGcEntries = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Both sides' medians over rounds in whole Williams designs (for two sides: AB, BA, so each runs
 * first as often as second; `rounds` 7 gives 8). Before each sample `beforeSample()` (bench/sample.js):
 * a macrotask turn and a scavenge. Not a full collection, which until 2026-12-07 ran before each
 * sample here and deoptimized both sides' hot code ("embedded weak objects cleared"), so every
 * sample timed its own re-optimization (bench/README.md, "The four benches' harness"). Each
 * scenario's caller collects fully once before its warm-up. `forceGc` (information only, (b) and
 * (c)): a full collection before each sample, the old way, printed beside the judged ratio.
 */
async function measure(name, body, rounds = ROUNDS, { forceGc = false } = {}) {
  const times = { statechart: [], reference: [] };
  const gcShare = { statechart: [], reference: [] };
  const names = ["statechart", "reference"];
  const design = williams(names.length);
  for (let round = 0; round < wholeDesigns(rounds, design); round++) {
    for (const impl of design[round % design.length].map((i) => names[i])) {
      if (forceGc) global.gc?.();
      else await beforeSample();
      await settleGcEntries();
      gcTime = 0;
      const start = performance.now();
      await body(loops[impl], impl);
      const elapsed = performance.now() - start;
      await settleGcEntries();
      times[impl].push(elapsed);
      gcShare[impl].push(gcTime / elapsed);
    }
  }
  const s = median(times.statechart);
  const r = median(times.reference);
  return { name, statechart: s, reference: r, ratio: s / r, gc: { statechart: median(gcShare.statechart), reference: median(gcShare.reference) } };
}

function heapAfter() {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage().heapUsed;
}

// (a), (b), (c) each in a process of its own: `BENCH_ONLY=a node --expose-gc bench/run.js` prints one JSON line.
const agentClasses = { statechart: StatechartAgent, reference: ReferenceAgent };
const history = transcript(5000);
/**
 * (b) and (c) are judged on rounds with a scavenge before each, as every scenario here. A full
 * `gc()` before each round of 10 runs (as (a) had, once per 1,000 runs, until 2026-12-07) is a full
 * collection every 30–50 ms of work, and after one our runs take several runs to get back to speed
 * where the reference's take one (2026-12-03: 4.5, 4.7, 3.8 … then 2.2–2.8 ms; the reference 2.5,
 * then 1.8–2.0). So that variant would time our recovery from collections no stream sees that
 * often; it is printed too, for information.
 */
const deltaScenario = (name, messages) => ({
  warmUp: (loop) => repeat(5, () => runDeltas(loop, messages)),
  measure: async () => {
    const body = (loop) => runDeltas(loop, messages);
    return { ...(await measure(name, body)), forcedGc: await measure(name, body, ROUNDS, { forceGc: true }) };
  },
});
// (b) with many blocks (issue 40): a response of `blocks` text blocks x 3 deltas, 5 runs a round;
// judged at 1,000 blocks against the reference, and on what doubling the blocks does to our time.
// CPU time, alternating rounds: on a shared machine the wall time of a 5 ms run is mostly the wait
// for a core (it read 9.4x one afternoon where CPU time read 2.4x).
const runBlocks = (loop, blocks) => repeat(5, () => loop(prompt(), { messages: [], tools: [] }, { model, convertToLlm }, sink, undefined, manyBlocksStream(blocks)));
async function measureBlocks(blocks) {
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const times = { statechart: [], reference: [] };
  const names = ["statechart", "reference"];
  const design = williams(names.length);
  for (let round = 0; round < wholeDesigns(ROUNDS, design); round++) {
    for (const impl of design[round % design.length].map((i) => names[i])) {
      await beforeSample();
      const start = cpu();
      await runBlocks(loops[impl], blocks);
      times[impl].push(cpu() - start);
    }
  }
  return { statechart: median(times.statechart), reference: median(times.reference) };
}
const perProcessScenarios = {
  a: { warmUp: (loop) => runToolTurns(loop, 200), measure: () => measure("(a) 1,000 runs x 5 turns x 3 parallel tools", (loop) => runToolTurns(loop, 1000)) },
  b: deltaScenario("(b) 1 run x 10,000 text deltas (x10 per round)", []),
  c: deltaScenario("(c) 10,000 deltas, 5,000-message transcript (x10)", history),
  m: {
    warmUp: (loop) => runBlocks(loop, 2000),
    measure: async () => {
      const thousand = await measureBlocks(1000);
      const twice = await measureBlocks(2000);
      const doubling = { statechart: twice.statechart / thousand.statechart, reference: twice.reference / thousand.reference };
      return { name: "(b) 1,000 text blocks x 3 deltas (x5, CPU ms)", ...thousand, ratio: thousand.statechart / thousand.reference, gc: null, doubling };
    },
  },
};
const only = perProcessScenarios[process.env.BENCH_ONLY];
if (only) {
  // The process's start-up garbage, collected once before the warm-up (which re-optimizes what it deoptimizes).
  global.gc?.();
  await only.warmUp(statechartLoop);
  await only.warmUp(referenceLoop);
  console.log(JSON.stringify(await only.measure()));
  process.exit(0);
}

/**
 * (g) in a process of its own per implementation (`BENCH_ONLY=g BENCH_IMPL=statechart`): heap per
 * Agent, idle and after one prompt, over AGENTS Agents after gc(), and what their transcripts
 * alone hold: each Agent's own transcript (the very messages, one array each, as
 * `state.messages` returns it) kept while the Agents are dropped. (A `structuredClone` of the
 * messages, used before 2026-12-05, copies every string the messages share with each other and
 * with the program, "assistant" or the model's id, and so read the transcript ~0.35 KB too large.)
 * The warm-up runs as many prompts as are measured, so the optimized code of the prompt path is
 * made before the base line and is not counted per Agent.
 */
const AGENTS = Number(process.env.BENCH_AGENTS ?? 10_000);
if (process.env.BENCH_ONLY === "g") {
  const AgentClass = agentClasses[process.env.BENCH_IMPL];
  // Warm-up: modules, the provided machine, JIT, with Agents that are then dropped.
  let warm = Array.from({ length: AGENTS }, () => newAgent(AgentClass));
  await Promise.all(warm.map((agent) => agent.prompt("warm")));
  warm = [];
  const base = heapAfter();
  // Each phase: the Agents' heap, then their transcripts alone (the Agents dropped).
  const phase = async (prompted) => {
    let agents = [];
    for (let i = 0; i < AGENTS; i++) agents.push(newAgent(AgentClass));
    if (prompted) await Promise.all(agents.map((agent, i) => agent.prompt(`prompt ${i}`)));
    const heap = heapAfter();
    // Read after the heap: an Agent whose `state.messages` is read keeps a view of it (~0.1 KB).
    const transcripts = agents.map((agent) => agent.state.messages);
    if (prompted && transcripts.some((messages) => messages.length !== 2)) throw new Error("bench (g): an Agent did not get its answer");
    agents = [];
    const alone = heapAfter();
    return { agent: (heap - base) / AGENTS, transcript: (alone - base) / AGENTS, held: transcripts.length };
  };
  const idle = await phase(false);
  const prompted = await phase(true);
  console.log(JSON.stringify({ idle: idle.agent, idleTranscript: idle.transcript, prompted: prompted.agent, transcript: prompted.transcript, aboveTranscript: prompted.agent - prompted.transcript, held: idle.held + prompted.held }));
  process.exit(0);
}
function measureGInProcess(impl) {
  const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url)], { env: { ...process.env, BENCH_ONLY: "g", BENCH_IMPL: impl }, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`bench (g) process failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1));
}

/** (f), (h), (g): the Agent classes side by side (issue 19). */
async function measureScale() {
  const SCALE_ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 5);
  const kb = (bytes) => `${(bytes / 1024).toFixed(2)} KB`;
  const lines = [];
  // (f): alternating rounds; the second thousand against the first, on our side. A full collection
  // before the warm-up only (the heap measurement before this ran full collections).
  global.gc?.();
  await promptsOnOneAgent(StatechartAgent, 1000);
  await promptsOnOneAgent(ReferenceAgent, 1000);
  const laps = { statechart: [], reference: [] };
  const f = await measure("(f) 2,000 prompts on one Agent", async (_loop, impl) => laps[impl].push(await promptsOnOneAgent(agentClasses[impl], 2000)), SCALE_ROUNDS);
  const growth = median(laps.statechart.map(([first, second]) => second / first));
  const referenceGrowth = median(laps.reference.map(([first, second]) => second / first));
  lines.push(verdictLine({ ...f, target: 2.0 }));
  lines.push(`${"".padEnd(52)} second thousand / first: statechart ${growth.toFixed(2)} (target <= 1.15) ${growth <= 1.15 ? "PASS" : "MISS"}, reference ${referenceGrowth.toFixed(2)}`);
  // What the run machine alone takes for the same runs (no Agent, no session): the floor under (f).
  const loopLaps = { statechart: [], reference: [] };
  const fLoop = await measure("    the same 2,000 runs through runAgentLoop", async (loop, impl) => loopLaps[impl].push(await promptsThroughLoop(loop, 2000)), SCALE_ROUNDS);
  lines.push(infoLine(fLoop));
  const loopGrowth = (impl) => median(loopLaps[impl].map(([first, second]) => second / first)).toFixed(2);
  lines.push(`${"".padEnd(52)} second thousand / first: statechart ${loopGrowth("statechart")}, reference ${loopGrowth("reference")}`);
  // (h): the Agents are created outside the timed part (concurrentPrompts times the prompts only).
  const elapsed = { statechart: [], reference: [] };
  await measure("warm-up", async (_loop, impl) => void (await concurrentPrompts(agentClasses[impl], 500)), 1);
  const h = await measure(`(h) ${AGENTS.toLocaleString("en")} concurrent one-turn prompts`, async (_loop, impl) => elapsed[impl].push(await concurrentPrompts(agentClasses[impl], AGENTS)), SCALE_ROUNDS);
  const hs = median(elapsed.statechart);
  const hr = median(elapsed.reference);
  lines.push(verdictLine({ ...h, statechart: hs, reference: hr, ratio: hs / hr, target: 2.5 }));
  const hLoop = await measure(`    the same ${AGENTS.toLocaleString("en")} runs through runAgentLoop`, (loop) => concurrentLoopRuns(loop, AGENTS), SCALE_ROUNDS);
  lines.push(infoLine(hLoop));
  // (g): a fresh process per implementation.
  const g = { statechart: measureGInProcess("statechart"), reference: measureGInProcess("reference") };
  const aboveTranscript = g.statechart.idle - g.statechart.idleTranscript;
  lines.push(`(g) heap per idle Agent (${AGENTS.toLocaleString("en")} Agents, after gc()): statechart ${kb(g.statechart.idle)} (${kb(aboveTranscript)} above its transcript of ${kb(g.statechart.idleTranscript)}), reference ${kb(g.reference.idle)}  (target <= 3 KB above) ${aboveTranscript <= 3072 ? "PASS" : "MISS"}`);
  lines.push(`(g) heap per Agent after one prompt: statechart ${kb(g.statechart.prompted)} (transcript ${kb(g.statechart.transcript)}), reference ${kb(g.reference.prompted)}  (target <= 5 KB) ${g.statechart.prompted <= 5120 ? "PASS" : "MISS"}`);
  return lines;
}

function infoLine(r) {
  return `${r.name.padEnd(52)} statechart ${r.statechart.toFixed(1).padStart(8)} ms  reference ${r.reference.toFixed(1).padStart(8)} ms  ratio ${r.ratio.toFixed(2)}  (the run machine's part)`;
}

function verdictLine(r) {
  const verdict = r.ratio <= r.target ? "PASS" : "MISS";
  return `${r.name.padEnd(52)} statechart ${r.statechart.toFixed(1).padStart(8)} ms  reference ${r.reference.toFixed(1).padStart(8)} ms  ratio ${r.ratio.toFixed(2)}  (target <= ${r.target})  ${verdict}`;
}

if (process.env.BENCH_ONLY === "scale") {
  console.log(`\nAgents at scale, statechart / reference (node ${process.version})\n`);
  for (const line of await measureScale()) console.log(line);
  process.exit(0);
}

/**
 * (e) issue 18, SPEC R70: a response streaming for 3 s whose three safe calls complete at 0.5,
 * 1.0 and 1.5 s, tools of 1.5 s, then a 0.5 s answer, on real timers scaled to E_SCALE_MS per
 * second. Pi's mode (tools after the response) takes 5.0 s, the ideal schedule 3.5 s; streaming
 * mode's target is within 5 % of the ideal (<= 0.735x pi's mode and the reference). The second
 * variant has the calls at the end of the stream, where Claude usually puts them.
 */
async function measureE() {
  const ROUNDS_E = Number(process.env.BENCH_E_ROUNDS ?? 5);
  const variants = [
    { label: "calls at 0.5/1.0/1.5 s", callsAtS: [0.5, 1.0, 1.5], check: true },
    { label: "calls at the end (2.5/2.75/3.0 s)", callsAtS: [2.5, 2.75, 3.0], check: false },
  ];
  const lines = [];
  for (const variant of variants) {
    const impls = {
      streaming: () => timedToolRun(statechartLoop, { streaming: true, callsAtS: variant.callsAtS }),
      default: () => timedToolRun(statechartLoop, { streaming: false, callsAtS: variant.callsAtS }),
      reference: () => timedToolRun(referenceLoop, { streaming: false, callsAtS: variant.callsAtS }),
    };
    const times = { streaming: [], default: [], reference: [] };
    for (const run of Object.values(impls)) await run();
    for (let round = 0; round < ROUNDS_E; round++) {
      const names = Object.keys(impls);
      for (const name of round % 2 === 0 ? names : names.reverse()) times[name].push(await impls[name]());
    }
    const s = median(times.streaming) / E_SCALE_MS;
    const d = median(times.default) / E_SCALE_MS;
    const r = median(times.reference) / E_SCALE_MS;
    const ratioDefault = s / d;
    const ratioReference = s / r;
    const verdict = variant.check ? (s <= 3.675 && ratioDefault <= 0.735 && ratioReference <= 0.735 ? "PASS" : "MISS") : "(information)";
    const target = variant.check ? "(target <= 3.675 s, <= 0.735x both)" : "";
    lines.push(
      `(e) ${variant.label.padEnd(34)} streaming ${s.toFixed(2)} s  default ${d.toFixed(2)} s  reference ${r.toFixed(2)} s  ratio ${ratioDefault.toFixed(3)} / ${ratioReference.toFixed(3)}  ${target}  ${verdict}`,
    );
  }
  lines.push(`    (seconds of the scenario; real timers, 1 s = ${E_SCALE_MS} ms; medians of ${Number(process.env.BENCH_E_ROUNDS ?? 5)} alternating rounds)`);
  return lines;
}
if (process.env.BENCH_ONLY === "i") {
  console.log(`\nInspectors on bench (a) (node ${process.version})\n`);
  await runToolTurns(statechartLoop, 200);
  for (const line of await measureI()) console.log(line);
  process.exit(0);
}
if (process.env.BENCH_ONLY === "e") {
  console.log(`\nTools that start while the model streams (node ${process.version})\n`);
  for (const line of await measureE()) console.log(line);
  process.exit(0);
}

/**
 * (a), (b) and (c) vary more between processes than between rounds of one process (V8 takes its
 * pretenuring and inlining decisions per process, and GC is a fifth of the statechart's time), and
 * a scenario measured after another one inherits its heap and its feedback: (b) read 1.21, 1.77 and
 * 1.96 in three runs of this process after (a)'s warm-ups. So each is measured in PROCESSES fresh
 * processes, one after another, each warming up on the scenario itself and then alternating rounds
 * of both loops, and judged on the median of their ratios.
 */
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);
function measureInProcess(scenario) {
  const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url)], { env: { ...process.env, BENCH_ONLY: scenario }, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`bench (${scenario}) process failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1));
}
const perProcess = {};
const results = [];
for (const [scenario, target] of [["a", 5.0], ["b", 1.5], ["c", 1.5], ["m", 1.5]]) {
  perProcess[scenario] = [];
  for (let i = 0; i < PROCESSES; i++) perProcess[scenario].push(measureInProcess(scenario));
  const byRatio = [...perProcess[scenario]].sort((x, y) => x.ratio - y.ratio);
  const middle = byRatio[Math.floor(byRatio.length / 2)];
  results.push({ ...middle, scenario, name: `${middle.name}, median of ${PROCESSES} processes`, target });
}
// warm-up both, for what follows in this process
await runToolTurns(statechartLoop, 200);
await runToolTurns(referenceLoop, 200);

console.log(`\nstatechart / reference, medians of ${wholeDesigns(ROUNDS, williams(2))} alternating rounds, a scavenge before each (node ${process.version})\n`);
for (const scenario of Object.keys(perProcess)) console.log(`(${scenario}) per process: ${perProcess[scenario].map((r) => r.ratio.toFixed(2)).join(", ")}`);
for (const r of results) {
  const verdict = r.ratio <= r.target ? "PASS" : "MISS";
  console.log(`${r.name.padEnd(52)} statechart ${r.statechart.toFixed(1).padStart(8)} ms  reference ${r.reference.toFixed(1).padStart(8)} ms  ratio ${r.ratio.toFixed(2)}  (target <= ${r.target})  ${verdict}`);
  if (r.gc) console.log(`${"".padEnd(52)} time in GC: statechart ${pct(r.gc.statechart)}, reference ${pct(r.gc.reference)}`);
  if (r.doubling) {
    console.log(`${"".padEnd(52)} 2,000 blocks / 1,000: statechart ${r.doubling.statechart.toFixed(2)} (target <= 2.3) ${r.doubling.statechart <= 2.3 ? "PASS" : "MISS"}, reference ${r.doubling.reference.toFixed(2)}`);
  }
  if (r.forcedGc) {
    const forced = perProcess[r.scenario].map((p) => p.forcedGc.ratio);
    console.log(`${"".padEnd(52)} with gc() before every round (information): ${forced.map((x) => x.toFixed(2)).join(", ")}`);
  }
}

// Heap: after 10,000 runs of (a) versus after 1,000, past warm-up.
const heap1k = (await runToolTurns(statechartLoop, 1000), heapAfter());
await runToolTurns(statechartLoop, 9000);
const heap10k = heapAfter();
const growth = (heap10k - heap1k) / heap1k;
console.log(`\nheap after 1,000 runs of (a): ${(heap1k / 1e6).toFixed(1)} MB; after 10,000: ${(heap10k / 1e6).toFixed(1)} MB; growth ${(growth * 100).toFixed(1)}%  (target <= 10%)  ${growth <= 0.1 ? "PASS" : "MISS"}`);
if (!global.gc) console.log("(run with node --expose-gc for meaningful heap figures)");

console.log("");
for (const line of await measureE()) console.log(line);

console.log("");
for (const line of await measureScale()) console.log(line);
console.log("");
for (const line of await measureI()) console.log(line);

// (i) issue 19: bench (a) with an inspector attached, against (a) without one, in this process,
// alternating rounds. The sanitizing observer's target ignores what it gets (as measured on main);
// a second target reads every field (each is sanitized when first read), printed for information.
// `BENCH_ONLY=i` runs only this (after the same warm-up), in the same way.
async function measureI() {
  const { sanitizingObserver } = await import("../dist/inspect.js");
  const { createTraceRecorder } = await import("../dist/src/trace/index.js");
  const RUNS_I = 1000;
  const attach = (make) => async () => {
    const { sink, inspect } = make();
    const loop = (prompts, context, config, _sink, signal, stream) => statechartLoop(prompts, context, config, sink, signal, stream, inspect ? { inspect } : undefined);
    await runToolTurns(loop, RUNS_I);
  };
  const variants = {
    none: attach(() => ({ sink: () => {} })),
    sanitizing: attach(() => ({ sink: () => {}, inspect: sanitizingObserver(() => {}) })),
    reading: attach(() => ({ sink: () => {}, inspect: sanitizingObserver((e) => void [e.snapshot, e.event, e.action]) })),
    trace: attach(() => {
      let bytes = 0;
      const recorder = createTraceRecorder({ write: (line) => void (bytes += line.length), secrets: ["sk-bench-secret-key"] });
      return { sink: (event) => recorder.recordEvent(event), inspect: recorder.inspect };
    }),
  };
  const timesI = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  // Rounds in whole Williams designs of the four variants (every one in every position, and right
  // after every other, equally often: 7 rounds give 8), a scavenge before each sample and one full
  // collection before the warm-up (bench/sample.js).
  const names = Object.keys(variants);
  const design = williams(names.length);
  const total = wholeDesigns(ROUNDS, design);
  global.gc?.();
  for (const body of Object.values(variants)) await body();
  for (let round = 0; round < total; round++) {
    for (const name of design[round % design.length].map((i) => names[i])) {
      await beforeSample();
      const start = performance.now();
      await variants[name]();
      timesI[name].push(performance.now() - start);
    }
  }
  const none = median(timesI.none);
  const lines = [];
  lines.push(`(i) bench (a) with an inspector attached, against (a) without (${RUNS_I} runs, medians of ${total} rounds): none ${(none / RUNS_I).toFixed(2)} ms per run`);
  for (const [name, label, target] of [
    ["sanitizing", "sanitizingObserver (target ignores events)", 1.5],
    ["trace", "trace recorder on", 1.3],
    ["reading", "sanitizingObserver (target reads every field)", null],
  ]) {
    const ratio = median(timesI[name]) / none;
    const verdict = target === null ? "(information)" : `(target <= ${target})  ${ratio <= target ? "PASS" : "MISS"}`;
    lines.push(`    ${label.padEnd(48)} ${(median(timesI[name]) / RUNS_I).toFixed(2).padStart(6)} ms per run  ratio ${ratio.toFixed(2)}  ${verdict}`);
  }
  return lines;
}
