/** The write question of the terminal agent (issue 20 item 5): its text and its answers. */
import type { ToolApprovalRequest } from "../../types.js";
import { formatCount } from "./format.js";
import { visible } from "./visible.js";

/** `always`: approve, and every later write of this path in the session (`approve(id, { always: { path } })`). */
export type ApprovalAnswer = "yes" | "no" | "always";

export function approvalQuestion(request: ToolApprovalRequest): string {
  const args = (request.args ?? {}) as { path?: unknown; content?: unknown };
  // The model chose the path: shown, not obeyed.
  const target = typeof args.path === "string" ? visible(args.path) : "a file";
  const size = typeof args.content === "string" ? ` (${formatCount(Buffer.byteLength(args.content))} bytes)` : "";
  return `? allow ${request.toolName} to write ${target}${size}? [y/N/a = always this path] `;
}

/** y/yes, n/no or an empty line (no), a/always; anything else is not an answer. */
export function parseApprovalAnswer(line: string): ApprovalAnswer | undefined {
  const text = line.trim().toLowerCase();
  if (text === "y" || text === "yes") return "yes";
  if (text === "a" || text === "always") return "always";
  if (text === "n" || text === "no" || text === "") return "no";
  return undefined;
}
