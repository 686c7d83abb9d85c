// npm run bench:alloc
//
// How many bytes a run of bench (a) allocates, garbage included, for this runtime and the
// reference, and whose code allocates them: V8's sampling heap profiler with the objects young and
// full collections reclaim kept in its samples. A run's time follows what it allocates (garbage
// collection is a fifth of the statechart's time), so this says where (a)'s ratio comes from.
// See bench/README.md, "XState's floor" (where (a)'s ratio comes from).
import { Session } from "node:inspector/promises";
import { runAgentLoop as statechartLoop } from "../dist/index.js";
import { runAgentLoop as referenceLoop } from "@earendil-works/pi-agent-core";
import { runToolTurns } from "./scenarios.js";

const RUNS = Number(process.env.BENCH_ALLOC_RUNS ?? 1000);

/** The package a profile node's code belongs to: a dependency by name, else this package's file. */
function ownerOf(url, inherited) {
  if (!url) return inherited; // a builtin (Set, Map, Object.assign): the code that called it
  if (url.includes("node_modules/")) {
    const path = url.split("node_modules/").at(-1).split("/");
    return path[0].startsWith("@") ? `${path[0]}/${path[1]}` : path[0];
  }
  if (url.startsWith("node:")) return "node";
  // The scenario's own stream function and tools, the same for both loops.
  if (url.includes("/bench/")) return "the scenario";
  return "xstate-agent-loop";
}

async function allocationPerRun(loop) {
  await runToolTurns(loop, 300); // warm-up
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await runToolTurns(loop, RUNS);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  session.disconnect();
  const owners = new Map();
  let total = 0;
  const walk = (node, inherited) => {
    const owner = ownerOf(node.callFrame.url, inherited);
    total += node.selfSize;
    owners.set(owner, (owners.get(owner) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, owner);
  };
  walk(profile.head, "(other)");
  return { total: total / RUNS, owners: [...owners].map(([owner, bytes]) => [owner, bytes / RUNS]).sort((a, b) => b[1] - a[1]) };
}

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;
const statechart = await allocationPerRun(statechartLoop);
const reference = await allocationPerRun(referenceLoop);
console.log(`\nbytes allocated per run of bench (a) (5 turns x 3 parallel tools; ${RUNS} runs sampled; node ${process.version})\n`);
console.log(`statechart ${kb(statechart.total)}, reference ${kb(reference.total)}: ratio ${(statechart.total / reference.total).toFixed(2)}`);
for (const [name, result] of [["statechart", statechart], ["reference", reference]]) {
  const shares = result.owners.filter(([, bytes]) => bytes / result.total >= 0.01).map(([owner, bytes]) => `${owner} ${kb(bytes)} (${((bytes / result.total) * 100).toFixed(0)} %)`);
  console.log(`  ${name.padEnd(10)} ${shares.join(", ")}`);
}
