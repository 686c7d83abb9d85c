/**
 * The run machine's implementations over one run's dependencies: each invoked actor waits for
 * the event sink to settle (the emit barrier), then calls the app's hook. Hooks' replacement
 * state is turned into plain data here; executable tools stay in the registry.
 */
import { fromPromise } from "xstate";
import type { AgentContext, AgentLoopTurnUpdate, AgentMessage, Message, Model, ThinkingLevel } from "../types.js";
import type { RequestInput, StateUpdate, TurnSnapshot, TurnUpdate } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { createToolCallImplementations } from "./tool-call-actors.js";
import { streamResponse } from "./stream-response.js";
import { normalizeTranscript } from "../loop/normalize.js";
import type { RunDeps } from "./run-deps.js";

export function createRunImplementations(deps: RunDeps) {
  const { config, events, signal } = deps;
  const contextOf = (messages: AgentMessage[]): AgentContext => ({ messages, tools: deps.tools.list });
  const turnContext = (turn: TurnSnapshot) => ({
    message: turn.message,
    toolResults: turn.toolResults,
    context: contextOf(turn.messages),
    newMessages: turn.newMessages,
  });
  /** A hook's `{context, model, thinkingLevel}` as plain data; a new tool set goes to the registry. */
  const stateUpdate = (update: AgentLoopTurnUpdate | undefined | void): StateUpdate => {
    if (!update) return {};
    const plain: StateUpdate = {};
    if (update.context) {
      plain.messages = update.context.messages.slice();
      plain.toolSet = deps.tools.replace(update.context.tools ?? []);
    }
    if (update.model) plain.model = update.model;
    if (update.thinkingLevel) plain.thinkingLevel = update.thinkingLevel;
    return plain;
  };
  const poll = (hook: (() => Promise<AgentMessage[]>) | undefined) =>
    fromPromise<AgentMessage[]>(async () => {
      await events.settled();
      return (await hook!()) ?? [];
    });

  return {
    actors: {
      getSteeringMessages: poll(config.getSteeringMessages),
      getFollowUpMessages: poll(config.getFollowUpMessages),
      prepareNextTurn: fromPromise<TurnUpdate, TurnSnapshot>(async ({ input }) => {
        await events.settled();
        const update = await config.prepareNextTurn!(turnContext(input), signal);
        const plain: TurnUpdate = stateUpdate(update);
        if (update?.messages?.length) plain.prepared = update.messages.slice();
        return plain;
      }),
      prepareRequest: fromPromise<StateUpdate, RequestInput>(async ({ input }) => {
        await events.settled();
        return stateUpdate(
          await config.prepareRequest!(
            { context: contextOf(input.messages), model: input.model, thinkingLevel: input.thinkingLevel },
            signal,
          ),
        );
      }),
      transformContext: fromPromise<AgentMessage[], { messages: AgentMessage[] }>(async ({ input }) => {
        await events.settled();
        return config.transformContext!(input.messages, signal);
      }),
      convertToLlm: fromPromise<Message[], { messages: AgentMessage[] }>(async ({ input }) => {
        await events.settled();
        return normalizeTranscript(await config.convertToLlm(input.messages));
      }),
      resolveApiKey: fromPromise<void, { provider: string }>(async ({ input }) => {
        await events.settled();
        // R40: falls back to config.apiKey; the key stays in the runtime, out of the machine.
        deps.apiKey.next = (await config.getApiKey!(input.provider)) ?? undefined;
      }),
      streamResponse: fromPromise<
        import("../types.js").AssistantMessage,
        { messages: Message[]; model: Model; thinkingLevel: ThinkingLevel }
      >(({ input }) => streamResponse(deps, input)),
      finishTurn: fromPromise<"continue" | "end" | null, TurnSnapshot>(async ({ input }) => {
        await events.settled();
        const decision = await config.finishTurn!(turnContext(input), signal);
        return decision?.action === "end" || decision?.action === "continue" ? decision.action : null;
      }),
      toolCall: toolCallMachine.provide(createToolCallImplementations(deps)),
    },
  };
}
