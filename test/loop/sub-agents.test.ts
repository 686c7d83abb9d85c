/**
 * SPEC R14: a tool's sub-agent (`context.runSubAgent`) seen from the tool and from its parent run.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentRunOptions } from "../../src/index.js";
import { baseConfig, tool, user } from "./helpers.js";

const answering = (answer: string): AgentRunOptions => ({
  streamFn: scriptedStreamFn(() => ({ content: [text(answer)] })),
  config: baseConfig(),
});

async function parentRun(delegate: ReturnType<typeof tool>, script: Parameters<typeof scriptedStreamFn>[0], config = baseConfig()) {
  const events: AgentEvent[] = [];
  const messages = await runAgentLoop([user("go")], { messages: [], tools: [delegate] }, config, (event) => void events.push(event), undefined, scriptedStreamFn(script));
  return { events, messages };
}

describe("R14: a sub-agent's event listener", () => {
  it("R14: an onEvent that throws fails the sub-agent with its error: the call's error result, never an uncaught exception", async () => {
    const uncaught: unknown[] = [];
    const note = (error: unknown) => void uncaught.push(error);
    process.on("uncaughtException", note);
    let seen = 0;
    const delegate = tool("delegate", async (_id, _args, _signal, _onUpdate, context) => {
      await context!.runSubAgent(answering("a long answer in several words"), {
        prompts: [user("sub")],
        onEvent: (event) => {
          seen++;
          if (event.type === "message_update") throw new Error("listener bug");
        },
      });
      return { content: [{ type: "text", text: "unreachable" }], details: {} };
    });
    try {
      const { events } = await parentRun(delegate, [{ content: [toolCall("delegate", {}, "c1")] }, { content: [text("after")] }]);
      // (RxJS reports a subscriber's throw from a timer.)
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(uncaught).toEqual([]);
      const end = events.find((event) => event.type === "tool_execution_end");
      expect(end).toMatchObject({ isError: true, result: { content: [{ type: "text", text: "listener bug" }] } });
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "completed" });
      // The listener got nothing after its throw.
      const firstUpdate = 6; // agent_start turn_start message_start/end(user) message_start message_update
      expect(seen).toBe(firstUpdate);
    } finally {
      process.off("uncaughtException", note);
    }
  });
});
