/**
 * SPEC R13 across builds: a snapshot persisted by the build before issue 40.2 kept the run's start
 * time at the top of the context (`context.startedAt`); the run context now keeps it in
 * `settings` (19 top-level keys: V8 copies a 20-key context as a dictionary on every assign). Such
 * a snapshot still restores, and the run ends as the same snapshot in today's shape does.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { createAgentRunLogic, defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool } from "../../src/index.js";

const tool = (gate: Promise<void>): AgentTool => ({
  name: "wait",
  label: "wait",
  description: "waits for the gate",
  parameters: { type: "object", properties: {} },
  execute: async () => {
    await gate;
    return { content: [{ type: "text", text: "waited" }], details: {} };
  },
});
const logicWith = (gate: Promise<void>) =>
  createAgentRunLogic({
    streamFn: scriptedStreamFn([{ content: [toolCall("wait")] }, { content: [text("done")] }]),
    tools: [tool(gate)],
    config: { model: scriptedModel, convertToLlm: defaultConvertToLlm },
  });
const input = { messages: [], prompts: [{ role: "user" as const, content: "go", timestamp: 0 }] };

describe("R13: a snapshot in the shape of the build before restores", () => {
  it("R13: context.startedAt at the top (before issue 40.2) restores mid-tool and ends as today's shape does", async () => {
    // Persist while the tool waits.
    let open!: () => void;
    const first = createActor(logicWith(new Promise<void>((resolve) => (open = resolve))), { input });
    let persisted: { context: { settings: Record<string, unknown> } & Record<string, unknown> } | undefined;
    first.subscribe(() => {
      const snapshot = first.getSnapshot();
      if (!persisted && JSON.stringify(snapshot.value).includes("runningInParallel")) persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    });
    first.start();
    await expect.poll(() => persisted).toBeDefined();
    first.stop();
    open();
    expect(typeof persisted!.context.settings.startedAt).toBe("number");

    const old = structuredClone(persisted!);
    old.context.startedAt = old.context.settings.startedAt;
    delete old.context.settings.startedAt;

    const finish = async (snapshot: unknown) => {
      const actor = createActor(logicWith(Promise.resolve()), { snapshot: snapshot as never, input });
      actor.start();
      // (Clock readings differ between two restores; everything else must not.)
      const json = JSON.stringify(await toPromise(actor), (key, value) => (key === "timestamp" || key === "durationMs" ? 0 : value));
      return JSON.parse(json) as Array<{ role: string; content: unknown }>;
    };
    const today = await finish(persisted);
    const before = await finish(old);
    expect(today.map((message) => message.role)).toContain("toolResult");
    expect(today.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "done" }] });
    expect(before).toEqual(today);
  });
});
