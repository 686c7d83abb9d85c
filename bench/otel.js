// npm run bench, issue 37 (SPEC R110): what the OpenTelemetry observer costs the statechart loop,
// against the same loop with no observer, in this process, alternating rounds (medians).
//   (a) 1,000 runs x 5 turns x 3 parallel tools:
//       - otelObserver() with no tracer provider registered: attaches nothing   (target <= 1.03)
//       - a recording tracer, SimpleSpanProcessor + InMemorySpanExporter        (target <= 1.4)
//       and the two floors under it: an XState inspection observer that does nothing (what any
//       observer costs), and the SDK alone (a run's 23 spans started and ended with the observer's
//       attributes, no loop; added to the run's time).
//   (b) 1 run x 10,000 text deltas (x10 per round): the recording tracer        (target <= 1.1)
// At least `BENCH_ROUNDS` (default 7) rounds, in whole Williams designs (bench/sample.js: every
// variant in every position and right after every other equally often; (a)'s five variants take 10
// rounds a design, (b)'s two take 2, so 7 gives 10 and 8); each variant is timed once per round,
// after a macrotask turn and a scavenge (`beforeSample`), with one full collection before the
// warm-up (not before each sample: that deoptimized the hot code of every variant, so each sample
// timed its re-optimization; bench/README.md, "The four benches' harness"); the verdict is the
// median of the rounds' ratios. `BENCH_OTEL_RUNS` runs per round of (a) (default 1,000).
// Each line also gives the ratio of process CPU time (user + system), which a loaded machine's
// waits for a core do not inflate; the verdict reads that one.
import { runAgentLoop } from "../dist/index.js";
import { otelObserver } from "../dist/otel.js";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { context, trace } from "@opentelemetry/api";
import { convertToLlm, deltaStream, model, prompt, runToolTurns } from "./scenarios.js";
import { beforeSample, median, wholeDesigns, williams } from "./sample.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const RUNS = Number(process.env.BENCH_OTEL_RUNS ?? 1000);

const exporter = new InMemorySpanExporter();
const recording = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("bench");

/** The spans of one run of (a), as the observer makes them: 1 run, 5 turns, 5 requests, 12 tool calls. */
function sdkRun() {
  const common = (state) => ({ "xstate_agent_loop.state": state });
  const model = { "gen_ai.provider.name": "bench", "gen_ai.request.model": "bench-model" };
  const run = recording.startSpan("invoke_agent", { attributes: { "gen_ai.operation.name": "invoke_agent", ...common("run"), ...model } });
  const runContext = trace.setSpan(context.active(), run);
  for (let turnNumber = 1; turnNumber <= 5; turnNumber++) {
    const turn = recording.startSpan("turn", { attributes: { ...common("turn"), "xstate_agent_loop.turn": turnNumber } }, runContext);
    const turnContext = trace.setSpan(runContext, turn);
    const chat = recording.startSpan("chat bench-model", { attributes: { ...common("turn.requesting.streaming"), ...model, "gen_ai.operation.name": "chat", "xstate_agent_loop.request.attempt": 1 } }, turnContext);
    chat.setAttributes({ "gen_ai.response.model": "bench-model", "gen_ai.response.finish_reasons": ["toolUse"], "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5 });
    chat.end();
    for (let call = 0; call < (turnNumber < 5 ? 3 : 0); call++) {
      const attributes = { ...common("turn.executingTools.preflightingCalls"), "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read", "gen_ai.tool.call.id": `c${call}`, "gen_ai.tool.type": "function" };
      recording.startSpan("execute_tool read", { attributes }, turnContext).end();
    }
    turn.end();
  }
  run.setAttributes({ "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 25, "xstate_agent_loop.end_reason": "completed" });
  run.end();
}

const withInspect = (inspect) => (prompts, context, config, sink, signal, stream) => runAgentLoop(prompts, context, config, sink, signal, stream, inspect ? { inspect } : undefined);

async function runDeltas(loop) {
  for (let i = 0; i < 10; i++) await loop(prompt(), { messages: [], tools: [] }, { model, convertToLlm }, () => {}, undefined, deltaStream(10_000));
}

async function compare(name, variants, body, targets) {
  const times = Object.fromEntries(Object.keys(variants).map((key) => [key, []]));
  const cpu = Object.fromEntries(Object.keys(variants).map((key) => [key, []]));
  const cpuNow = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const names = Object.keys(variants);
  const design = williams(names.length);
  const total = wholeDesigns(ROUNDS, design);
  global.gc?.(); // once, before the warm-up (which re-optimizes)
  for (const loop of Object.values(variants)) await body(loop); // warm-up
  for (let round = 0; round < total; round++) {
    for (const key of design[round % design.length].map((i) => names[i])) {
      exporter.reset();
      await beforeSample();
      const start = performance.now();
      const startCpu = cpuNow();
      await body(variants[key]);
      times[key].push(performance.now() - start);
      cpu[key].push(cpuNow() - startCpu);
    }
  }
  const none = median(times.none);
  const lines = [`${name}: no observer ${none.toFixed(1)} ms (${total} rounds)`];
  for (const [key, label, target] of targets) {
    // The median of each round's ratio: the machine's load drifts between rounds (a shared box).
    const ratio = median(times[key].map((time, round) => time / times.none[round]));
    const cpuRatio = median(cpu[key].map((time, round) => time / cpu.none[round]));
    // The verdict reads CPU time: on a shared machine, waits for a core move wall time by ±20 % between rounds.
    const verdict = target === undefined ? "(floor)" : `(target <= ${target}, cpu)  ${cpuRatio <= target ? "PASS" : "MISS"}`;
    lines.push(`    ${label.padEnd(58)} ${median(times[key]).toFixed(1).padStart(8)} ms  ratio ${ratio.toFixed(2)}  cpu ${cpuRatio.toFixed(2)}  ${verdict}`);
  }
  return lines;
}

console.log(`\nOpenTelemetry observer against no observer, medians of at least ${ROUNDS} rounds in whole Williams designs, a scavenge before each sample (node ${process.version})\n`);
const a = await compare(
  `(a) ${RUNS.toLocaleString("en")} runs x 5 turns x 3 parallel tools`,
  {
    none: withInspect(undefined),
    noProvider: withInspect(otelObserver()),
    recording: withInspect(otelObserver({ tracer: recording })),
    inspectOnly: withInspect({ next() {} }),
    sdkOnly: "sdk",
  },
  (loop) => (loop === "sdk" ? Promise.resolve().then(() => { for (let i = 0; i < RUNS; i++) sdkRun(); }) : runToolTurns(loop, RUNS)),
  [
    ["noProvider", "otelObserver(), no tracer provider (attaches nothing)", 1.03],
    ["recording", "recording tracer, in-memory exporter", 1.4],
    ["inspectOnly", "floor: an inspection observer that does nothing", undefined],
    ["sdkOnly", "floor: the SDK alone, the same 23 spans a run (no loop)", undefined],
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
