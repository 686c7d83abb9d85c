import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent } from "../../src/index.js";
import { baseConfig, project, tool, user, withoutUpdates } from "./helpers.js";

describe("smoke", () => {
  it("runs two turns with a tool", async () => {
    const events: AgentEvent[] = [];
    const stream = scriptedStreamFn([{ content: [text("let me look"), toolCall("read", {})] }, { content: [text("done")] }]);
    const messages = await runAgentLoop([user("hi")], { messages: [], tools: [tool("read")] }, baseConfig(), (e) => void events.push(e), undefined, stream);
    expect(withoutUpdates(events).map(project)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      // message_start carries a copy of the partial at the start, as the reference's does.
      "message_start:assistant(stop)",
      "message_end:assistant(toolUse)",
      "tool_start:read",
      "tool_end:read",
      "message_start:toolResult(read)",
      "message_end:toolResult(read)",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:assistant(stop)",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:5",
    ]);
    expect(messages.map((m) => (m as { role: string }).role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
  });
});
