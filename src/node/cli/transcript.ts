/** `--resume` shows the stored transcript again: prompts, answers and tool calls, one line each for tools. */
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

/** Prints `messages`; `earlier` are the ones shown before (their tool calls name the results). */
export function showTranscript(messages: readonly AgentMessage[], renderer: Renderer, style: Style, earlier: readonly AgentMessage[] = []): void {
  const calls = new Map<string, ToolCallBlock>();
  const remember = (message: AgentMessage) => {
    if (message.role !== "assistant") return;
    for (const block of message.content) if (block.type === "toolCall") calls.set(block.id, block as ToolCallBlock);
  };
  earlier.forEach(remember);
  let shown = 0;
  const print = (text: string) => {
    shown++;
    renderer.print(text);
  };
  for (const message of messages) {
    remember(message);
    if (message.role === "user") {
      const text = typeof message.content === "string" ? message.content : message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
      print(`${style.bold(style.cyan("❯"))} ${style.bold(oneLine(text))}\n`);
    } else if (message.role === "assistant") {
      const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("").trim();
      if (text) print(`${text}\n`);
    } else if (message.role === "toolResult") {
      const call = calls.get(message.toolCallId);
      const args = call ? describeToolArgs(message.toolName, call.arguments) : "";
      const mark = message.isError ? style.red("✗") : style.green("✓");
      const summary = firstLine(resultText(message)).slice(0, 160);
      print(`  ${mark} ${style.bold(message.toolName)}${args ? ` ${args}` : ""} ${style.dim("·")} ${message.isError ? style.red(summary) : style.dim(summary)}\n`);
    }
  }
  if (shown > 0) renderer.print(style.dim("── (restored from the session)\n"));
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}
