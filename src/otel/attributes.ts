/**
 * Span and metric attributes: the OpenTelemetry GenAI semantic conventions where they name the
 * thing (`gen_ai.*`, `error.type`), and the loop's own under `xstate_agent_loop.*` (the statechart
 * state that produced the span, end reasons, hooks, recovery).
 */
import type { Attributes } from "@opentelemetry/api";
import type { AgentEndReason, AssistantMessage, Model, Usage } from "../types.js";

export const ATTR = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheWriteTokens: "gen_ai.usage.cache_creation.input_tokens",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  tokenType: "gen_ai.token.type",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  errorType: "error.type",
  /** The statechart state that produced the span (`turn.requesting.streaming`). */
  state: "xstate_agent_loop.state",
  endReason: "xstate_agent_loop.end_reason",
  turn: "xstate_agent_loop.turn",
  attempt: "xstate_agent_loop.request.attempt",
  hook: "xstate_agent_loop.hook",
  compactionReason: "xstate_agent_loop.compaction.reason",
  retryKind: "xstate_agent_loop.retry.kind",
  approvalDecision: "xstate_agent_loop.approval.decision",
  /** R81: the run replays (or resumed from) a journal. */
  resumed: "xstate_agent_loop.resumed",
} as const;

/** R63: the end reasons that are failures (the run span's status is ERROR). */
const FAILED_ENDS: ReadonlySet<string> = new Set(["error", "aborted", "prompt_too_long", "output_invalid", "max_output_tokens"]);

export const isFailedEnd = (reason: AgentEndReason): boolean => FAILED_ENDS.has(reason);

export function modelAttributes(model: Model | undefined): Attributes {
  if (!model || typeof model !== "object") return {};
  return { [ATTR.providerName]: String(model.provider), [ATTR.requestModel]: String(model.id) };
}

/** Input tokens count the cache's too (the conventions' `gen_ai.usage.input_tokens` is every input token). */
export function usageAttributes(usage: Usage | undefined): Attributes {
  if (!usage || typeof usage !== "object") return {};
  const cacheRead = num(usage.cacheRead);
  const cacheWrite = num(usage.cacheWrite);
  return {
    [ATTR.inputTokens]: num(usage.input) + cacheRead + cacheWrite,
    [ATTR.outputTokens]: num(usage.output),
    ...(cacheRead > 0 ? { [ATTR.cacheReadTokens]: cacheRead } : {}),
    ...(cacheWrite > 0 ? { [ATTR.cacheWriteTokens]: cacheWrite } : {}),
  };
}

/** A response's attributes: the model that answered, why it stopped (pi's stop reason), its usage. */
export function responseAttributes(message: AssistantMessage | undefined): Attributes {
  if (!message || typeof message !== "object") return {};
  return {
    ...(typeof message.model === "string" ? { [ATTR.responseModel]: message.model } : {}),
    ...(typeof message.stopReason === "string" ? { [ATTR.finishReasons]: [message.stopReason] } : {}),
    ...usageAttributes(message.usage),
  };
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);
