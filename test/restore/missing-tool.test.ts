/**
 * SPEC R13: a restored run whose snapshot names a tool the provided options lack fails with a
 * `RestoreError` when it starts, so the app sees it (it used to hang, `active`).
 */
import { describe, expect, it } from "vitest";
import { assign, createActor, setup, toPromise } from "xstate";
import { createAgentRunLogic, RestoreError, scriptedStreamFn, text, toolCall, type AgentTool } from "../../src/index.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";

/** A tool that runs until the run is stopped, so a snapshot taken meanwhile names it. */
const slow: AgentTool = tool("slow", (_id, _params, signal) => new Promise((resolve) => signal?.addEventListener("abort", () => resolve(ok("x")))));

const original = () => createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [toolCall("slow", {})] }, { content: [text("done")] }]), tools: [slow], config: baseConfig() });
const withoutSlow = () => createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [text("done")] }]), tools: [], config: baseConfig() });

const input = { prompts: [user("go")], messages: [] };

/** The persisted snapshot of `actor` once its tool is running. */
async function persistedWhileRunning(actor: { getPersistedSnapshot(): unknown; stop(): void; getSnapshot(): { value: unknown } }): Promise<unknown> {
  for (let i = 0; i < 50 && !JSON.stringify(actor.getSnapshot().value).includes("executingTools"); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
  actor.stop();
  return persisted;
}

describe("R13: restoring a run without a tool its snapshot names", () => {
  it("R13: the restored root actor fails with RestoreError (status error, toPromise rejects)", async () => {
    const first = createActor(original(), { input });
    first.subscribe({ error: () => {} });
    first.start();
    const persisted = await persistedWhileRunning(first);

    const restored = createActor(withoutSlow(), { snapshot: persisted } as never);
    const settled = toPromise(restored);
    restored.subscribe({ error: () => {} });
    restored.start();
    const error = await settled.then(() => undefined, (reason: unknown) => reason);
    expect(restored.getSnapshot().status).toBe("error");
    expect(error).toBeInstanceOf(RestoreError);
    expect((error as Error).message).toContain("slow");
  });

  it("R13: an invoking parent restored from its snapshot gets the RestoreError in onError", async () => {
    const parent = setup({ actors: { run: original() } }).createMachine({
      context: { error: undefined as unknown },
      initial: "running",
      states: {
        running: {
          invoke: { id: "run", src: "run", input, onDone: "done", onError: { target: "failed", actions: assign({ error: ({ event }) => event.error }) } },
        },
        done: { type: "final" },
        failed: { type: "final" },
      },
    });
    const first = createActor(parent);
    first.subscribe({ error: () => {} });
    first.start();
    const child = first.getSnapshot().children.run!;
    for (let i = 0; i < 50 && !JSON.stringify(child.getSnapshot().value).includes("executingTools"); i++) await new Promise((resolve) => setTimeout(resolve, 1));
    const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();

    const restored = createActor(parent.provide({ actors: { run: withoutSlow() } }), { snapshot: persisted });
    restored.subscribe({ error: () => {} });
    restored.start();
    await toPromise(restored);
    expect(restored.getSnapshot().value).toBe("failed");
    expect(restored.getSnapshot().context.error).toBeInstanceOf(RestoreError);
  });
});
