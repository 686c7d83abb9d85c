/**
 * Starts one run: builds the run's dependencies, provides the machine with them, bridges its
 * emitted events to the sink, and settles with the messages the run added. Never rejects for
 * tool, hook or provider failures; rejects only when the sink itself throws (R56).
 *
 * The pieces (`createRunDeps`, `runInput`, `failureEvents`/`endAfterDefect`, `afterDelivery`)
 * are exported because the Agent's session machine invokes the same provided run machine, one run
 * after another in one actor system, and must build and end its runs exactly as `startRun` does.
 */
import { createActor, type Actor, type InspectionEvent, type Observer } from "xstate";
import type { AgentContext, AgentEvent, AgentEventSink, AgentLoopConfig, AgentMessage, StreamFn } from "../types.js";
import { runMachine } from "../../machines/run.machine.js";
import { EventQueue } from "../bridge/event-queue.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { failureMessage, type HookFlags, type RunContext, type RunInput } from "../loop/run-context.js";
import { errorText } from "../loop/tool-results.js";
import { createRunImplementations } from "../actors/implementations.js";
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

/** What one run's actor implementations close over, besides the machine's own context. */
export interface RunDepsArgs {
  config: AgentLoopConfig;
  streamFn: StreamFn;
  /** The run's own signal (the caller's signal only feeds it). */
  signal: AbortSignal;
  events: EventQueue;
  tools: ToolRegistry;
  /** The run actor's current context; read lazily, when a tool hook asks for its context. */
  context: () => RunContext;
}

export function createRunDeps(args: RunDepsArgs): RunDeps {
  const { config, tools } = args;
  return {
    config,
    streamFn: args.streamFn,
    signal: args.signal,
    events: args.events,
    tools,
    streamOptions: streamOptionsOf(config),
    apiKey: { next: undefined },
    hookContext: () => {
      const context = args.context();
      return { assistantMessage: context.turn.assistant!, context: { messages: context.messages, tools: tools.list } };
    },
  };
}

export interface RunInputArgs {
  /** Prompts (R1), or `null` to continue (R2). Copied. */
  prompts: AgentMessage[] | null;
  /** The transcript so far. Copied. */
  messages: AgentMessage[];
  tools: ToolRegistry;
  config: AgentLoopConfig;
  skipInitialSteeringPoll?: boolean;
}

/** The run machine's input: plain data only (no functions, no API key). */
export function runInput(args: RunInputArgs): RunInput {
  const { config } = args;
  return {
    prompts: args.prompts ? args.prompts.slice() : null,
    messages: args.messages.slice(),
    ...args.tools.data,
    model: config.model,
    thinkingLevel: config.reasoning ?? "off",
    toolExecution: config.toolExecution ?? "parallel",
    hooks: hookFlags(config),
    skipInitialSteeringPoll: args.skipInitialSteeringPoll,
  };
}

/** Calls `then` once every event pushed so far has been delivered (at once when none is pending). */
export function afterDelivery(events: EventQueue, then: () => void): void {
  const settled = events.settled();
  if (settled) void settled.then(then);
  else then();
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
      // Settle first: stopping the actor completes it, and its observer would resolve the run.
      finish(() => reject(error));
      controller.abort(error);
      actor?.stop();
    });

    const tools = new ToolRegistry(args.context.tools);
    const deps = createRunDeps({ config, streamFn, signal: controller.signal, events, tools, context: () => actor!.getSnapshot().context });

    actor = createActor(providedRunMachine(), {
      input: runInput({
        prompts: args.prompts,
        messages: args.context.messages,
        tools,
        config,
        skipInitialSteeringPoll: options?.skipInitialSteeringPoll,
      }),
      inspect: options?.inspect,
    });
    bindDeps(actor.system, deps);
    actor.on("*", (event) => void events.push(event));
    actor.subscribe({
      complete: () => {
        const messages = actor!.getSnapshot().output ?? [];
        afterDelivery(events, () => finish(() => resolve(messages)));
      },
      // A defect in the runtime itself: still end the run with a normal event sequence (R55).
      error: (error) => {
        controller.abort(error);
        const messages = endAfterDefect(events, actor!.getSnapshot().context, error);
        afterDelivery(events, () => finish(() => resolve(messages)));
      },
    });
    options?.onActor?.(actor);
    actor.start();
  });
}

/**
 * R55: the events that close a run whose runtime failed, from its last context: `turn_start` if
 * no turn is open, the assistant failure message, `turn_end`, and `agent_end` with every message
 * of the run. `messages` is what the run added, failure message included.
 */
export function failureEvents(context: RunContext, error: unknown): { events: AgentEvent[]; messages: AgentMessage[] } {
  const message = failureMessage(context, errorText(error));
  const messages = context.newMessages.concat(message);
  const events: AgentEvent[] = [];
  if (!context.turn.open) events.push({ type: "turn_start" });
  events.push({ type: "message_start", message }, { type: "message_end", message });
  events.push({ type: "turn_end", message, toolResults: [] });
  events.push({ type: "agent_end", messages });
  return { events, messages };
}

/** Pushes `failureEvents` to the run's queue; returns the messages the run added. */
export function endAfterDefect(events: EventQueue, context: RunContext, error: unknown): AgentMessage[] {
  const failure = failureEvents(context, error);
  for (const event of failure.events) events.push(event);
  return failure.messages;
}
