// npm run bench:sessions (issue 40 item 4): N concurrent Agents on one process, on the system clock.
// Each Agent runs 3 prompts of 3 turns (a tool call, a tool call, an answer) against a scripted model
// with a provider's timing: 300 ms to the first token, a delta every 20 ms, 1–3 s a response; tools
// take 50–500 ms. Ours and pi's Agent get the same seeded schedule, each N in a process of its own.
//
//   node --expose-gc bench/sessions.js                       every N of BENCH_SESSIONS_N, both Agents
//   BENCH_SESSIONS_N=100,1000 BENCH_SESSIONS_IMPL=ours ...   a subset
//   BENCH_SESSIONS_DIST=<dir>                                 ours from another build's dist/
//   BENCH_SESSIONS_DELTA_MS=80                                fewer deltas (the difference per delta: CPU per delta in place)
//   BENCH_SESSIONS_NODE_FLAGS="--max-semi-space-size=64"      V8 flags for the measuring processes (a deployment's tuning)
//   BENCH_SESSIONS_PROCESSES=5                                each Agent and N in 5 processes, the Agents alternating: the
//                                                             added latency over every turn of them pooled, other figures
//                                                             their medians, with each process's p99 listed
//
// Added latency per turn: the time from the turn's start (the prompt call, or its tool's end) to
// the next step's start (the next tool's start, or the prompt resolving), minus the response's
// scripted duration: what the runtime and a busy event loop add to the ideal schedule.
//
// Event-loop delay: how late a timer fires. `monitorEventLoopDelay` records the interval between
// its timer's callbacks, which includes the resolution itself (an idle loop reads 10.1 ms at a
// 10 ms resolution), so the resolution is subtracted from every percentile read (as Elastic's
// APM agent does).
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { median } from "./sample.js";
import { model } from "./scenarios.js";

const PROMPTS = 3;
const TURNS = 3;
const FIRST_TOKEN_MS = 300;
const DELTA_MS = Number(process.env.BENCH_SESSIONS_DELTA_MS ?? 20);
/** Sessions start spread over this window (all at once would make every delta of a session fire together). */
const STAGGER_MS = 1000;
/**
 * Every session is active from the last start's first token to the first session's end (about
 * 3–15 s): the heap is sampled, and the event-loop delay read a second time, in that window only, so
 * they say what N running sessions cost apart from the start (N Agents made and prompted within
 * STAGGER_MS) and the wind-down.
 */
const ACTIVE_FROM_MS = STAGGER_MS + 2000;
const ACTIVE_TO_MS = 15_000;
/** A process whose sessions are not done by then stops and reports how many finished. */
const DEADLINE_S = Number(process.env.BENCH_SESSIONS_DEADLINE_S ?? 120);
/**
 * One process's added p99 at N = 1,000 moves by ±5 ms between runs of one build (a collection
 * landing on a turn's end or not), so item 4's verdict reads the turns of several processes pooled.
 */
const PROCESSES = Number(process.env.BENCH_SESSIONS_PROCESSES ?? 1);
/** Fewer processes than this give a reading, not a verdict, on the added p99. */
const VERDICT_PROCESSES = 5;
/** The event-loop delay monitor's timer interval (ms); what it records above this is the delay. */
const DELAY_RESOLUTION_MS = 10;
/** The delay a `monitorEventLoopDelay` histogram read says, in ms: its interval less the resolution. */
const lateness = (nanoseconds) => Math.max(0, nanoseconds / 1e6 - DELAY_RESOLUTION_MS);

/** A small seeded generator (mulberry32): session i gets the same schedule under both Agents. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const between = (rand, low, high) => low + rand() * (high - low);
const sleepUntil = (at) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** One conversation: its schedule, and the added latency of each turn it ran. */
class Session {
  constructor(index, added, addedActive, endedAt) {
    const rand = random(index + 1);
    this.startAt = between(rand, 0, STAGGER_MS);
    this.responses = Array.from({ length: PROMPTS * TURNS }, () => between(rand, 1000, 3000));
    this.tools = Array.from({ length: PROMPTS * TURNS }, () => between(rand, 50, 500));
    this.turn = 0;
    this.turnStart = 0;
    this.added = added;
    /** The turns that started while every session was active (ACTIVE_FROM_MS–ACTIVE_TO_MS). */
    this.addedActive = addedActive;
    /** When each turn ended (ms since the epoch), in the order of `added`. */
    this.endedAt = endedAt;
    this.deltas = 0;
  }

  /** The turn in progress ended at `now`: its next step starts. */
  endTurn(now) {
    const added = now - this.turnStart - this.responses[this.turn];
    this.added.push(added);
    this.endedAt.push(now - this.epoch);
    const startedAt = this.turnStart - this.epoch;
    if (startedAt > ACTIVE_FROM_MS && startedAt < ACTIVE_TO_MS) this.addedActive.push(added);
    this.turn++;
  }

  streamFn = () => {
    const session = this;
    const duration = this.responses[this.turn];
    const toolTurn = this.turn % TURNS < TURNS - 1;
    const partial = { role: "assistant", content: [], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: toolTurn ? "toolUse" : "stop", timestamp: 0 };
    return {
      async *[Symbol.asyncIterator]() {
        const start = performance.now();
        yield { type: "start", partial };
        const block = { type: "text", text: "" };
        partial.content.push(block);
        await sleepUntil(start + FIRST_TOKEN_MS);
        yield { type: "text_start", contentIndex: 0, partial };
        for (let at = FIRST_TOKEN_MS; at < duration; at += DELTA_MS) {
          await sleepUntil(start + at);
          block.text += "x ";
          yield { type: "text_delta", contentIndex: 0, delta: "x ", partial };
        }
        await sleepUntil(start + duration);
        yield { type: "text_end", contentIndex: 0, content: block.text, partial };
        if (toolTurn) {
          const call = { type: "toolCall", id: `call_${session.turn}`, name: "work", arguments: { turn: session.turn } };
          partial.content.push(call);
          yield { type: "toolcall_start", contentIndex: 1, partial };
          yield { type: "toolcall_end", contentIndex: 1, toolCall: call, partial };
        }
        yield { type: "done", reason: partial.stopReason, message: { ...partial, content: partial.content.map((b) => ({ ...b })) } };
      },
      result: async () => partial,
    };
  };

  tool = {
    name: "work", label: "work", description: "a timed tool",
    parameters: { type: "object", properties: { turn: { type: "number" } } },
    execute: async () => {
      this.endTurn(performance.now());
      const ms = this.tools[this.turn - 1];
      await sleepUntil(performance.now() + ms);
      this.turnStart = performance.now();
      return { content: [{ type: "text", text: "ok" }], details: {} };
    },
  };

  async run(Agent, agents) {
    await sleepUntil(this.epoch + this.startAt);
    const agent = new Agent({ initialState: { model, tools: [this.tool] }, streamFn: this.streamFn });
    agents.push(agent);
    agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") this.deltas++;
    });
    for (let p = 0; p < PROMPTS; p++) {
      this.turnStart = performance.now();
      await agent.prompt(`prompt ${p}`);
      this.endTurn(performance.now());
    }
  }
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const heapUsed = () => process.memoryUsage().heapUsed;
function collect() {
  global.gc?.();
  global.gc?.();
  return heapUsed();
}

/** A turn this much later than its schedule counts as late in the tail's breakdown (item 4's target). */
const LATE_MS = 10;
/** How long after a full collection's final pause the turns it held up are still finishing. */
const FULL_COLLECTION_AFTER_MS = 50;

/**
 * Where the tail is: the turns more than LATE_MS late, and how many of them (and of all turns) ended
 * within a full collection's cycle, from the start of its incremental marking (whose steps run on
 * the main thread between tasks and are not in the collection's reported pause) to
 * FULL_COLLECTION_AFTER_MS after its final pause.
 */
function lateTurnsInFullCollections(added, endedAt, gc) {
  const windows = gc.fullPauses.map(([start, end]) => {
    const marking = gc.markingStarts.filter((t) => t <= start && t > start - 2000).at(-1) ?? start;
    return [marking, end + FULL_COLLECTION_AFTER_MS];
  });
  const inWindows = (t) => windows.some(([from, to]) => t >= from && t <= to);
  let late = 0;
  let lateInWindows = 0;
  let all = 0;
  for (let i = 0; i < added.length; i++) {
    const within = inWindows(endedAt[i]);
    if (within) all++;
    if (added[i] > LATE_MS) (late++, within && lateInWindows++);
  }
  return { late, lateInWindows, inWindows: all };
}

async function measure(impl, count) {
  const ours = process.env.BENCH_SESSIONS_DIST ? pathToFileURL(resolve(process.env.BENCH_SESSIONS_DIST, "index.js")).href : "../dist/index.js";
  const { Agent } = impl === "pi" ? await import("@earendil-works/pi-agent-core") : await import(ours);
  // Warm-up: modules and JIT, on a short schedule of its own, then dropped.
  {
    const warm = Array.from({ length: 20 }, (_, i) => new Session(1e6 + i, [], [], []));
    const epoch = performance.now();
    for (const s of warm) (s.epoch = epoch), (s.responses = s.responses.map(() => 400)), (s.tools = s.tools.map(() => 10)), (s.startAt = 0);
    await Promise.all(warm.map((s) => s.run(Agent, [])));
  }
  const base = collect();
  const added = [];
  const addedActive = [];
  const endedAt = [];
  const sessions = Array.from({ length: count }, (_, i) => new Session(i, added, addedActive, endedAt));
  const agents = [];
  const delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
  const activeDelay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
  const heapSamples = [];
  // What the collector did meanwhile (pauses on the main thread), and the heap right after each
  // full collection in the active window: live data (plus what was allocated since), where the
  // 1 s samples read live data and garbage not yet collected. No forced gc() mid-run: its pause
  // would be counted as the runtime's latency.
  const gc = { scavenges: 0, scavengeMs: 0, full: 0, fullMs: 0, fullMaxMs: 0, liveAfterFull: [], markingStarts: [], fullPauses: [] };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = entry.detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) (gc.scavenges++, (gc.scavengeMs += entry.duration));
      else if (kind === perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL) gc.markingStarts.push(entry.startTime - epoch);
      else if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.fullPauses.push([entry.startTime - epoch, entry.startTime - epoch + entry.duration]);
        gc.full++;
        gc.fullMs += entry.duration;
        gc.fullMaxMs = Math.max(gc.fullMaxMs, entry.duration);
        const t = performance.now() - epoch;
        if (t > ACTIVE_FROM_MS && t < ACTIVE_TO_MS) gc.liveAfterFull.push(heapUsed());
      }
    }
  });
  const cpu0 = process.cpuUsage();
  const epoch = performance.now();
  for (const s of sessions) s.epoch = epoch;
  delay.enable();
  gcObserver.observe({ entryTypes: ["gc"] });
  // Heap in use while every session is active (after the stagger, before the first ones finish): live data and garbage not yet collected.
  const sampler = setInterval(() => {
    const t = performance.now() - epoch;
    if (t > ACTIVE_FROM_MS && t < ACTIVE_TO_MS) heapSamples.push(heapUsed());
  }, 1000);
  const activeStart = setTimeout(() => activeDelay.enable(), ACTIVE_FROM_MS);
  const activeEnd = setTimeout(() => activeDelay.disable(), ACTIVE_TO_MS);
  let timedOut = false;
  const deadline = new Promise((resolve) => setTimeout(() => resolve((timedOut = true)), DEADLINE_S * 1000).unref());
  const done = Promise.all(sessions.map((s) => s.run(Agent, agents)));
  await Promise.race([done, deadline]);
  delay.disable();
  activeDelay.disable();
  gcObserver.disconnect();
  clearInterval(sampler);
  clearTimeout(activeStart);
  clearTimeout(activeEnd);
  const wallS = (performance.now() - epoch) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const finished = sessions.filter((s) => s.turn === PROMPTS * TURNS).length;
  const idle = timedOut ? null : (collect() - base) / count;
  const sorted = added.slice().sort((a, b) => a - b);
  const sortedActive = addedActive.slice().sort((a, b) => a - b);
  heapSamples.sort((a, b) => a - b);
  const activeHeap = heapSamples.length ? (quantile(heapSamples, 0.5) - base) / count : null;
  gc.liveAfterFull.sort((a, b) => a - b);
  const late = lateTurnsInFullCollections(added, endedAt, gc);
  const liveHeap = gc.liveAfterFull.length ? (gc.liveAfterFull[0] - base) / count : null;
  // The work check: every Agent made, every scripted delta delivered to its listener.
  const expectedDeltas = sessions.reduce((sum, s) => sum + s.responses.reduce((n, d) => n + Math.ceil((d - FIRST_TOKEN_MS) / DELTA_MS), 0), 0);
  const deltas = sessions.reduce((sum, s) => sum + s.deltas, 0);
  if (!timedOut && (agents.length !== count || deltas !== expectedDeltas || added.length !== count * PROMPTS * TURNS)) {
    throw new Error(`bench/sessions: ${agents.length} Agents, ${deltas} deltas, ${added.length} turns; expected ${count}, ${expectedDeltas}, ${count * PROMPTS * TURNS}`);
  }
  return {
    impl, count, node: process.version, finished, timedOut, wallS,
    turns: added.length,
    addedP50: quantile(sorted, 0.5), addedP99: quantile(sorted, 0.99), addedMax: sorted.at(-1),
    activeAddedP99: sortedActive.length ? quantile(sortedActive, 0.99) : null,
    delayP50: lateness(delay.percentile(50)), delayP99: lateness(delay.percentile(99)), delayMax: lateness(delay.max),
    activeDelayP99: activeDelay.count ? lateness(activeDelay.percentile(99)) : null,
    lateTurns: late.late, lateTurnsInFull: late.lateInWindows, turnsInFull: late.inWindows,
    scavenges: gc.scavenges, scavengeMs: gc.scavengeMs, fullGCs: gc.full, fullGCMs: gc.fullMs, fullGCMaxMs: gc.fullMaxMs,
    heapActiveKB: activeHeap === null ? null : activeHeap / 1024,
    heapLiveKB: liveHeap === null ? null : liveHeap / 1024,
    heapIdleKB: idle === null ? null : idle / 1024,
    cpuMsPerSession: (cpu.user + cpu.system) / 1000 / count,
    deltasPerSession: deltas / count,
    held: agents.length,
    // Every turn's added latency (µs precision), for the pooled percentiles across processes.
    added: added.map((ms) => Math.round(ms * 1000) / 1000),
  };
}

if (process.env.BENCH_SESSIONS_CHILD) {
  const [impl, count] = process.env.BENCH_SESSIONS_CHILD.split(":");
  console.log(JSON.stringify(await measure(impl, Number(count))));
  process.exit(0);
}

const counts = (process.env.BENCH_SESSIONS_N ?? "100,1000,3000,10000").split(",").map(Number);
const impls = (process.env.BENCH_SESSIONS_IMPL ?? "ours,pi").split(",");
const results = [];
console.log(`\nbench/sessions (node ${process.version}${process.env.BENCH_SESSIONS_NODE_FLAGS ? ` ${process.env.BENCH_SESSIONS_NODE_FLAGS}` : ""}): ${PROMPTS} prompts x ${TURNS} turns a session; first token ${FIRST_TOKEN_MS} ms, a delta every ${DELTA_MS} ms, 1–3 s a response, tools 50–500 ms; starts spread over ${STAGGER_MS} ms; event-loop delay: how late a ${DELAY_RESOLUTION_MS} ms timer fires${PROCESSES > 1 ? `; each row ${PROCESSES} processes, the Agents' alternating: added latency over their turns pooled (each process's p99 in brackets), other figures their medians` : ""}\n`);
console.log("| Agent | N | added per turn p50 / p99 (ms) | event-loop delay p99 (ms) | heap per active / idle session (KB) | CPU per session (ms) | wall (s) | finished |");
console.log("|---|---|---|---|---|---|---|---|");
const gcRows = [];
const f = (x, digits = 1) => (x === null || x === undefined ? "–" : x.toFixed(digits));
/**
 * The processes' runs of one Agent and N as one row: the added latency's percentiles over every turn
 * of them pooled, each other figure their median, the work done their least.
 */
function combine(runs) {
  const row = { ...runs[0] };
  for (const [key, value] of Object.entries(row)) {
    if (key === "added") continue;
    // (A figure a process could not measure, the idle heap after a deadline, is null there.)
    const values = runs.map((r) => r[key]).filter((x) => typeof x === "number");
    if (typeof value === "number" || values.length) row[key] = values.length ? median(values) : null;
  }
  const pooled = runs.flatMap((r) => r.added).sort((a, b) => a - b);
  row.addedP50 = quantile(pooled, 0.5);
  row.addedP99 = quantile(pooled, 0.99);
  row.turns = pooled.length;
  delete row.added;
  row.finished = Math.min(...runs.map((r) => r.finished));
  row.timedOut = runs.some((r) => r.timedOut);
  row.runs = runs;
  return row;
}
/** Late turns over every process: all, those in a full collection's cycle, and the share of all turns ending in one. */
function lateCell(r) {
  const sum = (key) => r.runs.reduce((n, run) => n + run[key], 0);
  const turns = sum("turns");
  return `${sum("lateTurns")} / ${sum("lateTurnsInFull")} (${((100 * sum("turnsInFull")) / turns).toFixed(1)} %)`;
}
/** A median, with every process's value beside it when there are several. */
const withValues = (r, key) => (r.runs.length > 1 ? `${f(r[key])} (${r.runs.map((run) => f(run[key])).join(", ")})` : f(r[key]));
const flags = (process.env.BENCH_SESSIONS_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean);
function runProcess(impl, count) {
  const child = spawnSync(process.execPath, ["--expose-gc", ...flags, fileURLToPath(import.meta.url)], { env: { ...process.env, BENCH_SESSIONS_CHILD: `${impl}:${count}` }, encoding: "utf8", maxBuffer: 1 << 26 });
  if (child.status !== 0) throw new Error(`bench/sessions ${impl} N=${count} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1));
}
for (const count of counts) {
  // The Agents' processes alternate (ours, pi, ours, pi …), so a drift in the machine's load reaches both.
  const runs = Object.fromEntries(impls.map((impl) => [impl, []]));
  for (let i = 0; i < PROCESSES; i++) for (const impl of impls) runs[impl].push(runProcess(impl, count));
  for (const impl of impls) {
    const r = combine(runs[impl]);
    results.push(r);
    console.log(`| ${impl} | ${count.toLocaleString("en")} | ${f(r.addedP50)} / ${withValues(r, "addedP99")} | ${withValues(r, "delayP99")} | ${f(r.heapActiveKB)} / ${f(r.heapIdleKB)} | ${f(r.cpuMsPerSession)} | ${f(r.wallS)} | ${r.finished}/${count}${r.timedOut ? " (deadline)" : ""} |`);
    gcRows.push(`| ${impl} | ${count.toLocaleString("en")} | ${f(r.activeAddedP99)} / ${f(r.activeDelayP99)} | ${f(r.scavenges, 0)} / ${f(r.scavengeMs, 0)} | ${f(r.fullGCs, 0)} / ${f(r.fullGCMs, 0)} / ${f(r.fullGCMaxMs)} | ${lateCell(r)} | ${f(r.heapLiveKB)} |`);
  }
}

// Where the time went: the delay while every session is active (no starts, no wind-down), the
// collector's pauses over the whole run, and the heap each active session keeps alive.
console.log(`\n| Agent | N | all active (turns started ${ACTIVE_FROM_MS / 1000}–${ACTIVE_TO_MS / 1000} s): added p99 / event-loop delay p99 (ms) | scavenges: count / total pause (ms) | full GCs: count / total / longest pause (ms) | turns > ${LATE_MS} ms late: all / ending in a full GC's cycle (of every turn, the share ending there) | live heap per active session, after a full GC (KB) |`);
console.log("|---|---|---|---|---|---|---|");
for (const row of gcRows) console.log(row);

/** The N at which the event-loop delay p99 reaches 20 ms, interpolated on log N between the measured counts. */
function twentyMsPoint(impl) {
  const rows = results.filter((r) => r.impl === impl).sort((a, b) => a.count - b.count);
  for (let i = 0; i < rows.length; i++) {
    if (rows[i].delayP99 < 20) continue;
    if (i === 0) return `≤ ${rows[0].count.toLocaleString("en")}`;
    const [lo, hi] = [rows[i - 1], rows[i]];
    const t = (20 - lo.delayP99) / (hi.delayP99 - lo.delayP99);
    return `≈ ${Math.round(Math.exp(Math.log(lo.count) + t * (Math.log(hi.count) - Math.log(lo.count)))).toLocaleString("en")}`;
  }
  return rows.length ? `> ${rows.at(-1).count.toLocaleString("en")}` : "–";
}
console.log("");
for (const impl of impls) console.log(`${impl}: event-loop delay p99 reaches 20 ms at N ${twentyMsPoint(impl)}`);
const ours1000 = results.find((r) => r.impl === "ours" && r.count === 1000);
if (ours1000) {
  const ok = ours1000.addedP99 <= LATE_MS && ours1000.delayP99 <= 20;
  const verdict = PROCESSES >= VERDICT_PROCESSES ? (ok ? "PASS" : "MISS") : `${ok ? "pass" : "miss"} in ${PROCESSES === 1 ? "one process" : `${PROCESSES} processes`} (a verdict reads BENCH_SESSIONS_PROCESSES=${VERDICT_PROCESSES} or more)`;
  const pi1000 = results.find((r) => r.impl === "pi" && r.count === 1000);
  const beside = pi1000 ? `; pi's Agent beside it: ${f(pi1000.addedP99)} / ${f(pi1000.delayP99)} ms` : "";
  console.log(`targets at N = 1,000 (ours, ${ours1000.turns.toLocaleString("en")} turns): added p99 ${f(ours1000.addedP99)} ms (≤ ${LATE_MS}), event-loop delay p99 ${f(ours1000.delayP99)} ms (≤ 20)${beside}: ${verdict}`);
}
