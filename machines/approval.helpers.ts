/**
 * Pure helpers of per-call approval (SPEC R82): the "always allow" rules, the texts a waiting
 * call's outcome carries, and the run's approval bookkeeping (plain data in its context).
 */
import type { AgentToolResult, ApprovalRule, ApproveOptions, ToolApprovalRequest } from "../src/protocol/index.js";
import { errorResult } from "../src/protocol/tool-results.js";

/** What a run knows of approvals: ids issued so far, the calls waiting now, the rules in force. */
export interface RunApprovals {
  /** Ids are `<idPrefix><n>`, n counting from 1 within the run (the session's prefix makes them unique within it). */
  idPrefix: string;
  issued: number;
  /** Waiting calls, with the batch index of each (the child `tool:<index>`). */
  pending: (ToolApprovalRequest & { index: number })[];
  rules: ApprovalRule[];
}

/** A run's approval settings from its input: a session passes its prefix and rules; a loop run numbers its own. */
export function initialApprovals(input: { idPrefix?: string; rules?: ApprovalRule[] } | undefined): RunApprovals {
  return { idPrefix: input?.idPrefix ?? "approval-", issued: 0, pending: [], rules: input?.rules ?? [] };
}

/** The reason a `needsApproval` call waits with. */
export const needsApprovalReason = (toolName: string): string => `Tool ${toolName} requires approval`;

/** A rejected call's result: the reason as given (the model reads it, as a block's). */
export const rejectedResult = (reason: string): AgentToolResult => errorResult(reason === "" ? "Tool call was rejected" : reason);

/** R82: `runToolCall` has nobody to ask. */
export const approvalUnavailableResult = (toolName: string): AgentToolResult =>
  errorResult(`Tool ${toolName} requires approval, which this caller cannot give (runToolCall)`);

/** The `path` argument a path rule looks at, if the call has one. */
const pathOf = (args: unknown): string | undefined => {
  const path = args !== null && typeof args === "object" ? (args as { path?: unknown }).path : undefined;
  return typeof path === "string" ? path : undefined;
};

/**
 * Does `rule` allow this call? A rule without `path` allows every call of its tool; with `path`,
 * the call's `path` argument must equal it, or lie under it when it ends with `/` (never through a
 * `..` segment, which could climb out of it).
 */
export function ruleAllows(rule: ApprovalRule, toolName: string, args: unknown): boolean {
  if (rule.toolName !== toolName) return false;
  if (rule.path === undefined) return true;
  const path = pathOf(args);
  if (path === undefined) return false;
  if (path === rule.path) return true;
  return rule.path.endsWith("/") && path.startsWith(rule.path) && !path.split(/[\\/]/).includes("..");
}

export const rulesAllow = (rules: readonly ApprovalRule[], toolName: string, args: unknown): boolean => rules.some((rule) => ruleAllows(rule, toolName, args));

/** The rule an `approve(…, {always})` adds for `toolName`. */
export function ruleOf(toolName: string, always: NonNullable<ApproveOptions["always"]>): ApprovalRule {
  return always === true ? { toolName } : { toolName, path: always.path };
}

/** `rules` with `rule` (unchanged when an equal rule is already there). */
export function withRule(rules: ApprovalRule[], rule: ApprovalRule): ApprovalRule[] {
  return rules.some((r) => r.toolName === rule.toolName && r.path === rule.path) ? rules : rules.concat(rule);
}
