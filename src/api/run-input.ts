/** The run machine's input, built from a caller's config: plain data only (no functions, no API key). */
import type { AgentLoopConfig, AgentMessage } from "../types.js";
import type { HookFlags, RunInput } from "../../machines/run.types.js";
import type { ToolRegistry } from "../loop/tool-registry.js";
import { recoverySettings } from "../loop/recovery-settings.js";
import { outputRunSettings } from "../loop/output-tool.js";
import { ownQueuesOf } from "../actors/own-queues.js";
import { withoutHeaders } from "../protocol/model-headers.js";
import { toPlainMessages } from "../loop/plain-data.js";

export function hookFlags(config: AgentLoopConfig): HookFlags {
  return {
    transformContext: typeof config.transformContext === "function",
    getApiKey: typeof config.getApiKey === "function",
    getSteeringMessages: typeof config.getSteeringMessages === "function",
    getFollowUpMessages: typeof config.getFollowUpMessages === "function",
    prepareNextTurn: typeof config.prepareNextTurn === "function",
    prepareRequest: typeof config.prepareRequest === "function",
    finishTurn: typeof config.finishTurn === "function",
    beforeToolCall: typeof config.beforeToolCall === "function",
    afterToolCall: typeof config.afterToolCall === "function",
    requestLimiter: typeof config.requestLimiter?.acquire === "function",
  };
}

export interface RunInputArgs {
  /** Prompts (R1), or `null` to continue (R2). Copied (as plain data, R13). */
  prompts: AgentMessage[] | null;
  /**
   * The transcript so far. Not copied here unless a message is not plain data (R13): the run's
   * context takes its own copy before anything can change it (see `initialRunContext`), so a long
   * transcript is copied once per run, not twice.
   */
  messages: AgentMessage[];
  tools: ToolRegistry;
  config: AgentLoopConfig;
  startedAt: number;
  skipInitialSteeringPoll?: boolean;
  forwardEvents?: boolean;
}

export function runInput(args: RunInputArgs): RunInput {
  const { config } = args;
  const data = args.tools.data;
  // The optional keys are set one by one, in this order (not `...(flag ? {…} : {})`: an object
  // allocated and spread for every key, present or not, on every run).
  const input: RunInput = {
    // R13, R14: what the caller hands in becomes plain data here, so every snapshot serializes
    // (a bigint or a cycle made `getPersistedSnapshot` throw, a function stayed in the snapshot).
    prompts: args.prompts ? toPlainMessages(args.prompts).slice() : null,
    messages: toPlainMessages(args.messages),
    tools: data.tools,
    sequentialTools: data.sequentialTools,
    siblingCancellingTools: data.siblingCancellingTools,
    model: withoutHeaders(config.model),
    thinkingLevel: config.reasoning ?? "off",
    toolExecution: config.toolExecution ?? "parallel",
    hooks: hookFlags(config),
    startedAt: args.startedAt,
  };
  if (args.skipInitialSteeringPoll) input.skipInitialSteeringPoll = true;
  else if (ownQueuesOf(config.getSteeringMessages, config.getFollowUpMessages)?.steeringEmpty()) input.defersInitialSteeringPoll = true;
  if (args.forwardEvents) input.forwardEvents = true;
  if (config.budget) input.budget = { ...config.budget };
  if (config.streamingToolExecution === true) input.streamingTools = { maxConcurrent: maxConcurrentTools(config.maxConcurrentTools) };
  if (config.retry || config.outputLimit || config.compact) input.recovery = recoverySettings(config);
  if (config.output) input.output = outputRunSettings(config.output);
  return input;
}

/** R70: `maxConcurrentTools`, default 10; anything that is not a whole number ≥ 1 counts as the default. */
function maxConcurrentTools(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 ? value : 10;
}
