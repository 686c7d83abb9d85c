// npm run bench:peers (issue 40): this package against the runtimes a user could embed instead, on
// Node 24 and Node 20, each in a process of its own (bench/peers/measure.js). Installs the peers
// (`npm ci --prefix bench/peers`) and a Node 24 binary (the registry's `node-<platform>-<arch>@24`,
// into bench/peers/node_modules/.node24) when they are missing. BENCH_NODES=24 or =20 picks one;
// BENCH_PEERS=ours,pi (of pi, ours, ai, openai, langgraph) and BENCH_SCENARIOS=a,one pick columns and rows.
// BENCH_PROCESSES (3) processes a Node: the tables give each column's median over them, and each
// ratio is taken within a process (both sides timed side by side) and reported as the median of
// those, with every process's value: one process's ratio moved by ±0.15–0.3 between runs.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "../sample.js";

const here = dirname(fileURLToPath(import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const peers = process.env.BENCH_PEERS?.split(",");
const needsPeers = !peers || peers.some((peer) => !["ours", "pi"].includes(peer));
if (needsPeers && !existsSync(join(here, "node_modules", "ai"))) {
  console.log("bench:peers: installing the peers (npm ci --prefix bench/peers)");
  execFileSync(npm, ["ci", "--prefix", here, "--no-audit", "--no-fund", "--ignore-scripts"], { stdio: "inherit" });
}

function nodeOf(major) {
  if (Number(process.versions.node.split(".")[0]) === major) return process.execPath;
  if (process.env[`BENCH_NODE${major}`]) return process.env[`BENCH_NODE${major}`];
  if (major !== 24) return null;
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = join(here, "node_modules", ".node24");
  const binary = join(prefix, "node_modules", pkg, "bin", "node");
  if (!existsSync(binary)) {
    console.log(`bench:peers: installing ${pkg}@24 into ${prefix}`);
    execFileSync(npm, ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", prefix, `${pkg}@24`], { stdio: "inherit" });
  }
  return binary;
}

const us = (x) => Math.round(x).toLocaleString("en");
const cell = (r) => (r ? `${us(r.median)} (${us(r.min)}–${us(r.max)})` : "–");
const LABELS = { a: "(a) 5 requests, 12 tools", one: "one-turn run", stream: "3,000-delta stream" };

function table(result, title, columns) {
  const lines = [`${title}`, "", `| scenario | ${columns.map((c) => c.title).join(" | ")} |`, `|---|${columns.map(() => "---").join("|")}|`];
  for (const scenario of Object.keys(LABELS)) {
    if (!result.results[scenario]) continue;
    lines.push(`| ${LABELS[scenario]} | ${columns.map((c) => cell(result.results[scenario][c.pick(scenario)])).join(" | ")} |`);
  }
  return lines.join("\n");
}


/** Several processes' results as one: each column's median of their medians, the lowest min and the highest max. */
function merged(results) {
  const [first] = results;
  const out = {};
  for (const scenario of Object.keys(first.results)) {
    out[scenario] = {};
    for (const column of Object.keys(first.results[scenario])) {
      const each = results.map((result) => result.results[scenario][column]);
      out[scenario][column] = { median: median(each.map((x) => x.median)), min: Math.min(...each.map((x) => x.min)), max: Math.max(...each.map((x) => x.max)) };
    }
  }
  return { ...first, results: out };
}

function report(results) {
  const result = merged(results);
  const r = result.results;
  const m = (scenario, column) => r[scenario]?.[column]?.median;
  const processes = results.length === 1 ? "one process" : `${results.length} processes (each column: the median of their medians)`;
  console.log(`\n## Node ${result.node}: CPU µs per run, median (min–max) over interleaved rounds ${JSON.stringify(result.rounds)} (whole balanced designs), runs per round ${JSON.stringify(result.runs)}, ${processes}\n`);
  for (const [peer, why] of Object.entries(result.notLoaded)) console.log(`- ${peer} does not load on Node ${result.node}: ${why}`);
  // The issue's table: each peer's loop call, ours also as an Agent prompt; the AI SDK as ToolLoopAgent.
  console.log(table(result, "Issue 40's table (OpenAI Agents and LangGraph: their streaming call on the stream row)", [
    { title: "pi loop", pick: () => "pi loop" },
    { title: "**ours: loop**", pick: () => "ours loop" },
    { title: "**ours: Agent**", pick: () => "ours Agent" },
    { title: "AI SDK 7 `generate`", pick: () => "AI SDK Agent generate" },
    { title: "AI SDK 7 `stream`", pick: () => "AI SDK Agent stream" },
    { title: "OpenAI Agents", pick: (s) => (s === "stream" ? "OpenAI Agents run (stream)" : "OpenAI Agents run") },
    { title: "LangGraph", pick: (s) => (s === "stream" ? "LangGraph stream" : "LangGraph invoke") },
  ]));
  const kinds = { loop: "Loop calls", session: "Agent / session prompts (a new session each run)" };
  for (const [kind, title] of Object.entries(kinds)) {
    const columns = result.columns.filter((c) => c.kind === kind).map((c) => ({ title: c.column, pick: () => c.column }));
    console.log(`\n${table(result, title, columns)}`);
  }
  // Each process's ratio (its two sides timed side by side), then their median and every value.
  const ratio = (scenario, a, b) => {
    const each = results.map((x) => x.results[scenario]?.[a]?.median / x.results[scenario]?.[b]?.median).filter(Number.isFinite);
    if (each.length === 0) return "–";
    return each.length === 1 ? each[0].toFixed(2) : `${median(each).toFixed(2)} (${each.map((x) => x.toFixed(2)).join(", ")})`;
  };
  console.log(`\nours loop / pi loop: (a) ${ratio("a", "ours loop", "pi loop")}, one-turn ${ratio("one", "ours loop", "pi loop")}, stream ${ratio("stream", "ours loop", "pi loop")}`);
  console.log(`ours Agent / ours loop: (a) ${ratio("a", "ours Agent", "ours loop")}, one-turn ${ratio("one", "ours Agent", "ours loop")} (target ≤ 1.3, item 2)`);
  console.log(`ours Agent / pi Agent on the stream: ${ratio("stream", "ours Agent", "pi Agent")} (target ≤ 1.2, item 2)`);
  console.log(`ours loop / AI SDK generateText: (a) ${ratio("a", "ours loop", "AI SDK generateText")}, one-turn ${ratio("one", "ours loop", "AI SDK generateText")}`);
  const cheaper = (kind, ours) => {
    const others = result.columns.filter((c) => c.kind === kind && !c.column.startsWith("ours") && !c.column.startsWith("pi"));
    return Object.keys(LABELS).filter((s) => r[s]).map((s) => {
      const beaten = others.filter((c) => r[s][c.column] && r[s][c.column].median < m(s, ours)).map((c) => c.column);
      return `${s}: ${beaten.length ? `cheaper than ours: ${beaten.join(", ")}` : "ours cheapest"}`;
    }).join("; ");
  };
  console.log(`peers' loop calls against ours: ${cheaper("loop", "ours loop")}`);
  console.log(`peers' sessions against our Agent: ${cheaper("session", "ours Agent")}`);
}

const nodes = (process.env.BENCH_NODES ?? "24,20").split(",").map(Number);
const PROCESSES = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 3));
let failed = false;
for (const major of nodes) {
  const node = nodeOf(major);
  if (!node) {
    console.log(`\n## Node ${major}: no binary (set BENCH_NODE${major})`);
    continue;
  }
  const results = [];
  for (let i = 0; i < PROCESSES && !failed; i++) {
    const child = spawnSync(node, ["--expose-gc", join(here, "measure.js")], { encoding: "utf8", env: process.env, maxBuffer: 1 << 26 });
    if (child.status !== 0) {
      console.error(`\n## Node ${major}: the bench failed\n${child.stderr}`);
      failed = true;
      break;
    }
    results.push(JSON.parse(child.stdout.trim().split("\n").at(-1)));
  }
  if (results.length === PROCESSES) report(results);
}
if (failed) process.exit(1);
