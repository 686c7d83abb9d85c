import { describe, expect, it } from "vitest";
import { filter } from "rxjs";
import { z } from "zod";
import { Agent, defineTool, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";

// docs/guides/agent.md's example, verbatim but for `log` instead of console.log, and the assertions.
describe("README: Agent", () => {
  it("runs the Agent example", async () => {
    const log: unknown[] = [];
    const console = { log: (...args: unknown[]) => log.push(args.join(" ")) };

    const weather = defineTool({
      name: "weather",
      description: "Current weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: async (_id, { city }) => ({ content: [{ type: "text", text: `Sunny in ${city}` }], details: { city } }),
    });

    const agent = new Agent({
      streamFn: scriptedStreamFn([
        { content: [toolCall("weather", { city: "Paris" })], usage: { input: 120, output: 12 } },
        { content: [text("Sunny in Paris.")], usage: { input: 150, output: 5 } },
        { content: [text("You're welcome!")], usage: { input: 160, output: 4 } },
      ]),
      initialState: { systemPrompt: "You report the weather.", model: scriptedModel, tools: [weather] },
    });

    // Listeners are awaited in order, and the run waits for them: a message_end listener
    // finishes before that message's tools start.
    agent.subscribe(async (event) => {
      if (event.type === "message_end") console.log("message_end", event.message.role);
    });
    // Every event of every run, as an RxJS Observable.
    agent.events$.pipe(filter((event) => event.type === "tool_execution_end")).subscribe(() => console.log("tool done"));

    await agent.prompt("Weather in Paris?");
    agent.followUp({ role: "user", content: "Thanks!", timestamp: Date.now() });
    await agent.continue(); // from an assistant tail, continue() runs the queued follow-up
    console.log(agent.state.messages.length, "messages,", agent.usage.totalTokens, "tokens");
    agent.reset(); // back to one system message with the prompt and the tools

    expect(log).toEqual([
      "message_end user",
      "message_end assistant",
      "tool done",
      "message_end toolResult",
      "message_end assistant",
      "message_end user",
      "message_end assistant",
      "7 messages, 451 tokens",
    ]);
    expect(agent.state.messages).toHaveLength(1);
    expect(agent.state.systemPrompt).toBe("You report the weather.");
  });
});
