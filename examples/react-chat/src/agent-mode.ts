/**
 * The same chat with the hooks of `xstate-agent-loop/react` over the session on the server
 * (`createRemoteAgent`): the page keeps the session's own transcript, fed by the route's agent
 * event stream, and posts its actions back. Tool cards, an approval card, a stop button, steering
 * and the state badge come from the hooks; a delta re-renders the streaming message only. A
 * reload resumes after the last sequence number the page had (kept in sessionStorage).
 */
import { createElement as h, type ReactNode } from "react";
import type { AgentMessage, ToolApprovalRequest } from "xstate-agent-loop";
import { useAgentActions, useAgentStatus, useAgentTranscript, useStreamingMessage, type RemoteAgent } from "xstate-agent-loop/react";

type Part = { type: string; text?: string; id?: string; name?: string };
const partsOf = (message: AgentMessage | undefined): Part[] => {
  const content = (message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) ? (content as Part[]) : typeof content === "string" ? [{ type: "text", text: content }] : [];
};
const textOf = (message: AgentMessage | undefined) => partsOf(message).map((part) => (part.type === "text" ? part.text : "")).join("");

function ToolCard({ name, state, approval, actions }: { name: string; state: string; approval?: ToolApprovalRequest; actions: ReturnType<typeof useAgentActions> }): ReactNode {
  return h(
    "div",
    { className: "tool", "data-tool": name, "data-state": state },
    `${name} · ${state}`,
    approval &&
      h(
        "div",
        { className: "approval" },
        `${approval.reason} `,
        h("button", { "data-action": "approve", onClick: () => actions.approve(approval.approvalId) }, "Approve"),
        h("button", { "data-action": "reject", onClick: () => actions.reject(approval.approvalId, "Rejected in the page") }, "Reject"),
      ),
  );
}

/** Renders when a message ends, never on a delta. */
function Transcript({ remote, approvals, actions }: { remote: RemoteAgent; approvals: ToolApprovalRequest[]; actions: ReturnType<typeof useAgentActions> }): ReactNode {
  const transcript = useAgentTranscript(remote);
  const results = new Map<string, boolean>();
  for (const message of transcript) if (message.role === "toolResult") results.set(message.toolCallId, message.isError);
  return h(
    "div",
    { id: "messages" },
    transcript.map((message, index) => {
      if (message.role !== "user" && message.role !== "assistant") return null;
      const calls = partsOf(message).filter((part) => part.type === "toolCall");
      return h(
        "div",
        { key: index, className: `message ${message.role}`, "data-role": message.role },
        h("span", { className: "text" }, textOf(message)),
        calls.map((call) => {
          const approval = approvals.find((request) => request.toolCallId === call.id);
          const outcome = results.get(call.id!);
          const state = approval ? "approval-requested" : outcome === undefined ? "input-available" : outcome ? "output-error" : "output-available";
          return h(ToolCard, { key: call.id, name: call.name!, state, ...(approval ? { approval } : {}), actions });
        }),
      );
    }),
  );
}

/** Renders at most once per animation frame while a message streams. */
function Streaming({ remote }: { remote: RemoteAgent }): ReactNode {
  const { message } = useStreamingMessage(remote);
  return message?.role === "assistant" ? h("div", { className: "message assistant", id: "streaming" }, textOf(message)) : null;
}

export function AgentChat({ remote }: { remote: RemoteAgent }): ReactNode {
  const status = useAgentStatus(remote);
  const actions = useAgentActions(remote);
  return h(
    "main",
    null,
    h(
      "header",
      null,
      h("h1", null, "react-chat · useAgent"),
      h("span", { className: "badge", id: "state", "data-state": status.value }, status.value),
      h("span", { id: "queued" }, status.queues.steering.length > 0 ? `${status.queues.steering.length} queued` : ""),
    ),
    h(Transcript, { remote, approvals: status.pendingApprovals, actions }),
    h(Streaming, { remote }),
    h(
      "form",
      {
        onSubmit: (event: { preventDefault(): void; currentTarget: HTMLFormElement }) => {
          event.preventDefault();
          const input = event.currentTarget.querySelector("input")!;
          const value = input.value.trim();
          input.value = "";
          // While a run goes, the server steers the text into it (R53).
          if (value) void actions.prompt(value);
        },
      },
      h("input", { id: "input" }),
      h("button", { id: "send", type: "submit" }, status.isStreaming ? "Steer" : "Send"),
      h("button", { id: "stop", type: "button", onClick: () => actions.abort(), disabled: !status.isStreaming }, "Stop"),
    ),
  );
}
