/**
 * A host binds a run actor to its runtime before the run starts; the run's step worker releases
 * the binding when it stops. (A binding kept until the next full collection would keep the whole
 * finished run alive through every young-generation one: bench/README.md, "What outlives a run".)
 */
import type { AnyActorRef } from "xstate";
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text } from "../../src/index.js";
import { hostedRuntime } from "../../src/api/run-hosts.js";
import { baseConfig, user } from "./helpers.js";

describe("run hosts", () => {
  it("a finished run's runtime binding is released", async () => {
    let actor: AnyActorRef | undefined;
    let boundWhileRunning = false;
    const stream = scriptedStreamFn([{ content: [text("done")] }]);
    const sink = () => {
      if (actor) boundWhileRunning ||= hostedRuntime(actor) !== undefined;
    };
    await runAgentLoop([user("go")], { messages: [] }, baseConfig(), sink, undefined, stream, { onActor: (a) => (actor = a) });
    expect(boundWhileRunning).toBe(true);
    expect(hostedRuntime(actor!)).toBeUndefined();
  });

  it("a run stopped by its host (its sink threw) releases its runtime binding too", async () => {
    let actor: AnyActorRef | undefined;
    const stream = scriptedStreamFn([{ content: [text("done")] }]);
    const sink = () => {
      throw new Error("sink broke");
    };
    await expect(runAgentLoop([user("go")], { messages: [] }, baseConfig(), sink, undefined, stream, { onActor: (a) => (actor = a) })).rejects.toThrow("sink broke");
    expect(actor!.getSnapshot().status).not.toBe("active");
    expect(hostedRuntime(actor!)).toBeUndefined();
  });
});
