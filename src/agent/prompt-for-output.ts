/**
 * SPEC R100 for callers who want the value itself: `promptForOutput(agent, input, { schema })`
 * runs one prompt asking for a structured final answer and resolves with it, typed from a zod
 * schema (`unknown` for a JSON Schema unless a type is given). `prompt` keeps pi's signature
 * (it resolves nothing); this helper reads `agent.state.output` after the run.
 */
import type { z } from "zod";
import type { AgentEndReason, AgentMessage, ImageContent, OutputSettings, ToolParameters } from "../types.js";
import type { Agent } from "./agent.js";

/** The validated answer's type: zod's output type for a zod schema, else `unknown`. */
export type OutputOf<S> = S extends z.ZodType ? z.output<S> : unknown;

/** The run ended without a valid final answer: `reason` is its `agent_end.reason` (`output_invalid`, `aborted`, `max_turns`, …). */
export class OutputError extends Error {
  override name = "OutputError";
  constructor(readonly reason: AgentEndReason | undefined) {
    super(reason === "output_invalid" ? "the model gave no valid final answer within output.maxAttempts attempts" : `the run ended (${reason ?? "unknown reason"}) without a final answer`);
  }
}

/**
 * Runs `input` as `agent.prompt` does, asking for `output` for this run only (the Agent's own
 * `output` setting is put back afterwards), and resolves with the validated answer. Rejects with
 * `OutputError` when the run ends without one, and as `prompt` does otherwise (a run already active).
 */
export async function promptForOutput<S extends ToolParameters, T = OutputOf<S>>(
  agent: Agent,
  input: string | AgentMessage | AgentMessage[],
  output: OutputSettings<S>,
  images?: ImageContent[],
): Promise<T> {
  const previous = agent.output;
  agent.output = output;
  try {
    await (typeof input === "string" ? agent.prompt(input, images) : agent.prompt(input));
  } finally {
    agent.output = previous;
  }
  if (agent.lastEndReason !== "completed" || agent.state.output === undefined) throw new OutputError(agent.lastEndReason);
  return agent.state.output as T;
}
