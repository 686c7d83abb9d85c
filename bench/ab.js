// A/B of two builds of this package in one process: `BENCH_BASE=<dir holding another dist/index.js>
// node --expose-gc bench/ab.js` (e.g. `git worktree add /tmp/base HEAD~1 && (cd /tmp/base && npm ci
// && npm run build)`, then BENCH_BASE=/tmp/base/dist). On a shared machine the time of one run
// drifts with the load more than a change moves it, so each sample times a few runs of A and then
// of B (the order alternating), and what is printed is the median of the per-sample ratios B/A,
// in CPU time and in wall time. `BENCH_ONLY=a,loop1,h,f` picks scenarios (also agentA, b, c, m, stream,
// spaced, trace, inspect); `BENCH_SAMPLES` (60). `pi` for either build (`BENCH_BASE=pi`, `BENCH_B=pi`)
// puts pi-agent-core's Agent and loop there (its own scenarios only: not trace, inspect).
// `trace` is (a) with each build's trace recorder attached (bench (i)), `inspect` (a) with a no-op
// inspection observer: the floor under `trace`.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { agentStreams, agentToolTurns, concurrentLoopRuns, concurrentPrompts, convertToLlm, deltaStream, manyBlocksStream, model, prompt, promptsOnOneAgent, runToolTurns, transcript } from "./scenarios.js";
import { median } from "./sample.js";

if (!process.env.BENCH_BASE) throw new Error("bench/ab.js: set BENCH_BASE to the dist/ directory of the build to compare with");
/** A build of this package from its dist/ directory, or pi-agent-core itself for `pi`. */
async function build(dir) {
  if (dir === "pi") return { ...(await import("@earendil-works/pi-agent-core")), trace: undefined };
  return { ...(await import(pathToFileURL(resolve(dir, "index.js")).href)), trace: await import(pathToFileURL(resolve(dir, "src/trace/index.js")).href) };
}
const A = await build(process.env.BENCH_BASE);
// `BENCH_B=<dir>` puts another build in B's place (the other order: BENCH_BASE=dist BENCH_B=<base>).
const B = await build(process.env.BENCH_B ?? new URL("../dist/", import.meta.url).pathname);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);

const scenarios = {
  // (a), 50 runs a sample.
  a: (build) => runToolTurns(build.runAgentLoop, 50),
  // (a) as Agent prompts: 50 new Agents a sample, each given one prompt of (a) (issue 40 item 2).
  agentA: (build) => agentToolTurns(build.Agent, 50),
  // (h)'s run machine part: one-turn runs through runAgentLoop, 300 at once.
  loop1: (build) => concurrentLoopRuns(build.runAgentLoop, 300),
  // (h): 300 Agents given one prompt at once.
  h: (build) => concurrentPrompts(build.Agent, 300),
  // (f): 300 prompts one after another on one Agent.
  f: (build) => promptsOnOneAgent(build.Agent, 300),
  // (b): five runs of 10,000 text deltas (one is ~5 ms: too short a sample on a shared machine).
  b: (build) => deltaRuns(build, []),
  // (m): one response of 1,000 text blocks × 3 deltas (issue 40 item 6), five runs a sample.
  m: async (build) => {
    for (let i = 0; i < 5; i++) await build.runAgentLoop(prompt(), { messages: [], tools: [] }, { model, convertToLlm }, () => {}, undefined, manyBlocksStream(1000));
  },
  // bench:peers' Agent stream row: an Agent prompt answered by 3,000 text deltas in one burst, two a sample.
  stream: async (build) => {
    for (let i = 0; i < 2; i++) await agentStreams(build.Agent, 1, 3000);
  },
  // (issue 40 item 4) 100 Agents at once, each answered by 100 deltas that arrive each in a macrotask
  // of its own (bench/sessions.js's deltas do, on timers): the per-delta fixed cost, not amortized.
  spaced: (build) => agentStreams(build.Agent, 100, 100, true),
  // (c): the same over a 5,000-message transcript.
  c: (build) => deltaRuns(build, history),
  // (i): (a) with the trace recorder on, as bench/run.js attaches it; 50 runs a sample.
  trace: (build) => {
    let bytes = 0;
    const recorder = build.trace.createTraceRecorder({ write: (line) => void (bytes += line.length), secrets: ["sk-bench-secret-key"] });
    const sink = (event) => recorder.recordEvent(event);
    const loop = (prompts, context, config, _sink, signal, stream) => build.runAgentLoop(prompts, context, config, sink, signal, stream, { inspect: recorder.inspect });
    return runToolTurns(loop, 50);
  },
  inspect: (build) => {
    const loop = (prompts, context, config, sink, signal, stream) => build.runAgentLoop(prompts, context, config, sink, signal, stream, { inspect: () => {} });
    return runToolTurns(loop, 50);
  },
};

const history = transcript(5000);
async function deltaRuns(build, messages) {
  for (let i = 0; i < 5; i++) await build.runAgentLoop(prompt(), { messages, tools: [] }, { model, convertToLlm }, () => {}, undefined, deltaStream(10_000));
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function timed(body, build) {
  // A scavenge (under --expose-gc), not a full collection: a full one clears what optimized code
  // holds weakly (the objects of the runs that just ended) and deoptimizes the hot functions, so
  // each sample would time their re-optimization (bench/README.md, "bench:peers' stream row").
  global.gc?.({ type: "minor" });
  const cpu = cpuMs();
  const wall = performance.now();
  await body(build);
  return { wall: performance.now() - wall, cpu: cpuMs() - cpu };
}

for (const name of (process.env.BENCH_ONLY ?? "a,loop1,h,f").split(",")) {
  const body = scenarios[name];
  if (!body) throw new Error(`bench/ab.js: no scenario ${name}`);
  for (let i = 0; i < 5; i++) for (const build of [A, B]) await body(build);
  const wall = [];
  const cpu = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    const first = sample % 2 === 0 ? A : B;
    const one = await timed(body, first);
    const other = await timed(body, first === A ? B : A);
    const [a, b] = first === A ? [one, other] : [other, one];
    wall.push(b.wall / a.wall);
    cpu.push(b.cpu / a.cpu);
  }
  console.log(`${name.padEnd(6)} B/A cpu ${median(cpu).toFixed(3)}  wall ${median(wall).toFixed(3)}  (${SAMPLES} samples)`);
}
