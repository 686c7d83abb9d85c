/**
 * The same chat with `useAgent`'s readers over an Agent in the page (a scripted model: no server).
 * Tool cards, an approval card, a stop button and the state badge come from the hooks of
 * `xstate-agent-loop/react`; a delta re-renders the streaming message only.
 */
import { createElement as h, type ReactNode } from "react";
import { Agent, type AgentMessage, type AgentTool } from "xstate-agent-loop";
import { useAgentActions, useAgentStatus, useAgentTranscript, useStreamingMessage } from "xstate-agent-loop/react";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "xstate-agent-loop/testing";

const tool = (name: string): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: {} },
  needsApproval: true,
  execute: async () => ({ content: [{ type: "text", text: `${name} done` }], details: {} }),
});

export function createPageAgent(): Agent {
  return new Agent({
    streamFn: scriptedStreamFn([
      { content: [text("Checking both."), toolCall("write", {}, "w1"), toolCall("deploy", {}, "d1")] },
      { content: [text("Wrote it; no deploy.")] },
      { content: [text(Array.from({ length: 400 }, (_, i) => `word${i}`).join(" "))], chunkSize: 5, delayMs: 20 },
    ]),
    initialState: { model: scriptedModel, tools: [tool("write"), tool("deploy")] },
  });
}

const textOf = (message: AgentMessage | undefined) =>
  ((message as { content?: unknown } | undefined)?.content as { type: string; text?: string }[] | undefined)?.map((part) => (part.type === "text" ? part.text : "")).join("") ?? "";

function Transcript({ agent }: { agent: Agent }): ReactNode {
  const transcript = useAgentTranscript(agent);
  return h(
    "div",
    { id: "messages" },
    transcript.map((message, index) =>
      message.role === "toolResult"
        ? h("div", { key: index, className: "tool", "data-tool": message.toolName, "data-state": message.isError ? "output-error" : "output-available" }, `${message.toolName} · ${message.isError ? "rejected" : "done"}`)
        : message.role === "user" || message.role === "assistant"
          ? h("div", { key: index, className: `message ${message.role}`, "data-role": message.role }, h("span", { className: "text" }, textOf(message)))
          : null,
    ),
  );
}

function Streaming({ agent }: { agent: Agent }): ReactNode {
  const { message } = useStreamingMessage(agent);
  return message?.role === "assistant" ? h("div", { className: "message assistant", id: "streaming" }, textOf(message)) : null;
}

export function InPageChat({ agent }: { agent: Agent }): ReactNode {
  const status = useAgentStatus(agent);
  const actions = useAgentActions(agent);
  return h(
    "main",
    null,
    h("header", null, h("h1", null, "react-chat · useAgent"), h("span", { className: "badge", id: "state", "data-state": status.value }, status.value)),
    h(Transcript, { agent }),
    status.pendingApprovals.map((request) =>
      h(
        "div",
        { key: request.approvalId, className: "tool approval", "data-tool": request.toolName, "data-state": "approval-requested" },
        `${request.toolName}: ${request.reason} `,
        h("button", { "data-action": "approve", onClick: () => actions.approve(request.approvalId) }, "Approve"),
        h("button", { "data-action": "reject", onClick: () => actions.reject(request.approvalId, "Rejected in the page") }, "Reject"),
      ),
    ),
    h(Streaming, { agent }),
    h(
      "form",
      {
        onSubmit: (event: { preventDefault(): void; currentTarget: HTMLFormElement }) => {
          event.preventDefault();
          const input = event.currentTarget.querySelector("input")!;
          const value = input.value.trim();
          input.value = "";
          if (value) void actions.prompt(value);
        },
      },
      h("input", { id: "input" }),
      h("button", { id: "send", type: "submit" }, status.isStreaming ? "Steer" : "Send"),
      h("button", { id: "stop", type: "button", onClick: () => actions.abort(), disabled: !status.isStreaming }, "Stop"),
    ),
  );
}
