/**
 * A `beforeToolCall` permission policy: calls to the guarded tools (default: `write_file`) run only
 * when the policy allows them; otherwise they become error results the model sees (R21 block).
 */
import type { AgentLoopConfig, BeforeToolCallContext, BeforeToolCallResult } from "../../types.js";

export interface PermissionRequest {
  toolName: string;
  toolCallId: string;
  /** The validated arguments. */
  args: unknown;
}

/** `true`/`false`, or a decision with the reason the model sees when refused. */
export type PermissionDecision = boolean | { allow: boolean; reason?: string };

export interface PermissionPolicyOptions {
  /**
   * `"allow"` (e.g. `--yes`), `"deny"` (e.g. no terminal to ask), or a function that asks the user.
   * The function may be slow (it waits for an answer) and must settle when `signal` aborts.
   */
  decide: "allow" | "deny" | ((request: PermissionRequest, signal?: AbortSignal) => Promise<PermissionDecision>);
  /** Tools that need permission; default `["write_file"]`. */
  tools?: readonly string[];
  /** The reason given to the model for a refusal without a reason of its own. */
  denyReason?: (request: PermissionRequest) => string;
}

export type BeforeToolCall = NonNullable<AgentLoopConfig["beforeToolCall"]>;

const defaultDenyReason = (request: PermissionRequest) => `Permission denied: the user did not allow ${request.toolName}.`;

export function permissionPolicy(options: PermissionPolicyOptions): BeforeToolCall {
  const guarded = new Set(options.tools ?? ["write_file"]);
  const denyReason = options.denyReason ?? defaultDenyReason;
  return async (context: BeforeToolCallContext, signal?: AbortSignal): Promise<BeforeToolCallResult | undefined> => {
    const request: PermissionRequest = { toolName: context.toolCall.name, toolCallId: context.toolCall.id, args: context.args };
    if (!guarded.has(request.toolName)) return undefined;
    if (options.decide === "allow") return undefined;
    if (options.decide === "deny") return { block: true, reason: denyReason(request) };
    let decision: PermissionDecision;
    try {
      decision = await options.decide(request, signal);
    } catch {
      decision = false;
    }
    const allow = typeof decision === "boolean" ? decision : decision.allow;
    if (allow) return undefined;
    const reason = typeof decision === "object" && decision.reason ? decision.reason : denyReason(request);
    return { block: true, reason };
  };
}
