// A hostile neighbour for the race tests: swaps an entry of the workspace between the real thing and
// a symlink to outside as fast as it can, until it is killed. Plain JS, run as its own process.
//   node swapper.mjs file <ws> <outside-dir>   ws/f: a regular file <-> a link to outside/secret.txt or outside/new.txt (dangling)
//   node swapper.mjs dir  <ws> <outside-dir>   ws/d: a directory <-> a link to outside/
import { renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

const [mode, ws, outside] = process.argv.slice(2);
const at = (name) => path.join(ws, name);
// Each state is held briefly, so that the tools see both, and often the change in between.
const hold = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
// The tools may create `d` while it is away (write_file makes parent directories): replace it.
const move = (from, to) => {
  for (let attempt = 0; ; attempt++) {
    try {
      return renameSync(from, to);
    } catch (error) {
      if (attempt > 1000) throw error;
      try {
        rmSync(to, { recursive: true, force: true });
      } catch {
        // the tools are still writing into it: try again
      }
    }
  }
};
// Never outlive the test: stop when the parent is gone, or after a minute whatever happens.
const parent = process.ppid;
const deadline = performance.now() + 60_000;
let turns = 0;
const check = () => {
  if (++turns % 256 === 0 && (process.ppid !== parent || performance.now() > deadline)) process.exit(0);
};
process.stdout.write("ready\n");
if (mode === "file") {
  for (let i = 0; ; i++) {
    check();
    symlinkSync(path.join(outside, i % 2 ? "secret.txt" : "new.txt"), at(".swap-link"));
    move(at(".swap-link"), at("f"));
    hold(0.05);
    writeFileSync(at(".swap-file"), "inside\n");
    move(at(".swap-file"), at("f"));
    hold(0.2);
  }
} else if (mode === "dir") {
  symlinkSync(outside, at(".swap-link"));
  for (;;) {
    check();
    move(at("d"), at(".swap-dir"));
    move(at(".swap-link"), at("d"));
    hold(0.05);
    move(at("d"), at(".swap-link"));
    move(at(".swap-dir"), at("d"));
    hold(0.2);
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
