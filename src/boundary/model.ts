/**
 * The model descriptor (SPEC "Data model": `Model`). Providers read `id`, `api`, `provider` and
 * price usage from `cost`; a descriptor without them used to reject inside the stream function,
 * out of every caller's reach.
 */
import type { Model } from "../types.js";
import { describeValue, isRecord } from "./describe-value.js";
import { fieldProblem } from "./content.js";
import { AgentInputError, HookResultError } from "./errors.js";
import { fieldPath, problemText, type Problem } from "./problem.js";

const COST_KEYS = ["input", "output", "cacheRead", "cacheWrite"] as const;

/** The first problem of a model descriptor, or undefined. */
export function modelProblem(value: unknown, path = "model"): Problem | undefined {
  if (!isRecord(value)) return { field: path, problem: `must be a model descriptor object ({id, api, provider, cost, …}), got ${describeValue(value)}` };
  for (const key of ["id", "api", "provider"] as const) {
    const problem = fieldProblem(value, key, path, "string");
    if (problem) return problem;
  }
  const costProblem = fieldProblem(value, "cost", path, "object");
  if (costProblem) return { ...costProblem, problem: `${costProblem.problem} (prices per million tokens: {input, output, cacheRead, cacheWrite})` };
  const cost = (value as { cost: unknown }).cost;
  const costPath = fieldPath(path, "cost");
  for (const key of COST_KEYS) {
    const problem = fieldProblem(cost, key, costPath, "number");
    if (problem) return problem;
  }
  return undefined;
}

/** `model`, checked at a call (`agentLoop`'s `config.model`, `agent.state.model = …`). */
export function checkModel(value: unknown, field = "model"): Model {
  const problem = modelProblem(value, field);
  if (problem) throw new AgentInputError(problem.field, problemText(problem));
  return value as Model;
}

/** A hook's `model` (`prepareNextTurn`, `prepareRequest`), checked. */
export function checkHookModel(value: unknown, hook: string): Model {
  const problem = modelProblem(value, "model");
  if (problem) throw new HookResultError(hook, problem.field, `${hook} returned an invalid ${problemText(problem)}`);
  return value as Model;
}
