import { runToolTurns } from "/work/main/bench/scenarios.js";
const dirs = process.argv.slice(2);
const loops = {};
for (const d of dirs) loops[d] = d === "ref" ? (await import("@earendil-works/pi-agent-core")).runAgentLoop : (await import(d + "/dist/index.js")).runAgentLoop;
for (const l of Object.values(loops)) await runToolTurns(l, 300);
const times = Object.fromEntries(dirs.map((d) => [d, []]));
for (let round = 0; round < 11; round++) {
  const order = round % 2 ? dirs : [...dirs].reverse();
  for (const name of order) { global.gc?.(); const t = performance.now(); await runToolTurns(loops[name], 400); times[name].push(performance.now() - t); }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[5];
const base = med(times[dirs[0]]);
console.log(dirs.map((d) => `${d.split("/").pop()} ${(med(times[d]) / base).toFixed(3)}`).join("  "));
