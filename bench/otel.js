// npm run bench, issue 37 (SPEC R110): what the OpenTelemetry observer costs the statechart loop,
// against the same loop with no observer, in this process, alternating rounds (medians).
//   (a) 1,000 runs x 5 turns x 3 parallel tools:
//       - otelObserver() with no tracer provider registered: attaches nothing   (target <= 1.03)
//       - a recording tracer, SimpleSpanProcessor + InMemorySpanExporter        (target <= 1.4)
//   (b) 1 run x 10,000 text deltas (x10 per round): the recording tracer        (target <= 1.1)
// `BENCH_ROUNDS` (default 7) rounds; each variant is timed once per round, the order alternating;
// the verdict is the median of the rounds' ratios. `BENCH_OTEL_RUNS` runs per round of (a) (default 1,000).
import { runAgentLoop } from "../dist/index.js";
import { otelObserver } from "../dist/otel.js";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { convertToLlm, deltaStream, model, prompt, runToolTurns } from "./scenarios.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const RUNS = Number(process.env.BENCH_OTEL_RUNS ?? 1000);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const exporter = new InMemorySpanExporter();
const recording = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("bench");

const withInspect = (inspect) => (prompts, context, config, sink, signal, stream) => runAgentLoop(prompts, context, config, sink, signal, stream, inspect ? { inspect } : undefined);

async function runDeltas(loop) {
  for (let i = 0; i < 10; i++) await loop(prompt(), { messages: [], tools: [] }, { model, convertToLlm }, () => {}, undefined, deltaStream(10_000));
}

async function compare(name, variants, body, targets) {
  const times = Object.fromEntries(Object.keys(variants).map((key) => [key, []]));
  for (const loop of Object.values(variants)) await body(loop); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const names = Object.keys(variants);
    for (const key of round % 2 === 0 ? names : names.reverse()) {
      global.gc?.();
      exporter.reset();
      const start = performance.now();
      await body(variants[key]);
      times[key].push(performance.now() - start);
    }
  }
  const none = median(times.none);
  const lines = [`${name}: no observer ${none.toFixed(1)} ms`];
  for (const [key, label, target] of targets) {
    // The median of each round's ratio: the machine's load drifts between rounds (a shared box).
    const ratio = median(times[key].map((time, round) => time / times.none[round]));
    lines.push(`    ${label.padEnd(58)} ${median(times[key]).toFixed(1).padStart(8)} ms  ratio ${ratio.toFixed(2)}  (target <= ${target})  ${ratio <= target ? "PASS" : "MISS"}`);
  }
  return lines;
}

console.log(`\nOpenTelemetry observer against no observer, medians of ${ROUNDS} alternating rounds (node ${process.version})\n`);
const a = await compare(
  `(a) ${RUNS.toLocaleString("en")} runs x 5 turns x 3 parallel tools`,
  { none: withInspect(undefined), noProvider: withInspect(otelObserver()), recording: withInspect(otelObserver({ tracer: recording })) },
  (loop) => runToolTurns(loop, RUNS),
  [
    ["noProvider", "otelObserver(), no tracer provider (attaches nothing)", 1.03],
    ["recording", "recording tracer, in-memory exporter", 1.4],
  ],
);
for (const line of a) console.log(line);
const b = await compare(
  "(b) 1 run x 10,000 text deltas (x10)",
  { none: withInspect(undefined), recording: withInspect(otelObserver({ tracer: recording })) },
  runDeltas,
  [["recording", "recording tracer, in-memory exporter", 1.1]],
);
for (const line of b) console.log(line);
