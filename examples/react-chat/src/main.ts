/**
 * `useChat` of @ai-sdk/react against the route of `xstate-agent-loop/ui-stream`: tool cards, an
 * approval card, a stop button (a posted stop: a closed request is only a disconnect), steering
 * while a run goes, the session's state badge (the `data-agent-state` part), and a reload mid-run
 * that resumes (`resume: true` replays the run in progress from its start).
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { createElement as h, useState, type ReactNode } from "react";
import { createRoot } from "react-dom/client";

const API = "/api/chat";
const chatId = new URLSearchParams(location.search).get("chat") ?? "demo";
const post = (body: unknown) => fetch(API, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: chatId, ...body as object }) });

type Part = UIMessage["parts"][number];

function ToolCard({ part, decide }: { part: Extract<Part, { type: "dynamic-tool" }>; decide: (id: string, approved: boolean) => void }): ReactNode {
  const approval = part.state === "approval-requested" ? part.approval : undefined;
  return h(
    "div",
    { className: "tool", "data-tool": part.toolName, "data-state": part.state },
    `${part.toolName} · ${part.state}`,
    approval &&
      h(
        "div",
        { className: "approval" },
        "Needs approval ",
        h("button", { "data-action": "approve", onClick: () => decide(approval.id, true) }, "Approve"),
        h("button", { "data-action": "reject", onClick: () => decide(approval.id, false) }, "Reject"),
      ),
  );
}

function PartView({ part, decide }: { part: Part; decide: (id: string, approved: boolean) => void }): ReactNode {
  if (part.type === "text") return h("span", { className: "text" }, part.text);
  if (part.type === "dynamic-tool") return h(ToolCard, { part, decide });
  if (part.type === "steering-message") return h("div", { className: "steer" }, `↪ ${part.parts.map((p) => (p.type === "text" ? p.text : "")).join("")}`);
  return null;
}

function stateOf(messages: UIMessage[]): string {
  for (const message of [...messages].reverse()) {
    const part = message.parts.find((p) => p.type === "data-agent-state") as { data?: { value?: string } } | undefined;
    if (part?.data?.value) return part.data.value;
  }
  return "idle";
}

function Chat({ initial }: { initial: UIMessage[] }): ReactNode {
  const [input, setInput] = useState("");
  const chat = useChat({
    id: chatId,
    messages: initial,
    resume: true,
    transport: new DefaultChatTransport({ api: API }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const busy = chat.status === "streaming" || chat.status === "submitted";
  const state = stateOf(chat.messages);
  const decide = (id: string, approved: boolean) => void chat.addToolApprovalResponse({ id, approved, reason: approved ? undefined : "Rejected in the page" });
  const send = (event: { preventDefault(): void }) => {
    event.preventDefault();
    const text = input.trim();
    if (!text) return;
    setInput("");
    // While a run goes, a message steers it (queued into the run, not a second run).
    if (busy) void post({ action: "steer", text });
    else void chat.sendMessage({ text });
  };
  const stop = () => {
    void post({ action: "stop" });
    void chat.stop();
  };
  return h(
    "main",
    null,
    h("header", null, h("h1", null, "react-chat"), h("span", { className: "badge", id: "state", "data-state": state }, state), h("span", { id: "status" }, chat.status)),
    h(
      "div",
      { id: "messages" },
      chat.messages.map((message) =>
        h("div", { key: message.id, className: `message ${message.role}`, "data-role": message.role }, message.parts.map((part, index) => h(PartView, { key: index, part, decide }))),
      ),
    ),
    h("form", { onSubmit: send }, h("input", { id: "input", value: input, onChange: (event: { target: { value: string } }) => setInput(event.target.value) }), h("button", { id: "send", type: "submit" }, busy ? "Steer" : "Send"), h("button", { id: "stop", type: "button", onClick: stop, disabled: !busy }, "Stop")),
  );
}

// ?mode=agent: the same page with the hooks of xstate-agent-loop/react over the session on the server.
if (new URLSearchParams(location.search).get("mode") === "agent") {
  const [{ AgentChat }, { createRemoteAgent }] = await Promise.all([import("./agent-mode.js"), import("xstate-agent-loop/react")]);
  const remote = createRemoteAgent({ url: API, chatId, storage: sessionStorage });
  await remote.ready;
  createRoot(document.getElementById("root")!).render(h(AgentChat, { remote }));
} else {
  const initial = (await (await fetch(`${API}/${encodeURIComponent(chatId)}/messages`)).json()) as UIMessage[];
  createRoot(document.getElementById("root")!).render(h(Chat, { initial }));
}
document.body.dataset.ready = "true";
