/**
 * SPEC R13 through the Agent API: a session persisted with `agent.getPersistedSnapshot()` after
 * every transition of its session, run and tool-call actors, JSON round-tripped and restored with
 * `Agent.restore(snapshot, freshOptions)`, ends with the transcript of the uninterrupted session.
 */
import { describe, expect, it } from "vitest";
import type { AnyActorRef } from "xstate";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall, type AgentOptions, type AgentTool } from "../../src/index.js";
import { comparable } from "./scenario.js";

function options(executions: Record<string, number>): AgentOptions {
  const read: AgentTool = {
    name: "read",
    label: "read",
    description: "read a file",
    parameters: { type: "object", properties: { path: { type: "string" } } },
    replay: "safe",
    execute: async (id, params: { path: string }) => {
      executions[id] = (executions[id] ?? 0) + 1;
      return { content: [{ type: "text", text: `contents of ${params.path}` }], details: {} };
    },
  };
  return {
    initialState: { systemPrompt: "You read files.", model: scriptedModel, tools: [read] },
    streamFn: scriptedStreamFn((request) => {
      const answered = request.context.messages.filter((message) => message.role === "assistant").length;
      return answered === 0 ? { content: [text("Reading."), toolCall("read", { path: "a" }, "r1"), toolCall("read", { path: "b" }, "r2")] } : { content: [text("Both read.")] };
    }),
    finishTurn: async () => undefined,
  };
}

describe("R13: the Agent restores mid-run", () => {
  it("R13: Agent.restore at every snapshot of a prompt with a parallel batch ends with the uninterrupted transcript", async () => {
    const agent = new Agent(options({}));
    const points: string[] = [];
    const persist = () => {
      if (!agent.actor.getSnapshot().matches("idle")) points.push(JSON.stringify(agent.getPersistedSnapshot()));
    };
    agent.actor.subscribe(persist);
    agent.actor.system.inspect((event) => {
      if (event.type === "@xstate.snapshot" && (event.actorRef as AnyActorRef) !== agent.actor) queueMicrotask(persist);
    });
    await agent.prompt("Read a and b.");
    const expected = comparable(agent.state.messages);
    expect(points.length).toBeGreaterThan(10);

    for (const point of points) {
      const executions: Record<string, number> = {};
      const restored = Agent.restore(JSON.parse(point), options(executions));
      await restored.waitForIdle();
      expect(restored.state.isStreaming).toBe(false);
      expect(comparable(restored.state.messages)).toEqual(expected);
    }
    console.log(`R13: ${points.length} Agent restore points checked`);
  });
});
