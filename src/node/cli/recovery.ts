/**
 * The terminal agent's recovery settings (SPEC R60, R61, R62, R67): on by default, each turned off
 * or tuned by a flag. The one place that decides what the CLI's Agent recovers from.
 */
import { summarizingCompactor } from "../../index.js";
import type { AgentLoopConfig } from "../../types.js";
import type { CliOptions } from "./args.js";

export type RecoveryConfig = Pick<AgentLoopConfig, "retry" | "outputLimit" | "compact" | "abortGraceMs">;

/** The recovery part of the CLI's Agent options; an absent key leaves that mechanism off. */
export function recoveryConfig(
  options: Pick<CliOptions, "retry" | "maxAttempts" | "outputLimitRecovery" | "abortGraceMs" | "compact" | "compactAtTokens">,
): RecoveryConfig {
  return {
    // R60: the loop's defaults (5 attempts, 0.5 s doubling to at most 32 s, full jitter).
    ...(options.retry ? { retry: options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {} } : {}),
    // R61: escalate to the model's maximum once, then at most 3 "continue" messages.
    ...(options.outputLimitRecovery ? { outputLimit: {} } : {}),
    // R62: on overflow, summarize all but the last 2 turns and ask again; proactively only when asked
    // (it spends model calls before the window is full).
    ...(options.compact
      ? { compact: { compactor: summarizingCompactor(), ...(options.compactAtTokens !== undefined ? { thresholdTokens: options.compactAtTokens } : {}) } }
      : {}),
    ...(options.abortGraceMs !== undefined ? { abortGraceMs: options.abortGraceMs } : {}),
  };
}
