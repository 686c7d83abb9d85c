/**
 * SPEC R13: a restored run resolves the tools its snapshot names, those a hook installed
 * included, from the tools it is given; a new run keeps the registry its input was built from
 * (issue 19: the runtime no longer rebuilds it for every run).
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise, type SnapshotFrom } from "xstate";
import { createAgentRunLogic, scriptedStreamFn, text, toolCall, type AgentRunLogic, type AgentTool } from "../../src/index.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";

function tools(executed: string[]): AgentTool[] {
  return ["a", "b", "c"].map((name) => tool(name, async () => (executed.push(name), ok(name))));
}

/** Turn 1 calls `a`; prepareNextTurn then installs [c, a]; `script` answers the requests. */
const options = (executed: string[], script: Parameters<typeof scriptedStreamFn>[0]) => {
  const available = tools(executed);
  return {
    streamFn: scriptedStreamFn(script),
    tools: available,
    config: baseConfig({
      prepareNextTurn: (turn) => (turn.context.tools?.length === 3 ? { context: { messages: turn.context.messages, tools: [available[2]!, available[0]!] } } : undefined),
    }),
  };
};

describe("R13: the restored run's tool set", () => {
  it("R13: a run restored after a hook replaced its tools resolves the snapshot's tools, not the ones it was given first", async () => {
    const executed: string[] = [];
    const original = createActor(
      createAgentRunLogic(options(executed, [{ content: [toolCall("a", {})] }, { content: [text("done")] }])),
      { input: { prompts: [user("go")], messages: [] } },
    );
    let persisted: unknown;
    original.subscribe((snapshot: SnapshotFrom<AgentRunLogic>) => {
      const names = snapshot.context.toolSet.tools.map((entry) => entry.decl.name);
      if (persisted === undefined && names.join() === "c,a" && JSON.stringify(snapshot.value).includes("streaming")) {
        persisted = JSON.parse(JSON.stringify(original.getPersistedSnapshot()));
      }
    });
    original.start();
    await toPromise(original);
    expect(persisted).toBeDefined();
    expect(executed).toEqual(["a"]);

    // Restored with all three tools: its next response calls b (no longer in its set) and c.
    const again: string[] = [];
    const restored = createActor(
      createAgentRunLogic(options(again, [{ content: [toolCall("b", {}), toolCall("c", {})] }, { content: [text("done")] }])),
      { snapshot: persisted } as never,
    );
    restored.start();
    const output = await toPromise(restored);
    expect(again).toEqual(["c"]);
    // The output is the whole run's: turn 1's result for a, then the restored turn's.
    const results = output.filter((message) => message.role === "toolResult");
    expect(results.map((message) => [message.toolName, message.isError])).toEqual([
      ["a", false],
      ["b", true],
      ["c", false],
    ]);
  });
});
