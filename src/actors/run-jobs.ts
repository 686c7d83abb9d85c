/**
 * The run steps' work: each job calls one app hook (or the stream function) and turns what it
 * returns into plain data for the machine. Executable tools stay in the registry.
 */
import type { AgentContext, AgentLoopTurnUpdate, AgentMessage } from "../types.js";
import type { EffectJobs, StateUpdate, TurnSnapshot, TurnUpdate } from "../../machines/effects.js";
import { checkConverted } from "../loop/normalize.js";
import { streamResponse } from "./stream-response.js";
import type { RunDeps } from "./run-deps.js";

type Input<K extends keyof EffectJobs> = EffectJobs[K]["input"];

export const runJobs = {
  getSteeringMessages: async (deps: RunDeps) => (await deps.config.getSteeringMessages!()) ?? [],
  getFollowUpMessages: async (deps: RunDeps) => (await deps.config.getFollowUpMessages!()) ?? [],
  async prepareNextTurn(deps: RunDeps, turn: Input<"prepareNextTurn">): Promise<TurnUpdate> {
    const update = await deps.config.prepareNextTurn!(turnContext(deps, turn), deps.signal);
    const plain: TurnUpdate = stateUpdate(deps, update);
    if (update?.messages?.length) plain.prepared = update.messages.slice();
    return plain;
  },
  async prepareRequest(deps: RunDeps, request: Input<"prepareRequest">): Promise<StateUpdate> {
    const update = await deps.config.prepareRequest!(
      { context: contextOf(deps, request.messages), model: request.model, thinkingLevel: request.thinkingLevel },
      deps.signal,
    );
    return stateUpdate(deps, update);
  },
  transformContext: (deps: RunDeps, { messages }: Input<"transformContext">) => deps.config.transformContext!(messages, deps.signal),
  convertToLlm: async (deps: RunDeps, { messages }: Input<"convertToLlm">) => checkConverted(await deps.config.convertToLlm(messages)),
  async resolveApiKey(deps: RunDeps, { provider }: Input<"resolveApiKey">): Promise<null> {
    // R40: falls back to config.apiKey; the key stays in the runtime, out of the machine.
    deps.apiKey.next = (await deps.config.getApiKey!(provider)) ?? undefined;
    return null;
  },
  streamResponse: (deps: RunDeps, request: Input<"streamResponse">) => streamResponse(deps, request),
  async finishTurn(deps: RunDeps, turn: Input<"finishTurn">): Promise<"continue" | "end" | null> {
    const decision = await deps.config.finishTurn!(turnContext(deps, turn), deps.signal);
    return decision?.action === "end" || decision?.action === "continue" ? decision.action : null;
  },
};

const contextOf = (deps: RunDeps, messages: AgentMessage[]): AgentContext => ({ messages, tools: deps.tools.list });

const turnContext = (deps: RunDeps, turn: TurnSnapshot) => ({
  message: turn.message,
  toolResults: turn.toolResults,
  context: contextOf(deps, turn.messages),
  newMessages: turn.newMessages,
});

/** A hook's `{context, model, thinkingLevel}` as plain data; a new tool set goes to the registry. */
function stateUpdate(deps: RunDeps, update: AgentLoopTurnUpdate | undefined | void): StateUpdate {
  if (!update) return {};
  const plain: StateUpdate = {};
  if (update.context) {
    plain.messages = update.context.messages.slice();
    plain.toolSet = deps.tools.replace(update.context.tools ?? []);
  }
  if (update.model) plain.model = update.model;
  if (update.thinkingLevel) plain.thinkingLevel = update.thinkingLevel;
  return plain;
}
