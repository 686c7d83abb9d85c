/** `--resume` shows the stored transcript again: prompts, answers (as the stream drew them) and tool calls, one line each for tools. */
import type { AgentMessage } from "../../types.js";
import { describeToolArgs, firstLine, resultText } from "./format.js";
import type { Renderer } from "./renderer.js";
import type { Style } from "./style.js";

interface ToolCallBlock {
  type: "toolCall";
  id: string;
  name: string;
  arguments: unknown;
}

/** Prints `messages` (assistant text as the stream draws it); `earlier` are the ones shown before (their tool calls name the results). */
export function showTranscript(messages: readonly AgentMessage[], renderer: Renderer, style: Style, earlier: readonly AgentMessage[] = []): void {
  const calls = new Map<string, ToolCallBlock>();
  const remember = (message: AgentMessage) => {
    if (message.role !== "assistant") return;
    for (const block of message.content) if (block.type === "toolCall") calls.set(block.id, block as ToolCallBlock);
  };
  earlier.forEach(remember);
  const print = (text: string) => renderer.print(text);
  for (const message of messages) {
    remember(message);
    if (message.role === "user") print(userLine(message, style));
    else if (message.role === "assistant") {
      const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("").trim();
      if (text) renderer.text(text);
    } else if (message.role === "toolResult") {
      const call = calls.get(message.toolCallId);
      const args = call ? describeToolArgs(message.toolName, call.arguments) : "";
      const mark = message.isError ? style.red("✗") : style.green("✓");
      const summary = firstLine(resultText(message)).slice(0, 160);
      print(`  ${mark} ${style.bold(message.toolName)}${args ? ` ${args}` : ""} ${style.dim("·")} ${message.isError ? style.red(summary) : style.dim(summary)}\n`);
    }
  }
}

/** The echo of a user message (a prompt, or steering the run took in), as the prompt line shows it. */
export function userLine(message: AgentMessage, style: Style): string {
  if (message.role !== "user") return "";
  const text = typeof message.content === "string" ? message.content : message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return `${style.bold(style.cyan("❯"))} ${style.bold(oneLine(text))}\n`;
}

/** Drawn once, where the restored session ends and this process goes on with it. */
export const RESTORED_DIVIDER = "── (restored from the session)";

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}
