/** `runToolCall`'s argument checks, at the call (it never rejects once running). */
import { blockProblem } from "./content.js";
import { describeValue, isRecord, readField } from "./describe-value.js";
import { AgentInputError } from "./errors.js";
import { problemText } from "./problem.js";
import { checkSignal } from "./signal.js";
import { checkTools } from "./tools.js";

export function checkToolCallArguments(toolCall: unknown, options: unknown): void {
  const problem = blockProblem(toolCall, "toolCall", ["toolCall"]);
  if (problem) throw new AgentInputError(problem.field, problemText(problem));
  if (!isRecord(options)) throw new AgentInputError("options", `options must be an object {tools, assistantMessage, context, …}, got ${describeValue(options)}`);
  const signal = readField(options, "signal");
  checkSignal("threw" in signal ? Symbol("unreadable") : signal.value, "options.signal");
  const tools = readField(options, "tools");
  if (!("threw" in tools) && tools.value === undefined) throw new AgentInputError("options.tools", "options.tools must be an array of tools, got undefined");
  checkTools("threw" in tools ? Symbol("unreadable") : tools.value, "options.tools");
}
