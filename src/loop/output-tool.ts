/**
 * SPEC R100: the final-answer tool a run with `output` gives the model, and the run's plain-data
 * output settings. The tool's parameters are the output schema, so its calls are validated as any
 * tool's arguments are (R21: coercions, zod or JSON Schema, the explained error result the model
 * reads); `execute` only hands the validated value back (as `details`) and is safe to run again
 * after a restore (R13). The run ends when such a call passed (machines/run/actions/output.ts).
 */
import type { AgentTool, OutputSettings } from "../types.js";
import type { OutputRunSettings } from "../../machines/run.types.js";
import { AgentInputError } from "../boundary/errors.js";
import { toolJsonSchema } from "../tools/index.js";

export const DEFAULT_OUTPUT_TOOL_NAME = "final_answer";
export const DEFAULT_OUTPUT_ATTEMPTS = 3;

/** The same tool object for the same settings: a restored run resolves it by name and identity (R13). */
const tools = new WeakMap<OutputSettings, AgentTool>();

/** The run's output settings as plain data for the machine; throws `AgentInputError` for settings no run could use. */
export function outputRunSettings(output: OutputSettings, prefix = "config."): OutputRunSettings {
  const toolName = checkedOutput(output, prefix);
  const maxAttempts = output.maxAttempts ?? DEFAULT_OUTPUT_ATTEMPTS;
  return {
    toolName,
    maxAttempts,
    reminder: `Give your final answer now by calling the ${toolName} tool; its arguments are the answer. Do not answer in text.`,
  };
}

/** The final-answer tool of `output` (checked by `outputRunSettings` first). */
export function outputTool(output: OutputSettings): AgentTool {
  let tool = tools.get(output);
  if (!tool) {
    const name = output.toolName ?? DEFAULT_OUTPUT_TOOL_NAME;
    tool = {
      name,
      label: "Final answer",
      description:
        output.description ??
        "Give your final answer with this tool once you have it: its arguments are the answer, checked against their schema. If they do not validate, you are told what is wrong and call it again.",
      parameters: output.schema,
      // Pure: a restored run that was validating runs it again and finishes the same way.
      replay: "safe",
      execute: async (_id, value) => ({ content: [{ type: "text", text: "Final answer accepted." }], details: value, terminate: true }),
    };
    tools.set(output, tool);
  }
  return tool;
}

/** The answer tool's name, once `output` is known to be usable. */
function checkedOutput(output: OutputSettings, prefix: string): string {
  const field = `${prefix}output`;
  if (typeof output !== "object" || output === null) throw new AgentInputError(field, `${field} must be { schema, maxAttempts?, toolName? }`);
  const { maxAttempts, toolName, schema } = output;
  if (maxAttempts !== undefined && !(typeof maxAttempts === "number" && Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
    throw new AgentInputError(`${field}.maxAttempts`, `${field}.maxAttempts must be a whole number ≥ 1, got ${String(maxAttempts)}`);
  }
  if (toolName !== undefined && !(typeof toolName === "string" && /^[a-zA-Z0-9_-]{1,64}$/.test(toolName))) {
    throw new AgentInputError(`${field}.toolName`, `${field}.toolName must be 1–64 letters, digits, _ or -`);
  }
  let json: Record<string, unknown>;
  try {
    json = toolJsonSchema({ name: "output", description: "", parameters: schema as AgentTool["parameters"] }) as Record<string, unknown>;
  } catch (error) {
    throw new AgentInputError(`${field}.schema`, `${field}.schema must be a zod schema or a JSON Schema object (${error instanceof Error ? error.message : String(error)})`);
  }
  // The answer is a tool call's arguments, which every provider requires to be an object.
  if (typeof json !== "object" || json === null || json.type !== "object") {
    throw new AgentInputError(`${field}.schema`, `${field}.schema must describe an object (wrap another value: { type: "object", properties: { value: … } } or z.object({ value: … }))`);
  }
  return toolName ?? DEFAULT_OUTPUT_TOOL_NAME;
}

/** The final-answer tool of a run's config, if it asks for a structured answer (R100). */
export const answerToolOf = (config: object): AgentTool | undefined => {
  const output = (config as { output?: OutputSettings }).output;
  return output ? outputTool(output) : undefined;
};
