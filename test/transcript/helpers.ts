/** Builders shared by the transcript tests. */
import type { AgentMessage, SystemMessage, ToolDecl, UserMessage } from "../../src/types.js";
import { keyedToolDecl, type KeyedToolDecl } from "../../src/transcript/index.js";

export function decl(name: string, description = "d", parameters: Record<string, unknown> = { type: "object" }): ToolDecl {
  return { name, description, parameters };
}

export function sys(content: SystemMessage["content"], extra: Partial<SystemMessage> = {}): SystemMessage {
  return { role: "system", content, timestamp: 1, ...extra };
}

export function user(content = "u"): UserMessage {
  return { role: "user", content, timestamp: 2 };
}

export function keyed(...decls: ToolDecl[]): KeyedToolDecl[] {
  return decls.map(keyedToolDecl);
}

/** Declared tools as name → description|parameters, the form tests compare. */
export function byName(tools: Iterable<ToolDecl>): Record<string, ToolDecl> {
  const out: Record<string, ToolDecl> = {};
  for (const t of tools) out[t.name] = { name: t.name, description: t.description, parameters: t.parameters };
  return out;
}

export function systemsOf(messages: readonly AgentMessage[]): SystemMessage[] {
  return messages.filter((m): m is SystemMessage => m.role === "system");
}
