/**
 * The shape checks of a loop entry point's arguments (`agentLoop`, `runAgentLoop`, the continue
 * variants), run at the call so a bad argument is a typed error the caller can catch, never a
 * failure from inside the run. Presence checks (`streamFn`, `convertToLlm`, R2) stay with the
 * entry points; this adds the shapes.
 */
import type { AgentContext, AgentLoopConfig, OutputSettings } from "../types.js";
import { describeValue, isRecord, readField } from "./describe-value.js";
import { checkMessages } from "./messages.js";
import { checkModel } from "./model.js";
import { checkSignal } from "./signal.js";
import { checkTools } from "./tools.js";
import { AgentInputError } from "./errors.js";
import { recoverySettings } from "../loop/recovery-settings.js";
import { outputRunSettings } from "../loop/output-tool.js";

export function checkLoopArguments(prompts: unknown, context: unknown, config: unknown, signal: unknown): void {
  checkSignal(signal, "signal");
  if (prompts !== null) checkMessages(prompts, "prompts");
  if (isRecord(context)) {
    checkMessages(valueOf(context, "messages"), "context.messages");
    checkTools(valueOf(context, "tools"), "context.tools");
  }
  if (isRecord(config)) {
    checkModel(valueOf(config, "model"), "config.model");
    checkLoopSettings(config as Partial<AgentLoopConfig>, "config.");
  }
}

/**
 * The loop settings (R60–R67, the request limiter), wherever they enter: a loop entry point's
 * config, `createAgentRunLogic`'s, the Agent's options (`prefix` names the field's owner).
 */
export function checkLoopSettings(
  settings: Pick<Partial<AgentLoopConfig>, "retry" | "outputLimit" | "compact" | "maxTokens" | "abortGraceMs" | "toolTimeoutMs" | "requestLimiter" | "maxConcurrentTools" | "output">,
  prefix: string,
): void {
  checkDuration(valueOf(settings, "abortGraceMs"), `${prefix}abortGraceMs`);
  checkDuration(valueOf(settings, "toolTimeoutMs"), `${prefix}toolTimeoutMs`);
  // R70: a limit that is not a whole number ≥ 1 would silently mean the default (or none).
  const limit = valueOf(settings, "maxConcurrentTools");
  if (limit !== undefined && !(typeof limit === "number" && Number.isInteger(limit) && limit >= 1)) {
    throw new AgentInputError(`${prefix}maxConcurrentTools`, `${prefix}maxConcurrentTools must be a whole number ≥ 1, got ${describeValue(limit)}`);
  }
  const limiter = valueOf(settings, "requestLimiter");
  if (limiter !== undefined && !(isRecord(limiter) && typeof (limiter as { acquire?: unknown }).acquire === "function")) {
    throw new AgentInputError(`${prefix}requestLimiter`, `${prefix}requestLimiter must be a limiter from createRequestLimiter(), got ${describeValue(limiter)}`);
  }
  // R60–R62: the same checks (and defaults) a run applies.
  recoverySettings({ retry: settings.retry, outputLimit: settings.outputLimit, compact: settings.compact, maxTokens: settings.maxTokens } as AgentLoopConfig);
  // R100: the schema, attempts and tool name a run can use.
  const output = valueOf(settings, "output");
  if (output !== undefined) outputRunSettings(output as OutputSettings, prefix);
}

/** R67: a duration in ms (undefined: none); anything else would silently mean "wait for ever". */
function checkDuration(value: unknown, field: string): void {
  if (value === undefined) return;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return;
  throw new AgentInputError(field, `${field} must be a finite number of milliseconds ≥ 0, got ${describeValue(value)}`);
}

/** A field's value; a throwing getter reads as a value no check accepts (and the check names the field). */
function valueOf(object: object, key: keyof AgentContext | keyof AgentLoopConfig): unknown {
  const read = readField(object, key);
  return "threw" in read ? UNREADABLE : read.value;
}

const UNREADABLE = Symbol("unreadable");
