/**
 * An app's inspection observer that throws is the app's bug, and it must not break the run
 * (the loop never crashes its host): the run and the Agent finish as without the observer, and
 * the observer keeps being called.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Agent, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { baseConfig, tool, user } from "../loop/helpers.js";

const script = () => scriptedStreamFn([{ content: [toolCall("look", {}, "a"), toolCall("look", {}, "b")] }, { content: [text("done")] }]);

describe("a throwing inspection observer", () => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  afterEach(() => warn.mockClear());

  it("runAgentLoop: a function observer that throws on every event changes nothing in the run", async () => {
    let calls = 0;
    const inspect = () => {
      calls++;
      throw new Error("inspector bug");
    };
    const output = await runAgentLoop([user("go")], { messages: [], tools: [tool("look")] }, baseConfig(), () => {}, undefined, script(), { inspect });
    expect(output.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "toolResult", "assistant"]);
    expect(output.filter((m) => m.role === "toolResult").every((m) => !(m as { isError: boolean }).isError)).toBe(true);
    expect(calls).toBeGreaterThan(10);
    // Reported once, naming the observer's error.
    expect(warn.mock.calls).toEqual([[expect.stringContaining("the inspect observer threw (inspector bug)")]]);
  });

  it("the Agent: an Observer whose next throws changes nothing in the prompt", async () => {
    let calls = 0;
    const agent = new Agent({
      initialState: { model: scriptedModel, tools: [tool("look")] },
      streamFn: script(),
      inspect: {
        next: () => {
          calls++;
          throw new Error("inspector bug");
        },
      },
    });
    await agent.prompt("go");
    expect(agent.state.messages.filter((m) => m.role === "toolResult").every((m) => !(m as { isError: boolean }).isError)).toBe(true);
    expect((agent.state.messages.at(-1) as { content: { text: string }[] }).content[0].text).toBe("done");
    expect(calls).toBeGreaterThan(10);
  });
});
