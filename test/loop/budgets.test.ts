/**
 * SPEC R63: budgets checked after each `turn_end`, before the next turn; every `agent_end`
 * carries its `reason`.
 */
import { describe, expect, it } from "vitest";
import { Agent, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type Compactor, type Model, type ScriptedResponse } from "../../src/index.js";
import { baseConfig, project, tool, user, withoutUpdates } from "./helpers.js";

/** A model whose turns each ask for one more tool call, so only a budget ends the run early. */
const looping = (turns: number, usage?: ScriptedResponse["usage"]): ScriptedResponse[] =>
  [...Array.from({ length: turns - 1 }, (_, i) => ({ content: [toolCall("t", {}, `c${i}`)], usage })), { content: [text("done")], usage }];

async function run(config: Parameters<typeof baseConfig>[0], script: ScriptedResponse[], model: Model = scriptedModel) {
  const events: AgentEvent[] = [];
  const stream = scriptedStreamFn(script);
  const messages = await runAgentLoop([user("go")], { messages: [], tools: [tool("t")] }, baseConfig({ model, ...config }), (event) => void events.push(event), undefined, stream);
  const end = events.at(-1)!;
  return { events, messages, requests: stream.calls.length, reason: end.type === "agent_end" ? end.reason : undefined };
}

describe("R63: budgets and agent_end.reason", () => {
  it("R63: maxTurns ends the run after that many turns, with agent_end{reason: max_turns}", async () => {
    const { events, requests, reason } = await run({ budget: { maxTurns: 2 } }, looping(5));
    expect(requests).toBe(2);
    expect(reason).toBe("max_turns");
    // The second turn's results were appended; the run ends right after its turn_end.
    expect(withoutUpdates(events).map(project).slice(-3)).toEqual(["message_end:toolResult(t)", "turn_end:assistant(toolUse)+1", "agent_end:6"]);
  });

  it("R63: maxTotalTokens counts the run's input + output tokens", async () => {
    const { requests, reason } = await run({ budget: { maxTotalTokens: 250 } }, looping(5, { input: 100, output: 20 }));
    // 120 after the first turn, 240 after the second, 360 after the third: the third ends it.
    expect(requests).toBe(3);
    expect(reason).toBe("max_tokens");
  });

  it("R63: maxCostUsd counts the run's cost.total", async () => {
    const priced: Model = { ...scriptedModel, cost: { input: 1_000_000, output: 0, cacheRead: 0, cacheWrite: 0 } }; // $1 per input token
    const { requests, reason } = await run({ budget: { maxCostUsd: 2 } }, looping(5, { input: 1, output: 0 }), priced);
    expect(requests).toBe(2);
    expect(reason).toBe("max_cost");
  });

  it("R63: a budget not reached changes nothing: completed", async () => {
    const { requests, reason } = await run({ budget: { maxTurns: 10, maxTotalTokens: 1e9, maxCostUsd: 1e9 } }, looping(3));
    expect(requests).toBe(3);
    expect(reason).toBe("completed");
  });

  it("R63: the other reasons: finish_turn_end, error (a response, or a hook that throws), aborted", async () => {
    expect((await run({ finishTurn: async () => ({ action: "end" }) }, looping(3))).reason).toBe("finish_turn_end");
    expect((await run({}, [{ stopReason: "error", errorMessage: "boom" }])).reason).toBe("error");
    expect((await run({ prepareRequest: async () => Promise.reject(new Error("hook bug")) }, looping(2))).reason).toBe("error");
    const controller = new AbortController();
    controller.abort();
    const events: AgentEvent[] = [];
    await runAgentLoop([user("go")], { messages: [] }, baseConfig(), (event) => void events.push(event), controller.signal, scriptedStreamFn([{ content: [text("never")] }]));
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
  });

  it("R63: the Agent exposes the last reason; messages queued when a budget ends the run stay queued", async () => {
    const agent = new Agent({ streamFn: scriptedStreamFn(looping(5)), initialState: { model: scriptedModel, tools: [tool("t")] }, budget: { maxTurns: 1 } });
    agent.subscribe((event) => {
      if (event.type === "tool_execution_start") agent.steer(user("later"));
    });
    await agent.prompt("go");
    expect(agent.lastEndReason).toBe("max_turns");
    expect(agent.hasQueuedMessages()).toBe(true);
  });

  it("R63, R61: a truncated response discarded by output-limit escalation counts: the run paid for it", async () => {
    const { requests, reason } = await run({ budget: { maxTotalTokens: 250 }, outputLimit: { escalatedMaxTokens: 64_000 }, maxTokens: 1000 }, [
      { content: [text("cut")], stopReason: "length", usage: { input: 100, output: 100 } },
      { content: [toolCall("t", {}, "c0")], usage: { input: 50, output: 50 } },
      { content: [text("done")], usage: { input: 50, output: 50 } },
    ]);
    // 200 discarded + 100 kept after the first turn: the limit is reached.
    expect({ requests, reason }).toEqual({ requests: 2, reason: "max_tokens" });
  });

  it("R63, R62: the model requests of a compaction count (what its `complete` calls returned)", async () => {
    const compactor: Compactor = async (request) => {
      await request.complete([user("Summarize")]);
      return [user("summary of earlier turns")];
    };
    const { requests, reason } = await run({ budget: { maxTotalTokens: 500 }, compact: { compactor } }, [
      { failure: "prompt_too_long" },
      { content: [text("the summary")], usage: { input: 400, output: 200 } },
      { content: [toolCall("t", {}, "c0")], usage: { input: 5, output: 5 } },
      { content: [text("done")], usage: { input: 5, output: 5 } },
    ]);
    // 600 for the summary + 10 for the first turn: the limit is reached after it.
    expect({ requests, reason }).toEqual({ requests: 3, reason: "max_tokens" });
  });
});
