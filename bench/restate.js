// npm run bench:restate (issue 21): 200 concurrent 5-turn sessions (three parallel tool calls a
// turn, the scripted model, tools of 0 ms) over two Restate workers behind one balancer, against
// the same sessions run in this process; throughput, session latency (p50, p99) and what Restate
// adds per journaled step. A step is one job of the run (model request, hook, preparation, each
// execution and its intent), counted through the public executor seam (`JobExecutor`).
import { createActor } from "xstate";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentRunLogic, defaultConvertToLlm, scriptedModel } from "../dist/index.js";
import { openSqliteStore } from "../dist/sqlite.js";
import { startLocalRestateServer } from "../dist/restate.js";
import { scriptedStreamFn, text, toolCall } from "../dist/testing.js";
// The worker processes and the balancer are the Restate tests' own (run with tsx).
import { freePort, startBalancer, startWorker } from "../test/restate/support.ts";

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const TURNS = 5;
const CALLS = 3;

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => `${x.toFixed(1)} ms`;

// --- In process: the same sessions, the same script, no journal --------------------------------
const work = {
  name: "work",
  label: "work",
  description: "does a unit of work",
  parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  execute: async (id) => ({ content: [{ type: "text", text: `done ${id}` }], details: {} }),
};
const streamFn = scriptedStreamFn((request) => {
  const turn = request.context.messages.filter((message) => message.role === "assistant").length;
  if (turn >= TURNS) return { content: [text("all done")] };
  return { content: Array.from({ length: CALLS }, (_, i) => toolCall("work", { n: turn * CALLS + i }, `t${turn}-${i}`)) };
});
let steps = 0;
const countingExecutor = {
  attach() {},
  async execute(step, body) {
    steps++;
    const events = [];
    try {
      return { ok: true, output: await body((event) => events.push(event), { reissue: false }), events, at: Date.now() };
    } catch (error) {
      return { ok: false, error, events, at: Date.now() };
    }
  },
};
const config = { model: scriptedModel, convertToLlm: defaultConvertToLlm, toolExecution: "parallel" };
// The embedded store: the same sessions journaled into SQLite (WAL, synchronous=NORMAL), in this process.
const storeDir = mkdtempSync(join(tmpdir(), "bench-restate-store-"));
const store = openSqliteStore(join(storeDir, "sessions.db"));
let stored = 0;
const runInProcess = (executor, durable) =>
  new Promise((resolve, reject) => {
    const actor = createActor(createAgentRunLogic({ streamFn, tools: [work], config, ...(executor ? { executor } : {}), ...(durable ? { durable: { store, sessionId: `s${stored++}` } } : {}) }), {
      input: { prompts: [{ role: "user", content: [{ type: "text", text: "go" }], timestamp: Date.now() }], messages: [] },
    });
    actor.subscribe({ complete: () => resolve(actor.getSnapshot().output), error: reject });
    actor.start();
  });

await runInProcess(countingExecutor);
const stepsPerSession = steps + CALLS * TURNS; // + each execution's intent step
async function timed(run) {
  const latencies = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const t = performance.now();
      await run(i);
      latencies.push(performance.now() - t);
    }),
  );
  return { total: performance.now() - start, latencies };
}
const local = await timed(() => runInProcess());
const embedded = await timed(() => runInProcess(undefined, true));
// One session at a time: the latency a step costs without queueing.
async function sequential(run, count = 10) {
  const latencies = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await run(i);
    latencies.push(performance.now() - t);
  }
  return latencies;
}
const localAlone = await sequential(() => runInProcess());
const embeddedAlone = await sequential(() => runInProcess(undefined, true));
store.close();
rmSync(storeDir, { recursive: true, force: true });

// --- On Restate: two workers behind one balancer ------------------------------------------------
const server = await startLocalRestateServer();
const workers = await Promise.all([startWorker(await freePort(), { TOOL_MS: "0" }), startWorker(await freePort(), { TOOL_MS: "0" })]);
const balancer = await startBalancer(() => workers.map((worker) => worker.port));
await server.registerDeployment(`http://127.0.0.1:${balancer.port}`);
const call = async (key) => {
  const response = await fetch(`${server.ingressUrl}/agentSession/${key}/prompt`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: key }) });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${await response.text()}`);
  const { messages } = await response.json();
  if (messages.filter((message) => message.role === "toolResult").length !== TURNS * CALLS) throw new Error(`session ${key}: wrong transcript`);
};
await call("warm-up");
const remoteAlone = await sequential((i) => call(`alone-${Date.now().toString(36)}-${i}`));
const remote = await timed((i) => call(`bench-${Date.now().toString(36)}-${i}`));
const shares = workers.map((worker) => worker.executed.length);
await balancer.close();
await Promise.all(workers.map((worker) => worker.kill()));
await server.stop();

const line = (name, r) =>
  `  ${name.padEnd(22)} ${(SESSIONS / (r.total / 1000)).toFixed(0).padStart(6)} sessions/s   latency p50 ${ms(pct(r.latencies, 0.5)).padStart(9)}  p99 ${ms(pct(r.latencies, 0.99)).padStart(9)}`;
console.log(`\n(restate) ${SESSIONS} concurrent sessions, ${TURNS} turns × ${CALLS} parallel calls, ${stepsPerSession} journaled steps each`);
console.log(line("in process (no store)", local));
console.log(line("embedded SQLite store", embedded));
console.log(line("Restate, 2 workers", remote));
const executed = workers.flatMap((worker) => worker.executed);
const sessionsRun = 1 + 10 + SESSIONS;
if (executed.length !== sessionsRun * TURNS * CALLS || new Set(executed).size !== executed.length) throw new Error(`tool executions: ${executed.length} (${new Set(executed).size} distinct), expected ${sessionsRun * TURNS * CALLS}, each once`);
console.log(`  tool executions per worker: ${shares.join(" / ")} (${sessionsRun} sessions × ${TURNS * CALLS} calls, each once; every transcript checked)`);
const alone = (p) => (pct(remoteAlone, p) - pct(localAlone, p)) / stepsPerSession;
const aloneStore = (p) => (pct(embeddedAlone, p) - pct(localAlone, p)) / stepsPerSession;
console.log(`  one session at a time, per journaled step: the embedded store adds p50 ${ms(aloneStore(0.5))}, p99 ${ms(aloneStore(0.99))}; Restate adds p50 ${ms(alone(0.5))}, p99 ${ms(alone(0.99))}`);
console.log(`  one session at a time: in process p50 ${ms(pct(localAlone, 0.5))}, on Restate p50 ${ms(pct(remoteAlone, 0.5))}: added per journaled step p50 ${ms(alone(0.5))}, p99 ${ms(alone(0.99))}`);
const perStep = (p) => (pct(remote.latencies, p) - pct(local.latencies, p)) / stepsPerSession;
console.log(`  added per journaled step under this load: p50 ${ms(perStep(0.5))}, p99 ${ms(perStep(0.99))} (session latency difference / steps)`);
