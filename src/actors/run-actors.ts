/**
 * The run machine's implementations over one run's dependencies: each invoked actor waits for
 * the event sink to settle (the emit barrier), then calls the app's hook. Hooks' replacement
 * state is turned into plain data here; executable tools stay in the registry.
 */
import { fromPromise, type ActorSystem } from "xstate";
import type { AgentContext, AgentLoopTurnUpdate, AgentMessage, AssistantMessage, Message } from "../types.js";
import type { RequestInput, StateUpdate, TurnSnapshot, TurnUpdate } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { createToolCallImplementations } from "./tool-call-actors.js";
import { streamResponse, type StreamRequest } from "./stream-response.js";
import { normalizeTranscript } from "../loop/normalize.js";
import type { RunDeps } from "./run-deps.js";

/** Implementations that find their run's dependencies through the actor system (see `system-deps.ts`). */
export function createRunImplementations(resolve: (system: ActorSystem<any>) => RunDeps) {
  /** Runs `body` with the run's dependencies once the sink has settled every earlier event. */
  const step =
    <I, O>(body: (deps: RunDeps, input: I) => Promise<O> | O) =>
    async ({ input, system }: { input: I; system: ActorSystem<any> }): Promise<O> => {
      const deps = resolve(system);
      const settled = deps.events.settled();
      if (settled) await settled;
      return body(deps, input);
    };

  return {
    actors: {
      getSteeringMessages: fromPromise<AgentMessage[]>(
        step(async (deps) => (await deps.config.getSteeringMessages!()) ?? []),
      ),
      getFollowUpMessages: fromPromise<AgentMessage[]>(
        step(async (deps) => (await deps.config.getFollowUpMessages!()) ?? []),
      ),
      prepareNextTurn: fromPromise<TurnUpdate, TurnSnapshot>(
        step(async (deps, turn) => {
          const update = await deps.config.prepareNextTurn!(turnContext(deps, turn), deps.signal);
          const plain: TurnUpdate = stateUpdate(deps, update);
          if (update?.messages?.length) plain.prepared = update.messages.slice();
          return plain;
        }),
      ),
      prepareRequest: fromPromise<StateUpdate, RequestInput>(
        step(async (deps, request) =>
          stateUpdate(
            deps,
            await deps.config.prepareRequest!(
              { context: contextOf(deps, request.messages), model: request.model, thinkingLevel: request.thinkingLevel },
              deps.signal,
            ),
          ),
        ),
      ),
      transformContext: fromPromise<AgentMessage[], { messages: AgentMessage[] }>(
        step((deps, { messages }) => deps.config.transformContext!(messages, deps.signal)),
      ),
      convertToLlm: fromPromise<Message[], { messages: AgentMessage[] }>(
        step(async (deps, { messages }) => normalizeTranscript(await deps.config.convertToLlm(messages))),
      ),
      resolveApiKey: fromPromise<void, { provider: string }>(
        step(async (deps, { provider }) => {
          // R40: falls back to config.apiKey; the key stays in the runtime, out of the machine.
          deps.apiKey.next = (await deps.config.getApiKey!(provider)) ?? undefined;
        }),
      ),
      streamResponse: fromPromise<AssistantMessage, StreamRequest>(({ input, system }) => streamResponse(resolve(system), input)),
      finishTurn: fromPromise<"continue" | "end" | null, TurnSnapshot>(
        step(async (deps, turn) => {
          const decision = await deps.config.finishTurn!(turnContext(deps, turn), deps.signal);
          return decision?.action === "end" || decision?.action === "continue" ? decision.action : null;
        }),
      ),
      toolCall: toolCallMachine.provide(createToolCallImplementations(resolve)),
    },
  };
}

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
