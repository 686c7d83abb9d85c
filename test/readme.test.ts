import { describe, expect, it } from "vitest";
import { from, lastValueFrom, toArray } from "rxjs";
import { agentLoop, defaultConvertToLlm, defineTool } from "../src/index.js";
import { scriptedStreamFn, scriptedModel, text, toolCall } from "../src/testing/index.js";
import { z } from "zod";

// The README's quick start, verbatim but for the assertions.
describe("README quick start", () => {
  it("runs the weather example", async () => {
    const weather = defineTool({
      name: "weather",
      description: "Current weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: async (_id, { city }) => ({ content: [{ type: "text", text: `Sunny in ${city}` }], details: { city } }),
    });
    const model = scriptedStreamFn([
      { content: [text("Let me check."), toolCall("weather", { city: "Paris" })] },
      { content: [text("It is sunny in Paris.")] },
    ]);
    const run = agentLoop(
      [{ role: "user", content: "Weather in Paris?", timestamp: Date.now() }],
      { messages: [], tools: [weather] },
      { model: scriptedModel, convertToLlm: defaultConvertToLlm },
      undefined,
      model,
    );
    const types: string[] = [];
    for await (const event of run) types.push(event.type);
    const added = await run.result();
    expect(types[0]).toBe("agent_start");
    expect(types.at(-1)).toBe("agent_end");
    expect(types.filter((t) => t === "tool_execution_end")).toHaveLength(1);
    expect(added.map((m) => (m as { role: string }).role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    const toolResult = added[3] as { content: { text: string }[]; details: unknown };
    expect(toolResult.content[0].text).toBe("Sunny in Paris");
    expect(toolResult.details).toEqual({ city: "Paris" });
  });

  it("is an RxJS-interoperable Observable", async () => {
    const run = agentLoop(
      [{ role: "user", content: "hi", timestamp: 1 }],
      { messages: [] },
      { model: scriptedModel, convertToLlm: defaultConvertToLlm },
      undefined,
      scriptedStreamFn([{ content: [text("hello")] }]),
    );
    const events = await lastValueFrom(from(run).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual([
      "agent_start", "turn_start", "message_start", "message_end",
      "message_start", "message_update", "message_update", "message_update", "message_end",
      "turn_end", "agent_end",
    ]);
  });
});
