/**
 * A chat's transcript as UI messages, for the page to load before it resumes (`useChat({ messages,
 * resume: true })`): a run in progress contributes only its prompt, since the resumed stream
 * replays its assistant message from the start (no text twice, none missing).
 */
import type { Agent } from "../agent/agent.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../protocol/messages.js";
import { textOf } from "./encoder.js";

export type ChatUIPart =
  | { type: "text"; text: string; state: "done" }
  | { type: "reasoning"; text: string; state: "done" }
  | { type: "step-start" }
  | { type: "dynamic-tool"; toolName: string; toolCallId: string; state: "output-available"; input: unknown; output: unknown }
  | { type: "dynamic-tool"; toolName: string; toolCallId: string; state: "output-error"; input: unknown; errorText: string }
  | { type: "dynamic-tool"; toolName: string; toolCallId: string; state: "input-available"; input: unknown };

export interface ChatUIMessage {
  id: string;
  role: "user" | "assistant";
  parts: ChatUIPart[];
}

export function uiMessagesOf(agent: Agent, source?: { transcriptLengthAtRunStart: number }): ChatUIMessage[] {
  let messages: AgentMessage[] = agent.state.messages;
  if (agent.state.isStreaming && source) {
    const start = source.transcriptLengthAtRunStart;
    let end = start;
    while (end < messages.length && (messages[end] as { role?: string }).role === "user") end++;
    messages = messages.slice(0, end);
  }
  const results = new Map<string, ToolResultMessage>();
  for (const message of messages) if ((message as { role?: string }).role === "toolResult") results.set((message as ToolResultMessage).toolCallId, message as ToolResultMessage);
  const out: ChatUIMessage[] = [];
  messages.forEach((message, index) => {
    const role = (message as { role?: string }).role;
    if (role === "user") out.push({ id: `msg-${index}`, role: "user", parts: [{ type: "text", text: textOf((message as { content: unknown }).content), state: "done" }] });
    if (role !== "assistant") return;
    const assistant = message as AssistantMessage;
    let target = out.at(-1);
    if (target?.role !== "assistant") out.push((target = { id: `msg-${index}`, role: "assistant", parts: [] }));
    target.parts.push({ type: "step-start" });
    for (const part of assistant.content) {
      if (part.type === "text" && part.text) target.parts.push({ type: "text", text: part.text, state: "done" });
      else if (part.type === "thinking" && part.thinking) target.parts.push({ type: "reasoning", text: part.thinking, state: "done" });
      else if (part.type === "toolCall") {
        const result = results.get(part.id);
        const base = { type: "dynamic-tool" as const, toolName: part.name, toolCallId: part.id, input: part.arguments };
        if (!result) target.parts.push({ ...base, state: "input-available" });
        else if (result.isError) target.parts.push({ ...base, state: "output-error", errorText: textOf(result.content) });
        else target.parts.push({ ...base, state: "output-available", output: { content: result.content, details: result.details } });
      }
    }
  });
  return out;
}
