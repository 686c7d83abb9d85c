/**
 * Starts one run: builds the run's dependencies, provides the machine with them, bridges its
 * emitted events to the sink, and settles with the messages the run added. Never rejects for
 * tool, hook or provider failures; rejects only when the sink itself throws (R56).
 */
import { createActor, type Actor, type InspectionEvent, type Observer } from "xstate";
import type { AgentContext, AgentEventSink, AgentLoopConfig, AgentMessage, StreamFn } from "../types.js";
import { runMachine } from "../../machines/run.machine.js";
import { EventQueue } from "../bridge/event-queue.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { failureMessage, type HookFlags, type RunContext } from "../loop/run-context.js";
import { createRunImplementations } from "../actors/run-actors.js";
import { streamOptionsOf, type RunDeps } from "../actors/run-deps.js";
import { bindDeps, depsOf } from "../actors/system-deps.js";

export type RunActor = Actor<typeof runMachine>;

/** Runtime options beyond the reference's signature. */
export interface RunOptions {
  /** Any XState inspection observer (e.g. from `xstate-agent-loop/inspect`). */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** `Agent.continue()` already drained the steering queue (R52). */
  skipInitialSteeringPoll?: boolean;
  /** Called with the actor before it starts (embedding, tests). */
  onActor?: (actor: RunActor) => void;
}

export interface StartRunArgs {
  prompts: AgentMessage[] | null;
  context: AgentContext;
  config: AgentLoopConfig;
  sink: AgentEventSink;
  signal: AbortSignal | undefined;
  streamFn: StreamFn;
  options?: RunOptions;
}

let provided: typeof runMachine | undefined;

/** The run machine with the default runtime's implementations, provided once per process. */
export function providedRunMachine(): typeof runMachine {
  return (provided ??= runMachine.provide(createRunImplementations(depsOf)));
}

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
  };
}

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
}

export function startRun(args: StartRunArgs): Promise<AgentMessage[]> {
  const { config, streamFn, options } = args;
  const controller = new AbortController();
  const external = args.signal;
  const followAbort = () => controller.abort(external?.reason);
  if (external?.aborted) controller.abort(external.reason);
  else external?.addEventListener("abort", followAbort, { once: true });

  return new Promise<AgentMessage[]>((resolve, reject) => {
    let actor: RunActor | undefined;
    let finished = false;
    const finish = (settle: () => void) => {
      if (finished) return;
      finished = true;
      external?.removeEventListener("abort", followAbort);
      settle();
    };

    // R56: a sink that throws is the caller's bug: running tools are aborted and the run rejects.
    const events = new EventQueue(args.sink, (error) => {
      controller.abort(error);
      actor?.stop();
      finish(() => reject(error));
    });

    const tools = new ToolRegistry(args.context.tools);
    const deps: RunDeps = {
      config,
      streamFn,
      signal: controller.signal,
      events,
      tools,
      streamOptions: streamOptionsOf(config),
      apiKey: { next: undefined },
      hookContext: () => {
        const context = actor!.getSnapshot().context;
        return { assistantMessage: context.assistant!, context: { messages: context.messages, tools: tools.list } };
      },
    };

    actor = createActor(providedRunMachine(), {
      input: {
        prompts: args.prompts ? args.prompts.slice() : null,
        messages: args.context.messages.slice(),
        ...tools.data,
        model: config.model,
        thinkingLevel: config.reasoning ?? "off",
        toolExecution: config.toolExecution ?? "parallel",
        hooks: hookFlags(config),
        skipInitialSteeringPoll: options?.skipInitialSteeringPoll,
      },
      inspect: options?.inspect,
    });
    bindDeps(actor.system, deps);
    actor.on("*", (event) => void events.push(event));
    actor.subscribe({
      complete: () => {
        const messages = actor!.getSnapshot().output ?? [];
        const settled = events.settled();
        if (settled) settled.then(() => finish(() => resolve(messages)));
        else finish(() => resolve(messages));
      },
      // A defect in the runtime itself: still end the run with a normal event sequence (R55).
      error: (error) => {
        const context = actor!.getSnapshot().context;
        controller.abort(error);
        endAfterDefect(events, context, error);
        const messages = context.newMessages.concat(failureMessage(context, errorMessage(error)));
        const settled = events.settled();
        if (settled) settled.then(() => finish(() => resolve(messages)));
        else finish(() => resolve(messages));
      },
    });
    options?.onActor?.(actor);
    actor.start();
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function endAfterDefect(events: EventQueue, context: RunContext, error: unknown): void {
  const message = failureMessage(context, errorMessage(error));
  if (!context.turnOpen) events.push({ type: "turn_start" });
  events.push({ type: "message_start", message });
  events.push({ type: "message_end", message });
  events.push({ type: "turn_end", message, toolResults: [] });
  events.push({ type: "agent_end", messages: context.newMessages.concat(message) });
}
