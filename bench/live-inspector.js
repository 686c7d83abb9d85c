// Issue 39: bench (a) with the live inspector attached, against (a) without, in this process
// (medians of at least BENCH_ROUNDS rounds, default 7, in whole Williams designs of the five
// variants: 10 rounds a design, every variant in every position and right after every other equally
// often; BENCH_RUNS runs of (a) per round, default 500). Before each sample a macrotask turn and a
// scavenge (bench/sample.js), one full collection before the warm-up: a full collection before each
// sample, as until 2026-12-07, deoptimized every variant's hot code, so each sample timed its
// re-optimization (bench/README.md, "The four benches' harness"). `live`: the server running, no page connected; `live+page`: one page (an SSE
// client) reading the channel; `sanitizing`: xstate-agent-loop/inspect's sanitizingObserver, the
// figure bench/README's (i) row holds (its target reads nothing, so nothing is sanitized);
// `reading`: the same with a target that reads every field (all sanitized). Needs `npm run build`.
//   node --expose-gc bench/live-inspector.js
import { request } from "node:http";
import { runToolTurns } from "./scenarios.js";
import { beforeSample, median, wholeDesigns, williams } from "./sample.js";

const { runAgentLoop } = await import("../dist/index.js");
const { sanitizingObserver } = await import("../dist/inspect.js");
const { createLiveInspector } = await import("../dist/inspector.js");
const RUNS = Number(process.env.BENCH_RUNS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const quiet = await createLiveInspector({ port: 0 });
const watched = await createLiveInspector({ port: 0 });
let received = 0;
await new Promise((resolve) => {
  request({ host: "127.0.0.1", port: watched.port, path: "/events" }, (res) => {
    res.on("data", (chunk) => (received += chunk.length));
    resolve();
  }).end();
});

const attach = (inspect) => () => {
  const loop = (prompts, context, config, sink, signal, stream) => runAgentLoop(prompts, context, config, sink, signal, stream, inspect ? { inspect } : undefined);
  return runToolTurns(loop, RUNS);
};
const variants = {
  none: attach(undefined),
  sanitizing: attach(sanitizingObserver(() => {})),
  reading: attach(sanitizingObserver((e) => void [e.snapshot, e.event, e.action])),
  live: attach([quiet.observer]),
  "live+page": attach([watched.observer]),
};
const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
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
    // The flushes a variant left pending are its cost too.
    await new Promise((resolve) => setTimeout(resolve, 40));
    times[name].push(performance.now() - start - 40);
  }
}
const none = median(times.none);
console.log(`bench (a) with an observer / without (${RUNS} runs, medians of ${total} rounds): none ${(none / RUNS).toFixed(3)} ms per run`);
for (const name of ["sanitizing", "reading", "live", "live+page"]) console.log(`  ${name.padEnd(10)} ${(median(times[name]) / none).toFixed(2)}`);
console.log(`  the page received ${(received / 1e6).toFixed(1)} MB`);
await quiet.close();
await watched.close();
process.exit(0);
