// node --expose-gc bench/gc-survival.js
//
// How much of each finished run survives young-generation GC (and so is copied by every scavenge
// until a full GC reclaims it): this runtime, the reference, and two bare XState machines that
// differ only in whether they invoke a child actor. Then why, on a 40 KB payload: what keeps a
// finished actor alive until the next full GC (see bench/README.md, "What outlives a run").
import v8 from "node:v8";
import { createActor, setup } from "xstate";
import { runAgentLoop as statechartLoop } from "../dist/index.js";
import { runAgentLoop as referenceLoop } from "@earendil-works/pi-agent-core";
import { runToolTurns } from "./scenarios.js";

if (!global.gc) throw new Error("run with node --expose-gc");

const agentRun = (loop) => () => runToolTurns(loop, 1);

// A child that does nothing: any actor logic will do.
const idle = { transition: (snapshot) => snapshot, getInitialSnapshot: () => ({ status: "active", output: undefined, error: undefined }), getPersistedSnapshot: (s) => s };
const bare = (withChild) =>
  setup({ actors: { idle } }).createMachine({
    initial: "running",
    states: {
      running: { ...(withChild ? { invoke: { src: "idle" } } : {}), on: { GO: "done" } },
      done: { type: "final" },
    },
  });
const machineRun = (machine) => async () => {
  const actor = createActor(machine);
  const done = new Promise((resolve) => actor.subscribe({ complete: resolve }));
  actor.start();
  await undefined;
  actor.send({ type: "GO" });
  await done;
};

const oldSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === "old_space").space_used_size;

/** KB per run still alive after two scavenges (so promoted), then reclaimed by a full GC. */
async function survivingPerRun(run, runs) {
  for (let i = 0; i < 500; i++) await run(); // warm-up
  global.gc();
  const before = oldSpace();
  for (let i = 0; i < runs; i++) await run();
  await new Promise((resolve) => setImmediate(resolve));
  global.gc({ type: "minor" });
  global.gc({ type: "minor" });
  return (oldSpace() - before) / runs / 1024;
}

// What outlives a run: each case makes a 40 KB array (a 5,000-message transcript's copy) that is
// garbage once the case returns.
const payload = Array.from({ length: 5000 }, (_, i) => ({ i }));
const big = () => payload.concat([{}]);
const withContext = setup({}).createMachine({ context: () => ({ messages: big() }), initial: "idle", states: { idle: {} } });
/** An actor scope as XState's Actor builds one: its executor closes over its owner. */
const scopeOf = () => {
  const owner = { messages: big(), deferred: [] };
  return { self: owner, actionExecutor: (action) => owner.deferred.push(action) };
};
// XState's microstep (5.33): `actorScope.actionExecutor = action => { … }`, restored afterwards.
// V8's parser allocates a function literal assigned to a property in the old generation, so this
// closure, dead at once, keeps what it closes over alive through every scavenge.
function swapAsXStateDoes(scope) {
  const original = scope.actionExecutor;
  scope.actionExecutor = (action) => original(action);
  scope.actionExecutor = original;
}
// The same with the closure held in a local first: an ordinary young closure.
function swapThroughLocal(scope) {
  const original = scope.actionExecutor;
  const collecting = (action) => original(action);
  scope.actionExecutor = collecting;
  scope.actionExecutor = original;
}
const cases = [
  ["statechart run (a)", agentRun(statechartLoop), 200],
  ["reference run (a)", agentRun(referenceLoop), 200],
  ["bare machine, no child", machineRun(bare(false)), 2000],
  ["bare machine, one idle child", machineRun(bare(true)), 2000],
  ["bare machine, 40 KB context", async () => void createActor(withContext).start().stop(), 500],
  ["40 KB in a scope, no swap", async () => void scopeOf(), 500],
  ["40 KB, swapped as XState does", async () => swapAsXStateDoes(scopeOf()), 500],
  ["40 KB, swapped through a local", async () => swapThroughLocal(scopeOf()), 500],
];
for (const [name, run, runs] of cases) {
  console.log(`${name.padEnd(30)} ${(await survivingPerRun(run, runs)).toFixed(1).padStart(7)} KB per run survive young-generation GC`);
}
