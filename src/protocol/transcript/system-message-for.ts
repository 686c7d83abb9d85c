/** The leading system message of an Agent's transcript (R50: `initialState.systemPrompt`/`tools`). */
import type { SystemMessage, ToolDecl } from "../messages.js";

/**
 * A leading system message holding `systemPrompt` as content and every tool in `toolsAdded`
 * (omitted when there are none). Undefined when the prompt is empty and there are no tools, so
 * an empty transcript stays empty (as the reference does). Tools sharing a name are declared
 * once, the first one winning, matching R30's reading of `context.tools`; otherwise the very
 * next request would have to redeclare it.
 */
export function systemMessageFor(systemPrompt: string, tools: readonly ToolDecl[], timestamp = 0): SystemMessage | undefined {
  if (systemPrompt === "" && tools.length === 0) return undefined;
  if (tools.length === 0) return { role: "system", content: systemPrompt, timestamp };
  return { role: "system", content: systemPrompt, toolsAdded: firstByName(tools), timestamp };
}

function firstByName(tools: readonly ToolDecl[]): ToolDecl[] {
  const seen = new Set<string>();
  const out: ToolDecl[] = [];
  for (const tool of tools) {
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    out.push(tool);
  }
  return out;
}
