// docs/guides/testing.md: "Test your hooks against every path of the loop". In an app, import from "xstate-agent-loop/testing".
import { describe, expect, it } from "vitest";
import { createAgentTestModel, defineTool, type AgentLoopConfig, type AgentMessage } from "../../src/index.js";

// The app under test: its tool...
const readFile = defineTool<{ path: string }>({
  name: "read_file",
  description: "Read a file from the workspace",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: async (_id, { path }) => ({ content: [{ type: "text", text: `${path}: API_KEY=SECRET` }], details: {} }),
});

// ...and its hooks: never show the model a secret, and record every turn.
const turnsSeen: string[] = [];
const config: Partial<AgentLoopConfig> = {
  afterToolCall: async ({ result }) => ({
    content: result.content.map((c) => (c.type === "text" ? { ...c, text: c.text.replaceAll("SECRET", "[redacted]") } : c)),
  }),
  finishTurn: async ({ message }) => {
    turnsSeen.push(message.stopReason);
    return undefined;
  },
};

const model = createAgentTestModel({
  tools: [readFile],
  config,
  arguments: { read_file: { path: "notes.txt" } },
  execute: "real", // paths where the tool succeeds run the real execute
});

const textOf = (m: AgentMessage) => ("content" in m && Array.isArray(m.content) ? m.content.map((c) => ("text" in c ? c.text : "")).join("") : "");

describe("my app's hooks on every loop path", () => {
  for (const path of model.paths) {
    it(path.description, async () => {
      turnsSeen.length = 0;
      const { events, messages, states } = await path.run();

      expect(events[0].type).toBe("agent_start");
      expect(events.at(-1)?.type).toBe("agent_end");
      expect(states.at(-1)).toBe("done");

      // Every tool call gets exactly one result, and no result leaks the secret.
      const calls = messages.flatMap((m) => (m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall") : []));
      const results = messages.filter((m) => m.role === "toolResult");
      expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
      for (const result of results) expect(textOf(result)).not.toContain("SECRET");

      // finishTurn saw every turn.
      expect(turnsSeen).toHaveLength(events.filter((e) => e.type === "turn_end").length);
    });
  }
});
