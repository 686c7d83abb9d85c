/**
 * SPEC R100 through the Agent: `output` on the Agent's options, `state.output` after the run,
 * `agent_end.output` for listeners, `prompt` still resolving nothing; and `promptForOutput`, which
 * resolves with the value typed from the schema (a type test) or rejects with `OutputError`.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { AgentInputError, OutputError, promptForOutput, text, toolCall } from "../../src/index.js";
import { scenario } from "../agent/helpers.js";
import { tool } from "../loop/helpers.js";

const schema = z.object({ title: z.string(), tags: z.array(z.string()).default([]) });

describe("R100: structured output through the Agent", () => {
  it("R100: output on the Agent: prompt resolves nothing; state.output and agent_end.output hold the value", async () => {
    const { agent, log, events } = scenario(
      [{ content: [toolCall("final_answer", { tags: [] }, "f1")] }, { content: [toolCall("final_answer", { title: "Dune", tags: "scifi" }, "f2")] }],
      { output: { schema } },
    );
    await expect(agent.prompt("Name a book")).resolves.toBeUndefined();
    expect(log.filter((entry) => /^(turn_|tool_end|agent_end)/.test(entry))).toEqual([
      "turn_start",
      "tool_end:final_answer!",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "tool_end:final_answer",
      "turn_end:assistant(toolUse)+1",
      "agent_end:6",
    ]);
    // R21's coercion: a single value where an array is expected becomes a one-element array.
    expect(agent.state.output).toEqual({ title: "Dune", tags: ["scifi"] });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "completed", output: { title: "Dune", tags: ["scifi"] } });
    expect(agent.lastEndReason).toBe("completed");
  });

  it("R100: promptForOutput resolves with the typed value and puts the Agent's own setting back", async () => {
    const { agent } = scenario([{ content: [toolCall("final_answer", { title: "Dune" }, "f1")] }, { content: [text("plain")] }]);
    const book = await promptForOutput(agent, "Name a book", { schema });
    expectTypeOf(book).toEqualTypeOf<{ title: string; tags: string[] }>();
    expect(book).toEqual({ title: "Dune", tags: [] });
    expect(agent.output).toBeUndefined();
    // The next run asks for nothing: the answer tool is withdrawn (R30) and the run ends as pi's would.
    await agent.prompt("Thanks");
    expect(agent.lastEndReason).toBe("completed");
    expect(agent.state.output).toBeUndefined();
    const last = agent.state.messages.filter((m) => m.role === "system").at(-1) as { toolsRemoved?: { name: string }[] };
    expect(last.toolsRemoved).toEqual([{ name: "final_answer" }]);
  });

  it("R100: promptForOutput rejects with OutputError (reason output_invalid) when the attempts run out", async () => {
    const { agent } = scenario([{ content: [text("Dune")] }]);
    const failure = await promptForOutput(agent, "Name a book", { schema, maxAttempts: 1 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutputError);
    expect((failure as OutputError).reason).toBe("output_invalid");
    expect(agent.state.output).toBeUndefined();
  });

  it("R100: an Agent tool with the answer tool's name: prompt rejects with AgentInputError and the Agent stays usable", async () => {
    const { agent } = scenario([{ content: [toolCall("answer", { title: "Dune" }, "f1")] }], { output: { schema } }, { tools: [tool("final_answer")] });
    await expect(agent.prompt("Name a book")).rejects.toThrow(AgentInputError);
    expect(agent.state.isStreaming).toBe(false);
    agent.output = { schema, toolName: "answer" };
    await agent.prompt("Name a book");
    expect(agent.state.output).toEqual({ title: "Dune", tags: [] });
  });

  it("R100: a JSON Schema gives unknown, or the type the caller names", () => {
    const json = { type: "object", properties: { n: { type: "number" } } };
    // Types only: the calls are never made.
    const untyped = () => promptForOutput(null as never, "x", { schema: json });
    const named = () => promptForOutput<typeof json, { n?: number }>(null as never, "x", { schema: json });
    expectTypeOf(untyped).returns.resolves.toBeUnknown();
    expectTypeOf(named).returns.resolves.toEqualTypeOf<{ n?: number }>();
    expect(typeof untyped).toBe("function");
  });
});
