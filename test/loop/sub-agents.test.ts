/**
 * SPEC R14, R63: a tool's sub-agent (`context.runSubAgent`) seen from the tool and from its parent
 * run: a listener's failure, what the sub-agent spends, how deep sub-agents nest.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentRunOptions, type AgentTool, type Script } from "../../src/index.js";
import { MAX_SUB_AGENT_DEPTH } from "../../src/actors/sub-runs.js";
import { baseConfig, project, tool, user, withoutUpdates } from "./helpers.js";

const answering = (answer: string, usage?: { input: number; output: number }): AgentRunOptions => ({
  streamFn: scriptedStreamFn(() => ({ content: [text(answer)], ...(usage ? { usage } : {}) })),
  config: baseConfig(),
});

async function parentRun(delegate: AgentTool, script: Script, config = baseConfig()) {
  const events: AgentEvent[] = [];
  const messages = await runAgentLoop([user("go")], { messages: [], tools: [delegate] }, config, (event) => void events.push(event), undefined, scriptedStreamFn(script));
  return { events, messages };
}

describe("R14: a sub-agent's event listener and depth", () => {
  it("R14: a tool that delegates to an agent holding the same tool stops at MAX_SUB_AGENT_DEPTH with an error result", async () => {
    const script: Script = (request) =>
      request.context.messages.some((message) => message.role === "toolResult") ? { content: [text("gave up")] } : { content: [toolCall("delegate", {})] };
    const streamFn = scriptedStreamFn(script);
    let nesting = 0;
    const reached: number[] = [];
    const refused: string[] = [];
    const delegate: AgentTool = tool("delegate", async (_id, _args, _signal, _onUpdate, context) => {
      // (The test's own stop, far below a runaway: without the limit the recursion never ends.)
      if (nesting >= 20) return { content: [{ type: "text", text: "the test stopped it" }], details: {} };
      nesting++;
      try {
        await context!.runSubAgent({ streamFn, tools: [delegate], config: baseConfig() }, { prompts: [user("again")] });
        reached.push(nesting);
      } catch (error) {
        refused.push((error as Error).message);
        throw error;
      } finally {
        nesting--;
      }
      return { content: [{ type: "text", text: "delegated" }], details: {} };
    });
    const { events } = await parentRun(delegate, script);
    // Sub-agents at depths 1 to 8 ran; the one at depth 8 was refused a ninth, as its call's error.
    expect(Math.max(...reached)).toBe(MAX_SUB_AGENT_DEPTH);
    expect(refused).toEqual([`agent loop: sub-agents nest at most ${MAX_SUB_AGENT_DEPTH} deep; this one would be at depth ${MAX_SUB_AGENT_DEPTH + 1}`]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "completed" });
  });

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
