/**
 * The shape checks of a loop entry point's arguments (`agentLoop`, `runAgentLoop`, the continue
 * variants), run at the call so a bad argument is a typed error the caller can catch, never a
 * failure from inside the run. Presence checks (`streamFn`, `convertToLlm`, R2) stay with the
 * entry points; this adds the shapes.
 */
import type { AgentContext, AgentLoopConfig } from "../types.js";
import { isRecord, readField } from "./describe-value.js";
import { checkMessages } from "./messages.js";
import { checkModel } from "./model.js";
import { checkSignal } from "./signal.js";
import { checkTools } from "./tools.js";

export function checkLoopArguments(prompts: unknown, context: unknown, config: unknown, signal: unknown): void {
  checkSignal(signal, "signal");
  if (prompts !== null) checkMessages(prompts, "prompts");
  if (isRecord(context)) {
    const c = context as Partial<AgentContext>;
    checkMessages(c.messages, "context.messages");
    const tools = readField(c, "tools");
    checkTools("threw" in tools ? Symbol("unreadable") : tools.value, "context.tools");
  }
  if (isRecord(config)) checkModel((config as Partial<AgentLoopConfig>).model, "config.model");
}
