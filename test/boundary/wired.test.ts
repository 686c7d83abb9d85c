/**
 * Issue 15 items 10 and 13 through the loop: a tool's or a hook's malformed output becomes an
 * error tool result (tool hooks) or a clean R56 failure (run hooks) that names the hook/tool and
 * the field; the transcript never receives garbage.
 *
 * NEEDS WIRING in the core (src/actors/tool-jobs.ts, src/actors/run-jobs.ts): these tests fail
 * until the run calls the src/boundary checks on hook and tool outputs (see docs/reference/semantics.md,
 * "Library boundary" and the boundary report). The checks themselves are tested in checks.test.ts.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentLoopConfig, type AgentMessage, type AgentTool, type AssistantMessage, type ToolResultMessage } from "../../src/index.js";
import { messageProblem } from "../../src/boundary/index.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";
import { watchCrashes, type CrashWatch } from "./crash-watch.js";
import { boundaryProblems, boundaryScenarioArb, playBoundary } from "../property/boundary-scenario.js";

let crashes: CrashWatch;
beforeEach(() => void (crashes = watchCrashes()));
afterEach(async () => {
  const seen = await crashes.settle();
  crashes.stop();
  expect(seen, "unhandled rejections / uncaught exceptions").toEqual([]);
});

async function run(config: Partial<AgentLoopConfig>, tools: AgentTool[] = [], responses = [{ content: [toolCall("t")] }, { content: [text("done")] }]) {
  const events: AgentEvent[] = [];
  const messages = await runAgentLoop([user("hi")], { messages: [], tools }, baseConfig(config), (event) => void events.push(event), undefined, scriptedStreamFn(responses));
  // The transcript holds only well-formed messages.
  for (const message of messages) expect(messageProblem(message), JSON.stringify(message)).toBeUndefined();
  expect(events.at(-1)?.type).toBe("agent_end");
  return { events, messages };
}

const toolResults = (messages: AgentMessage[]) => messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const resultText = (message: ToolResultMessage) => message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
const lastAssistant = (messages: AgentMessage[]) => messages.filter((m): m is AssistantMessage => m.role === "assistant").at(-1)!;

describe("issue 15 item 10 (wired): malformed tool results become error results naming the field", () => {
  it.each([
    ["text: 42", { content: [{ type: "text", text: 42 }] }, "content[0].text must be a string, got a number (42)"],
    ["an unknown block", { content: [{ type: "audio", data: "x" }] }, 'content[0].type must be "text" or "image", got a string ("audio")'],
    ["an image without mimeType", { content: [{ type: "image", data: "AA" }] }, "content[0].mimeType must be a string, got undefined"],
  ])("a tool returning %s", async (_name, value, problem) => {
    const { messages } = await run({}, [tool("t", async () => value as never)]);
    const [result] = toolResults(messages);
    expect(result.isError).toBe(true);
    expect(resultText(result)).toBe(`Tool t returned an invalid result: ${problem}`);
  });
  it.each([
    ['{content: "x"}', { content: "x" }, 'content must be an array of content blocks, got a string ("x")'],
    ["{content: [{type: \"text\", text: 42}]}", { content: [{ type: "text", text: 42 }] }, "content[0].text must be a string, got a number (42)"],
  ])("afterToolCall returning %s", async (_name, value, problem) => {
    const { messages } = await run({ afterToolCall: async () => value as never }, [tool("t")]);
    const [result] = toolResults(messages);
    expect(result.isError).toBe(true);
    expect(resultText(result)).toBe(`afterToolCall returned an invalid result: ${problem}`);
  });
  // R22, R23: as the reference (`content ?? []`, `afterResult.content ?? result.content`), for untyped JS tools and hooks.
  it.each([
    ["a tool returning {details} (no content)", {}, async () => ({ details: { a: 1 } }) as never, []],
    ["a tool returning {content: null}", {}, async () => ({ content: null, details: { a: 1 } }) as never, []],
    ["afterToolCall returning {content: null}", { afterToolCall: async () => ({ content: null }) as never }, undefined, [{ type: "text", text: "t done" }]],
  ])("%s: not an error; the result message has the content there is", async (_name, config, execute, content) => {
    const { messages, events } = await run(config as Partial<AgentLoopConfig>, [execute ? tool("t", execute) : tool("t")]);
    const [result] = toolResults(messages);
    expect(result.isError).toBe(false);
    expect(result.content).toEqual(content);
    expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({ isError: false });
  });
  it('beforeToolCall returning {block: "yes"} is an error result naming the field, not a block', async () => {
    const { messages } = await run({ beforeToolCall: async () => ({ block: "yes" }) as never }, [tool("t")]);
    expect(resultText(toolResults(messages)[0])).toBe('beforeToolCall returned an invalid result: block must be a boolean, got a string ("yes")');
  });
});

describe("issue 15 item 13 (wired): malformed run-hook results are clean R56 failures naming hook and field", () => {
  it.each([
    ["getSteeringMessages resolving \"abc\"", { getSteeringMessages: async () => "abc" as never }, 'getSteeringMessages returned an invalid result: the result must be an array of messages, got a string ("abc")'],
    ["getSteeringMessages resolving [5]", { getSteeringMessages: async () => [5] as never }, "getSteeringMessages returned an invalid result: [0] must be a message object with a role, got a number (5)"],
    ["getFollowUpMessages resolving [{}]", { getFollowUpMessages: async () => [{}] as never }, "getFollowUpMessages returned an invalid result: [0].role must be a non-empty string, got undefined"],
    ["prepareRequest returning {model: \"gpt\"}", { prepareRequest: async () => ({ model: "gpt" }) as never }, 'prepareRequest returned an invalid result: model must be a model descriptor object ({id, api, provider, cost, …}), got a string ("gpt")'],
    ["prepareRequest returning {context: {messages: 5}}", { prepareRequest: async () => ({ context: { messages: 5 } }) as never }, "prepareRequest returned an invalid result: context.messages must be an array of messages, got a number (5)"],
    ["prepareNextTurn returning {context: {messages: [], tools: \"x\"}}", { prepareNextTurn: async () => ({ context: { messages: [], tools: "x" } }) as never }, 'prepareNextTurn returned an invalid result: context.tools must be an array of tools, got a string ("x")'],
    ["prepareNextTurn returning {messages: [\"abc\"]}", { prepareNextTurn: async () => ({ messages: ["abc"] }) as never }, 'prepareNextTurn returned an invalid result: messages[0] must be a message object with a role, got a string ("abc")'],
    ["transformContext resolving \"abc\"", { transformContext: async () => "abc" as never }, 'transformContext returned an invalid result: the result must be an array of messages, got a string ("abc")'],
    ["getApiKey resolving {key}", { getApiKey: async () => ({ key: "k" }) as never }, "getApiKey returned an invalid result: the result must be a string or undefined, got object"],
  ])("%s", async (_name, config, errorMessage) => {
    const { messages } = await run(config as Partial<AgentLoopConfig>, [tool("t")]);
    const last = lastAssistant(messages);
    expect(last.stopReason).toBe("error");
    expect(last.errorMessage).toBe(errorMessage);
  });
});

describe("issue 15 item 8 (wired): a hook's model is checked before it reaches the stream function", () => {
  it("prepareNextTurn returning {model: {id: \"x\"}} fails the run naming prepareNextTurn and model.api", async () => {
    const { messages } = await run({ prepareNextTurn: async () => ({ model: { id: "x" } }) as never }, [tool("t")]);
    expect(lastAssistant(messages).errorMessage).toBe("prepareNextTurn returned an invalid result: model.api must be a string, got undefined");
  });
});

describe("issue 15 item 10 (wired): a tool result with garbage never breaks later requests", () => {
  it("the next request's context holds only well-formed messages", async () => {
    const stream = scriptedStreamFn([{ content: [toolCall("t")] }, { content: [text("done")] }]);
    await runAgentLoop([user("hi")], { messages: [], tools: [tool("t", async () => ({ content: [{ type: "text", text: 42 }], details: {} }) as never)] }, baseConfig(), () => {}, undefined, stream);
    for (const message of stream.calls[1].context.messages) expect(messageProblem(message)).toBeUndefined();
  });
  it("a valid result passes untouched", async () => {
    const { messages } = await run({}, [tool("t", async () => ok("fine"))]);
    expect(resultText(toolResults(messages)[0])).toBe("fine");
  });
});

describe("issue 15 fuzz (wired): unreadable models and contexts from preparation hooks", () => {
  it("every run ends with agent_end, one result per call, no crash, and a well-formed transcript (200 runs)", async () => {
    const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : 20261130;
    await fc.assert(
      fc.asyncProperty(boundaryScenarioArb({ wired: true }), async (scenario) => {
        const watch = watchCrashes();
        try {
          const run = await playBoundary(scenario);
          const problems = boundaryProblems(run, await watch.settle());
          for (const message of run.messages) {
            const problem = messageProblem(message);
            if (problem) problems.push(`malformed message in the transcript: ${problem.field} ${problem.problem}`);
          }
          expect(problems.slice(0, 6)).toEqual([]);
        } finally {
          watch.stop();
        }
      }),
      { numRuns: 200, seed: SEED, timeout: 5_000 },
    );
  }, 60_000);
});
