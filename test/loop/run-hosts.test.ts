/**
 * A host serves a run's runtime under the run's key (`context.host`) before the run starts; the
 * run's step worker closes the key when it stops. (A runtime kept until the next full collection
 * would keep the whole finished run alive through every young-generation one: bench/README.md,
 * "What outlives a run"; a key never closed would keep it for ever.)
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createActor } from "xstate";
import { describe, expect, it } from "vitest";
import { agentEvents, createAgentRunLogic, runAgentLoop, scriptedStreamFn, text } from "../../src/index.js";
import { hostedRuns, type RunActor } from "../../src/api/start-run.js";
import { baseConfig, user } from "./helpers.js";

/** Whether the run's runtime is still served under its key. */
const served = (actor: RunActor): boolean => hostedRuns().hosts.serves(actor.getSnapshot().context.host);

describe("run hosts", () => {
  it("a finished run's runtime binding is released", async () => {
    let actor: RunActor | undefined;
    let boundWhileRunning = false;
    const stream = scriptedStreamFn([{ content: [text("done")] }]);
    const sink = () => {
      if (actor) boundWhileRunning ||= served(actor);
    };
    await runAgentLoop([user("go")], { messages: [] }, baseConfig(), sink, undefined, stream, { onActor: (a) => (actor = a) });
    expect(boundWhileRunning).toBe(true);
    expect(served(actor!)).toBe(false);
  });

  it("a run stopped by its host (its sink threw) releases its runtime binding too", async () => {
    let actor: RunActor | undefined;
    const stream = scriptedStreamFn([{ content: [text("done")] }]);
    const sink = () => {
      throw new Error("sink broke");
    };
    await expect(runAgentLoop([user("go")], { messages: [] }, baseConfig(), sink, undefined, stream, { onActor: (a) => (actor = a) })).rejects.toThrow("sink broke");
    expect(actor!.getSnapshot().status).not.toBe("active");
    expect(served(actor!)).toBe(false);
  });

  it("an embedded run actor created but never started is not kept, nor its event channel", async () => {
    const logic = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [text("done")] }]), config: baseConfig() });
    // Made in a function of its own so that no local of this test keeps the actor or its channel.
    const refs = (() => {
      const actor = createActor(logic, { input: { messages: [], prompts: [user("go")] } });
      // The channel's observable: it holds the channel, and the channel holds it.
      const channel = agentEvents(actor);
      return { actor: new WeakRef(actor), channel: new WeakRef(channel) };
    })();
    const collected = await collectedAfterGc(() => refs.actor.deref() === undefined && refs.channel.deref() === undefined);
    expect(collected).toBe(true);
  });
});

/**
 * Full collections (and the turns FinalizationRegistry callbacks run in) until `done`, at most 20.
 * Never a collection in the turn `done` ran in: a `WeakRef`'s `deref` keeps its target alive until
 * the turn ends.
 */
async function collectedAfterGc(done: () => boolean): Promise<boolean> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 20; i++) {
    gc();
    await nextTurn();
    if (done()) return true;
    await nextTurn();
  }
  return false;
}
