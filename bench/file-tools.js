// npm run bench (after run.js): the terminal agent's file tools on inputs that used to stall them
// (issue 15): a catastrophic pattern, a 4 MB single-line file, ten `**/` against a 30-level tree.
// Medians over rounds, each against its target, PASS or MISS.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { listFilesTool, readFileTool, searchTextTool } from "../dist/node.js";
import { median } from "./sample.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ws = mkdtempSync(path.join(tmpdir(), "xal-bench-tools-"));
writeFileSync(path.join(ws, "a.txt"), `${"a".repeat(100_000)}\n`);
writeFileSync(path.join(ws, "min.js"), "x".repeat(4 * 1024 * 1024));
const levels = Array.from({ length: 30 }, (_, i) => `l${i}`);
for (let depth = 1; depth <= 30; depth++) {
  const dir = path.join(ws, "tree", ...levels.slice(0, depth));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "f.txt"), "x\n");
}

const read = readFileTool({ cwd: ws });
const search = searchTextTool({ cwd: ws });
const list = listFilesTool({ cwd: ws });
const args = { literal: false, ignoreCase: false, maxResults: 100 };
const cases = [
  ["search_text ^(a+)+$ over 10^5 a's", 100, () => search.execute("b", { ...args, pattern: "^(a+)+$", path: "a.txt" })],
  ["read_file of a 4 MB single-line file", 100, () => read.execute("b", { path: "min.js" })],
  ["list_files ten **/ over a 30-level tree", 1000, () => list.execute("b", { path: "tree", recursive: true, limit: 500, glob: `${"**/".repeat(10)}*.txt` })],
  ["list_files ten **/l*/ over a 30-level tree", 1000, () => list.execute("b", { path: "tree", recursive: true, limit: 500, glob: `${"**/l*/".repeat(10)}*.tx` })],
];

let missed = 0;
try {
  console.log(`file tools (issue 15), median of ${ROUNDS} rounds:`);
  for (const [name, targetMs, body] of cases) {
    const times = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      await body();
      times.push(performance.now() - start);
    }
    const ms = median(times);
    const pass = ms <= targetMs;
    if (!pass) missed++;
    console.log(`  ${pass ? "PASS" : "MISS"}  ${name}: ${ms.toFixed(1)} ms (target ${targetMs} ms)`);
  }
} finally {
  rmSync(ws, { recursive: true, force: true });
}
if (missed) console.log(`  ${missed} of ${cases.length} missed their target`);
