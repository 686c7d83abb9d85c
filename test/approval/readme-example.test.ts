// docs/guides/approvals.md's example, verbatim but for the assertions (console output collected).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";

describe("docs/guides/approvals.md", () => {
  it("R82: the example approves with always: true; the rule stays with the session", async () => {
    const lines: unknown[] = [];
    const console = { log: (...args: unknown[]) => void lines.push(args.length === 1 ? args[0] : args) };

    const writeFile = defineTool({
      name: "write_file",
      description: "Write a text file",
      parameters: z.object({ path: z.string(), text: z.string() }),
      execute: async (_id, { path }) => ({ content: [{ type: "text", text: `wrote ${path}` }], details: {} }),
      // Writes outside notes/ wait for a decision (`args` are the validated arguments, typed by the schema).
      needsApproval: (args) => !args.path.startsWith("notes/"),
    });

    const agent = new Agent({
      streamFn: scriptedStreamFn([
        { content: [toolCall("write_file", { path: "todo.md", text: "- ship it" })] },
        { content: [text("Saved.")] },
      ]),
      initialState: { model: scriptedModel, tools: [writeFile] },
    });

    // The approval events are the loop's own (R66): opt in to them.
    agent.subscribe(
      (event) => {
        if (event.type !== "tool_approval_requested") return;
        console.log(`${event.toolName} ${JSON.stringify(event.args)}: ${event.reason}`);
        agent.approve(event.approvalId, { always: true }); // or agent.reject(event.approvalId, "Not that file.")
      },
      { runtimeEvents: true },
    );

    await agent.prompt("Note down: ship it");
    console.log(agent.approvalRules); // [{ toolName: "write_file" }]: later writes in this session do not wait

    expect(lines).toEqual(['write_file {"path":"todo.md","text":"- ship it"}: Tool write_file requires approval', [{ toolName: "write_file" }]]);
    const result = agent.state.messages.find((m) => m.role === "toolResult") as { content: { text: string }[] };
    expect(result.content[0].text).toBe("wrote todo.md");
  });
});
