import type { AgentContext, AgentLoopConfig, AgentMessage } from "../types.js";
import { answerToolOf } from "../loop/output-tool.js";
import { ToolRegistry } from "../loop/tool-registry.js";

/** Argument checks that throw synchronously, before any event (R2, SPEC "Entry points"). */
export function checkRunArguments(prompts: AgentMessage[] | null, context: AgentContext, config: AgentLoopConfig, streamFn: unknown): void {
  if (typeof streamFn !== "function") throw new TypeError("agent loop: a streamFn is required");
  if (!config || typeof config.convertToLlm !== "function") throw new TypeError("agent loop: config.convertToLlm is required");
  if (!config.model) throw new TypeError("agent loop: config.model is required");
  if (!context || !Array.isArray(context.messages)) throw new TypeError("agent loop: context.messages must be an array");
  if (prompts === null) {
    const last = context.messages[context.messages.length - 1];
    if (!last) throw new Error("Cannot continue: no messages in context");
    if ((last as { role?: string }).role === "assistant") throw new Error("Cannot continue from message role: assistant");
  } else if (!Array.isArray(prompts)) throw new TypeError("agent loop: prompts must be an array of messages");
  // R100: the final-answer tool's name must be free (the registry throws the typed error).
  if (config.output && Array.isArray(context.tools)) new ToolRegistry(context.tools, answerToolOf(config));
}
