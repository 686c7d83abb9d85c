/**
 * SPEC R60–R62: the recovery settings of a run as plain data, defaults applied, checked where they
 * enter (a malformed value is a typed `AgentInputError` before any event). The compactor function
 * stays in the config; the machine only knows that one is configured.
 */
import type { AgentLoopConfig } from "../types.js";
import type { RecoverySettings } from "../../machines/run.types.js";
import { AgentInputError } from "../boundary/errors.js";

/** R61: what the recovery message says (Claude Code's wording, shortened). */
export const OUTPUT_LIMIT_RECOVERY_PROMPT =
  "Output token limit hit. Resume directly where you stopped, with no apology and no recap; break remaining work into smaller pieces.";

export function recoverySettings(config: AgentLoopConfig): RecoverySettings {
  const { retry, outputLimit, compact } = config;
  return {
    retry: retry
      ? {
          maxAttempts: count("retry.maxAttempts", retry.maxAttempts, 5, 1),
          baseDelayMs: count("retry.baseDelayMs", retry.baseDelayMs, 500, 0),
          maxDelayMs: count("retry.maxDelayMs", retry.maxDelayMs, 32_000, 0),
          fallbackModel: retry.fallbackModel ?? null,
          overloadsBeforeFallback: count("retry.overloadsBeforeFallback", retry.overloadsBeforeFallback, 3, 1),
        }
      : null,
    outputLimit: outputLimit
      ? {
          escalatedMaxTokens: outputLimit.escalatedMaxTokens === undefined ? null : count("outputLimit.escalatedMaxTokens", outputLimit.escalatedMaxTokens, 0, 1),
          maxRecoveries: count("outputLimit.maxRecoveries", outputLimit.maxRecoveries, 3, 0),
          prompt: text("outputLimit.recoveryPrompt", outputLimit.recoveryPrompt) ?? OUTPUT_LIMIT_RECOVERY_PROMPT,
        }
      : null,
    compact: compact ? compactSettings(compact) : null,
    requestMaxTokens: typeof config.maxTokens === "number" ? config.maxTokens : null,
  };
}

function compactSettings(compact: NonNullable<AgentLoopConfig["compact"]>): NonNullable<RecoverySettings["compact"]> {
  if (typeof compact !== "object" || typeof compact.compactor !== "function") throw new AgentInputError("compact.compactor", "compact.compactor must be a function (e.g. summarizingCompactor())");
  return { thresholdTokens: compact.thresholdTokens === undefined ? null : count("compact.thresholdTokens", compact.thresholdTokens, 0, 0) };
}

function count(field: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) throw new AgentInputError(field, `${field} must be a finite number ≥ ${min}, got ${String(value)}`);
  return value;
}

function text(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw new AgentInputError(field, `${field} must be a non-empty string`);
  return value;
}
