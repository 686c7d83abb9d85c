/**
 * The offline demo with MCP servers: a prompt that names one of the declared MCP tools
 * (`server__tool`, as `/mcp` lists them) gets a call of that tool, with the prompt's JSON object
 * as its arguments (`{}` without one), then an answer that quotes its result. Tools are read from
 * the transcript's declarations (R30), which is all a model sees of them.
 */
import type { Message } from "../../index.js";
import { text, toolCall } from "../../index.js";
import { createDeclaredToolSet } from "../../transcript/index.js";
import type { ScriptedResponse } from "../../providers/scripted.js";

type Turn = Pick<ScriptedResponse, "content">;

/** The demo's response when the current prompt names an MCP tool; undefined otherwise. */
export function mcpDemoTurn(messages: Message[]): Turn | undefined {
  let promptIndex = -1;
  // The task's prompt: the last user message that does not follow tool results (those are steering).
  for (let index = 0; index < messages.length; index++) if (messages[index]!.role === "user" && messages[index - 1]?.role !== "toolResult") promptIndex = index;
  if (promptIndex < 0) return undefined;
  const prompt = userText(messages[promptIndex]!);
  const names = [...createDeclaredToolSet(messages).keys()].filter((name) => name.includes("__"));
  const name = names.sort((a, b) => b.length - a.length).find((candidate) => prompt.includes(candidate));
  if (!name) return undefined;
  const result = messages.slice(promptIndex + 1).find((message) => message.role === "toolResult" && message.toolName === name);
  if (!result || result.role !== "toolResult") return { content: [text(`Calling ${name}.`), toolCall(name, argumentsIn(prompt))] };
  const said = result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
  return { content: [text(result.isError ? `${name} failed: ${said}` : `${name} answered: ${said}`)] };
}

function argumentsIn(prompt: string): Record<string, unknown> {
  const json = /\{[\s\S]*\}/.exec(prompt)?.[0];
  if (!json) return {};
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function userText(message: Message): string {
  if (message.role !== "user") return "";
  return typeof message.content === "string" ? message.content : message.content.map((block) => (block.type === "text" ? block.text : "")).join(" ");
}
