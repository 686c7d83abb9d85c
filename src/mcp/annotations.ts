/**
 * MCP tool annotations → the loop's per-tool rules, only where the app trusts the server.
 * Annotations are hints the server makes up (MCP's specification says to treat them as untrusted),
 * and a wrong `readOnlyHint` could get a side effect run twice after a crash (R13) or beside
 * another call (R70). So by default a tool is neither concurrency- nor replay-safe; with
 * `trustAnnotations: true`, `readOnlyHint` makes it both, and `destructiveHint` (the spec's default
 * when absent) makes it wait for approval (R82). A per-tool override always wins.
 */
import type { AgentTool } from "../types.js";
import type { McpToolOverride } from "./types.js";

/** The part of MCP's `ToolAnnotations` read here. */
export interface McpAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

export interface ToolRules {
  concurrencySafe: boolean;
  replay: "safe" | "never";
  needsApproval: NonNullable<AgentTool["needsApproval"]>;
  timeoutMs?: number;
}

export function toolRules(
  annotations: McpAnnotations | undefined,
  trusted: boolean,
  needsApprovalByDefault: boolean,
  override: McpToolOverride | undefined,
  toolTimeoutMs: number | undefined,
): ToolRules {
  const readOnly = trusted && annotations?.readOnlyHint === true;
  // The spec's default for `destructiveHint` is true: only an explicit `false` says otherwise.
  const destructive = !readOnly && annotations?.destructiveHint !== false;
  const approval = trusted ? destructive : needsApprovalByDefault;
  const timeoutMs = override?.timeoutMs ?? toolTimeoutMs;
  return {
    concurrencySafe: override?.concurrencySafe ?? readOnly,
    replay: override?.replay ?? (readOnly ? "safe" : "never"),
    needsApproval: override?.needsApproval ?? approval,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}
