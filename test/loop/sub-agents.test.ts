/**
 * SPEC R14, R63: a tool's sub-agent (`context.runSubAgent`) seen from the tool and from its parent
 * run: a listener's failure, and what the sub-agent spends.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentRunOptions } from "../../src/index.js";
import { baseConfig, project, tool, user, withoutUpdates } from "./helpers.js";

const answering = (answer: string, usage?: { input: number; output: number }): AgentRunOptions => ({
  streamFn: scriptedStreamFn(() => ({ content: [text(answer)], ...(usage ? { usage } : {}) })),
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

describe("R63: what a sub-agent spends is its parent's", () => {
  it("R63: a sub-agent's usage is added to its call's result usage, and the parent's budget counts it", async () => {
    const delegate = tool("delegate", async (_id, _args, _signal, _onUpdate, context) => {
      const added = await context!.runSubAgent(answering("child", { input: 800, output: 200 }), { prompts: [user("sub")] });
      return { content: [{ type: "text", text: String(added.length) }], details: {}, usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
    });
    const usage = { input: 10, output: 10 };
    const { events, messages } = await parentRun(
      delegate,
      [{ content: [toolCall("delegate", {}, "c1")], usage }, { content: [toolCall("delegate", {}, "c2")], usage }, { content: [text("after")], usage }],
      baseConfig({ budget: { maxTotalTokens: 500 } }),
    );
    // The tool's own usage plus the sub-agent's response.
    const result = messages.find((message) => message.role === "toolResult") as { usage?: { input: number; output: number; totalTokens: number } };
    expect(result.usage).toMatchObject({ input: 801, output: 202 });
    // 20 + 1003 after the first turn: the budget ends the run there.
    expect(withoutUpdates(events).map(project).slice(-1)).toEqual([expect.stringMatching(/^agent_end/)]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "max_tokens" });
  });
});
