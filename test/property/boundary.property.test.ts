/**
 * Issue 15, fuzz test of the library boundary: random tool results, hook results and prompt
 * messages, including non-JSON values, cycles and proxies (boundary-scenario.ts). Every run ends
 * with exactly one `agent_end`, every started tool call gets exactly one end and every tool call
 * of an answered response exactly one result, and nothing escapes as an unhandled rejection or an
 * uncaught exception (a process handler records them and fails the case). A bad prompt is a typed
 * error at the call.
 *
 * Unreadable values in `prepareNextTurn`/`prepareRequest`'s `model`/`context` need the core to
 * check hook results; that variant runs in test/boundary/wired.test.ts.
 *
 * Runs: FUZZ_RUNS / 4 (250 in CI, 5,000 under `npm run test:fuzz`). Seed: FUZZ_SEED, else random.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { watchCrashes } from "../boundary/crash-watch.js";
import { boundaryProblems, boundaryScenarioArb, playBoundary } from "./boundary-scenario.js";

const RUNS = Math.ceil(Number(process.env.FUZZ_RUNS ?? 1000) / 4);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;

describe("issue 15: fuzz of the tool and hook boundary", () => {
  it(`random hostile tool results, hook results and messages never crash the host (${RUNS} runs, seed ${SEED})`, async () => {
    console.log(`boundary fuzz: ${RUNS} runs, seed ${SEED} (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS * 4} to replay)`);
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(boundaryScenarioArb({ wired: false }), async (scenario) => {
        const watch = watchCrashes();
        try {
          const run = await playBoundary(scenario);
          const problems = boundaryProblems(run, await watch.settle());
          expect(problems.slice(0, 6)).toEqual([]);
        } finally {
          watch.stop();
        }
      }),
      { numRuns: RUNS, seed: SEED, timeout: 5_000 },
    );
    console.log(`boundary fuzz: ${RUNS} runs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 30_000 + RUNS * 40);

  it("the checker flags a crash, a second agent_end and a call without its result", () => {
    const assistant = { role: "assistant", content: [{ type: "toolCall", id: "a", name: "t", arguments: {} }], stopReason: "toolUse" } as never;
    const problems = boundaryProblems(
      { events: [{ type: "agent_start" }, { type: "agent_end", messages: [] }, { type: "agent_end", messages: [] }], messages: [assistant] },
      [new Error("boom")],
    );
    expect(problems).toHaveLength(3);
    expect(boundaryProblems({ thrownAtCall: new TypeError("raw"), events: [], messages: [] }, [])).toEqual(["the call threw an untyped error: TypeError: raw"]);
  });
});
