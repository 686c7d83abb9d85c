/**
 * A host serves a run's runtime under the run's key (`context.host`) before the run starts; the
 * run's step worker closes the key when it stops. (A runtime kept until the next full collection
 * would keep the whole finished run alive through every young-generation one: bench/README.md,
 * "What outlives a run"; a key never closed would keep it for ever.)
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text } from "../../src/index.js";
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
});
