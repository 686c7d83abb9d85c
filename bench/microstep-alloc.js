// XState's own allocation per microstep (issue 40 item 4): 1,000 actors of a bare machine (a 19-key
// context, states three deep like the run machine's) take an event followed by K eventless
// microsteps, each with an `assign` when BENCH_MICROSTEP_ASSIGN=1. Nothing of ours runs.
//
//   for k in 1 3 5; do BENCH_MICROSTEP_K=$k node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256 bench/microstep-alloc.js; done
import { assign, createActor, createMachine } from "xstate";

const K = Number(process.env.BENCH_MICROSTEP_K ?? 3);
const ASSIGN = process.env.BENCH_MICROSTEP_ASSIGN === "1";
const context = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`k${i}`, i]));
const states = { idle: { on: { go: "s0" } } };
for (let i = 0; i < K; i++) {
  states[`s${i}`] = { ...(ASSIGN ? { entry: assign({ k0: ({ context }) => context.k0 + 1 }) } : {}), always: { target: i + 1 < K ? `s${i + 1}` : "idle" } };
}
const machine = createMachine({ id: "m", context, initial: "t", states: { t: { initial: "idle", states } } });
const actors = Array.from({ length: 1000 }, () => createActor(machine).start());
for (let round = 0; round < 30; round++) for (const actor of actors) actor.send({ type: "go" }); // warm-up
globalThis.gc?.();
const before = process.memoryUsage().heapUsed;
for (let round = 0; round < 2; round++) for (const actor of actors) actor.send({ type: "go" });
const perEvent = (process.memoryUsage().heapUsed - before) / 2000;
console.log(`node ${process.version}: an event and ${K} eventless microsteps${ASSIGN ? " (an assign each)" : ""}: ${(perEvent / 1024).toFixed(1)} KB (${K + 1} microsteps)`);
