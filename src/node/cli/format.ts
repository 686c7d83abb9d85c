/** Small formatters for the terminal renderer. */
import type { AgentToolResult } from "../../types.js";

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m${Math.round((ms % 60_000) / 1000)}s`;
}

export const formatCount = (n: number): string => n.toLocaleString("en-US");

export function formatCost(dollars: number): string {
  if (dollars === 0) return "$0";
  return dollars < 0.01 ? `$${dollars.toFixed(4)}` : `$${dollars.toFixed(2)}`;
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The text of a tool result (or partial result), images as `[image]`. */
export function resultText(result: Pick<AgentToolResult, "content"> | undefined): string {
  if (!result || !Array.isArray(result.content)) return "";
  return result.content.map((block) => (block.type === "text" ? block.text : "[image]")).join("\n");
}

/** The first non-empty line of a text, whitespace collapsed. */
export function firstLine(text: string): string {
  const line = text.split("\n").find((candidate) => candidate.trim() !== "") ?? "";
  return line.replace(/\s+/g, " ").trim();
}

/** A short description of a tool call's arguments for the tool line. */
export function describeToolArgs(toolName: string, args: unknown): string {
  const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  const str = (value: unknown) => (typeof value === "string" ? value : undefined);
  switch (toolName) {
    case "list_files":
      return [str(a.path) ?? ".", a.recursive ? "(recursive)" : "", str(a.glob) ? `glob ${a.glob}` : ""].filter(Boolean).join(" ");
    case "read_file": {
      const range = a.startLine || a.endLine ? `:${a.startLine ?? 1}-${a.endLine ?? "end"}` : "";
      return `${str(a.path) ?? "?"}${range}`;
    }
    case "search_text": {
      const pattern = str(a.pattern) ?? "";
      const shown = a.literal ? JSON.stringify(pattern) : `/${pattern}/${a.ignoreCase ? "i" : ""}`;
      return [shown, str(a.path) && a.path !== "." ? `in ${a.path}` : "", str(a.glob) ? `glob ${a.glob}` : ""].filter(Boolean).join(" ");
    }
    case "write_file":
      return `${str(a.path) ?? "?"}${typeof a.content === "string" ? ` (${plural(Buffer.byteLength(a.content), "byte")})` : ""}`;
    default: {
      const json = JSON.stringify(a);
      return json === "{}" ? "" : json;
    }
  }
}
