/** The Agent restore scenarios (test/restore/agent-restore.test.ts): no hidden state but the world. */
import { scriptedModel, scriptedStreamFn, text, toolCall, type Agent, type AgentOptions, type AgentTool } from "../../src/index.js";

export type AgentScenario = "plain" | "aborted" | "failing";

/** What the app decided so far, outside the session. */
export interface AgentWorld {
  aborted: boolean;
  thrown: boolean;
}

export interface AgentScenarioParts {
  options: AgentOptions;
  /** The app's listener, if the scenario has one (subscribed on the original and on each restored Agent). */
  listener?: (event: { type: string; toolCallId?: string }) => void | Promise<void>;
}

export function agentScenario(kind: AgentScenario, world: AgentWorld, agent: () => Agent): AgentScenarioParts {
  const read: AgentTool = {
    name: "read",
    label: "read",
    description: "read a file",
    parameters: { type: "object", properties: { path: { type: "string" } } },
    replay: "safe",
    execute: async (_id, params: { path: string }) => ({ content: [{ type: "text", text: `contents of ${params.path}` }], details: {} }),
  };
  const options: AgentOptions = {
    initialState: { systemPrompt: "You read files.", model: scriptedModel, tools: [read] },
    streamFn: scriptedStreamFn((request) => {
      const answered = request.context.messages.filter((message) => message.role === "assistant").length;
      return answered === 0 ? { content: [text("Reading."), toolCall("read", { path: "a" }, "r1"), toolCall("read", { path: "b" }, "r2")] } : { content: [text("Both read.")] };
    }),
    finishTurn: async () => undefined,
  };
  return { options, listener: listenerFor(kind, world, agent) };
}

function listenerFor(kind: AgentScenario, world: AgentWorld, agent: () => Agent) {
  return (event: { type: string; toolCallId?: string }): void | Promise<void> => {
      // R54: a listener still busy with agent_end keeps the session settling (a point to restore at).
      if (event.type === "agent_end") return new Promise<void>((resolve) => setImmediate(resolve));
      if (kind === "plain" || event.type !== "tool_execution_start" || event.toolCallId !== "r1") return;
      if (kind === "aborted" && !world.aborted) {
        world.aborted = true;
        agent().abort();
      }
      if (kind === "failing" && !world.thrown) {
        world.thrown = true;
        throw new Error("listener bug");
      }
  };
}
