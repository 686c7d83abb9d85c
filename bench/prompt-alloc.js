// Where an Agent prompt's allocation goes (issue 40 item 4): N Agents each run one 3-turn prompt (a
// tool call, a tool call, an answer; no deltas, no timers), as bench/sessions.js's model does.
//
//   node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256 bench/prompt-alloc.js
//   BENCH_PROMPT_PROFILE=1 ...   also the sampling heap profiler's bytes a prompt, by owner and function
//   BENCH_PROMPT_DIST=<dir>      ours from another build's dist/
//   BENCH_PROMPT_IMPL=pi         pi-agent-core's Agent instead (no XState counts)
//
// A young generation larger than the N prompts allocate keeps every object in the heap, so the
// heap's growth is what they allocated (the process says so if a collection ran meanwhile). One
// more Agent, inspected, counts the XState events, microsteps and actors of its prompt.
import { Session } from "node:inspector/promises";
import { PerformanceObserver } from "node:perf_hooks";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { model } from "./scenarios.js";

const N = Number(process.env.BENCH_PROMPT_N ?? 100);
const dist = process.env.BENCH_PROMPT_DIST ? pathToFileURL(resolve(process.env.BENCH_PROMPT_DIST, "index.js")).href : "../dist/index.js";
const pi = process.env.BENCH_PROMPT_IMPL === "pi";
const { Agent } = pi ? await import("@earendil-works/pi-agent-core") : await import(dist);

const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
/** A stream function for one prompt: two responses with a tool call each, then an answer. */
function threeTurns() {
  let turn = 0;
  return () => {
    const t = turn++;
    const content = [{ type: "text", text: "x" }];
    if (t < 2) content.push({ type: "toolCall", id: `call_${t}`, name: "work", arguments: { turn: t } });
    const message = { role: "assistant", content, api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: t < 2 ? "toolUse" : "stop", timestamp: 0 };
    return {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: message };
        yield { type: "done", reason: message.stopReason, message };
      },
      result: async () => message,
    };
  };
}
const tool = {
  name: "work", label: "work", description: "a tool", parameters: { type: "object", properties: { turn: { type: "number" } } },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};
const agentOf = (inspect) => new Agent({ initialState: { model, tools: [tool] }, streamFn: threeTurns(), ...(inspect ? { inspect } : {}) });
async function prompts(n) {
  const agents = Array.from({ length: n }, () => agentOf());
  for (const agent of agents) agent.subscribe(() => {});
  await Promise.all(agents.map((agent) => agent.prompt("hi")));
  return agents;
}

// What one prompt asks of XState.
const counts = { events: 0, microsteps: 0, actors: 0 };
const byEvent = new Map();
/** Each actor's event in progress: its microsteps are reported after the event, nested work between. */
const current = new Map();
if (!pi) await agentOf((event) => {
  if (event.type === "@xstate.actor") counts.actors++;
  if (event.type === "@xstate.event") {
    counts.events++;
    const key = `${event.actorRef.id}: ${event.event.type}`;
    const row = byEvent.get(key) ?? { events: 0, microsteps: 0 };
    row.events++;
    byEvent.set(key, row);
    current.set(event.actorRef, event.event.type === "xstate.init" ? { microsteps: 0 } : row);
  }
  if (event.type === "@xstate.microstep") {
    counts.microsteps++;
    // An actor's initial microsteps are reported before its xstate.init.
    const key = `${event.actorRef.id}: (its start)`;
    if (!current.has(event.actorRef)) byEvent.set(key, byEvent.get(key) ?? { events: 0, microsteps: 0 }), current.set(event.actorRef, byEvent.get(key));
    current.get(event.actorRef).microsteps++;
  }
}).prompt("hi");

await prompts(20); // warm-up
globalThis.gc?.();
let collections = 0;
const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
observer.observe({ entryTypes: ["gc"] });
const profiler = process.env.BENCH_PROMPT_PROFILE ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post("HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
const before = process.memoryUsage().heapUsed;
const cpu = process.cpuUsage();
const kept = await prompts(N);
const allocated = process.memoryUsage().heapUsed - before;
const { user, system } = process.cpuUsage(cpu);
await new Promise((done) => setImmediate(done)); // the observer's entries
observer.disconnect();

const kb = (bytes) => (bytes / N / 1024).toFixed(1);
console.log(`bench/prompt-alloc (node ${process.version}, ${pi ? "pi's Agent" : "ours"}): ${N} Agents, one 3-turn prompt each (${kept.length} kept)`);
console.log(`allocated a prompt: ${kb(allocated)} KB${collections ? ` (${collections} collections ran: a lower bound; give a larger young generation)` : ""}; CPU ${((user + system) / N / 1000).toFixed(2)} ms (${profiler ? "profiled" : "not profiled"})`);
if (!pi) console.log(`a prompt: ${counts.events} XState events, ${counts.microsteps} microsteps, ${counts.actors} actors`);
if (!pi) console.log("\nevent (actor: type) | a prompt | microsteps (events that took none left out)");
if (!pi) for (const [event, row] of [...byEvent].filter(([, row]) => row.microsteps > 0).sort((a, b) => b[1].microsteps - a[1].microsteps)) console.log(`${event} | ${row.events} | ${row.microsteps}`);

if (profiler) {
  const { profile } = await profiler.post("HeapProfiler.stopSampling");
  const owners = new Map();
  const functions = new Map();
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  // A builtin (Set, Map, Object.assign) is charged to the code that called it.
  const walk = (node, owner, fn) => {
    const { url, functionName, lineNumber } = node.callFrame;
    if (url) {
      owner = url.includes("/xstate/") ? "xstate" : url.includes("/bench/") ? "the scenario" : url.startsWith("node:") ? "node" : "xstate-agent-loop";
      fn = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    }
    if (node.selfSize) add(owners, owner ?? "(other)", node.selfSize), add(functions, `${owner === "xstate" ? "xstate" : "ours "} ${node.callFrame.url ? fn : `${node.callFrame.functionName} in ${fn}`}`, node.selfSize);
    for (const child of node.children) walk(child, owner, fn);
  };
  walk(profile.head, undefined, "(root)");
  console.log("\nsampled bytes a prompt, by owner:");
  for (const [owner, bytes] of [...owners].sort((a, b) => b[1] - a[1])) console.log(`  ${kb(bytes).padStart(7)} KB  ${owner}`);
  console.log("by allocating function (builtins by their caller):");
  for (const [fn, bytes] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${kb(bytes).padStart(7)} KB  ${fn}`);
}
