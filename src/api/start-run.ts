/**
 * The `agentLoop` entry points' host: creates one run actor from the shared run logic, serves its
 * runtime (config, sink, signal) under the run's key before it starts, and settles with the messages the run
 * added once the sink has seen every event. Never rejects for tool, hook or provider failures;
 * rejects only when the sink itself throws (R56).
 */
import { subAgents } from "./sub-agents.js";
import { createActor, type Actor } from "xstate";
import type { AgentContext, AgentEvent, AgentEventSink, AgentLoopConfig, AgentMessage, StreamFn } from "../types.js";
import { runMachine } from "../../machines/run.machine.js";
import type { RunContext } from "../../machines/run.types.js";
import { answerableBatch, failureMessage } from "../../machines/run.helpers.js";
import { errorText, abortedResult, toolResultMessage } from "../loop/tool-results.js";
import { answerToolOf } from "../loop/output-tool.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { systemClock, type Clock, type RandomSource } from "../loop/clock.js";
import { createRunRuntime, type RunRuntime } from "../actors/run-runtime.js";
import { provideRunMachine } from "../actors/implementations.js";
import type { EventQueue } from "../bridge/event-queue.js";
import { RunHosts } from "./run-hosts.js";
import { runInput } from "./run-input.js";
import { guardedInspect, TraceOrigins, type InspectOption } from "../boundary/inspect-observer.js";
import type { RunInput } from "../../machines/run.types.js";
import { journalRun, type DurableOptions, type JournaledRun } from "../durable/durable-run.js";

export { checkRunArguments } from "./check-arguments.js";

export type RunActor = Actor<typeof runMachine>;

/** Runtime options beyond the reference's signature. */
export interface RunOptions {
  /**
   * Any XState inspection observer (e.g. from `xstate-agent-loop/inspect`), or several, each
   * isolated from the others' failures. An attachable one (`otelObserver`) may attach nothing.
   */
  inspect?: InspectOption;
  /** `Agent.continue()` already drained the steering queue (R52). */
  skipInitialSteeringPoll?: boolean;
  /** Called with the actor before it starts (embedding, tests). */
  onActor?: (actor: RunActor) => void;
  /** The run's clock and random source (R13). */
  clock?: Clock;
  random?: RandomSource;
  /** SPEC R80: journal the run into `store` under `sessionId` (its single writer while it runs, R84); `resumeAgentLoop` continues it after a crash. */
  durable?: DurableOptions;
}

export interface StartRunArgs {
  prompts: AgentMessage[] | null;
  context: AgentContext;
  config: AgentLoopConfig;
  sink: AgentEventSink;
  signal: AbortSignal | undefined;
  streamFn: StreamFn;
  options?: RunOptions;
  /** A resumed run (src/durable): its journaled input, and the journal that answers its steps until it goes live (R81). */
  resumed?: { input: RunInput; run: JournaledRun };
}

/** A run machine provided once, and the runtimes of its runs, by key (served by whoever starts each run). */
export interface HostedRuns {
  machine: typeof runMachine;
  hosts: RunHosts;
}

let shared: HostedRuns | undefined;

/** The process's hosted runs (`agentLoop`'s and the Agents' sessions'): provided once, so any number of runs share one machine. */
export function hostedRuns(): HostedRuns {
  if (!shared) {
    const hosts = new RunHosts();
    shared = { machine: provideRunMachine(hosts), hosts };
  }
  return shared;
}

export function hostedRunMachine(): typeof runMachine {
  return hostedRuns().machine;
}

/** Calls `then` once every event pushed so far has been delivered (at once when none is pending). */
export function afterDelivery(events: EventQueue, then: () => void): void {
  const settled = events.settled();
  if (settled) void settled.then(then);
  else then();
}

export function startRun(args: StartRunArgs): Promise<AgentMessage[]> {
  const { config, streamFn, options } = args;
  const clock = options?.clock ?? systemClock;
  return new Promise<AgentMessage[]>((resolve, reject) => {
    let finished = false;
    const finish = (settle: () => void) => {
      if (finished) return;
      finished = true;
      settle();
    };
    const tools = new ToolRegistry(args.context.tools, answerToolOf(config));
    const input =
      args.resumed?.input ??
      runInput({
        prompts: args.prompts,
        messages: args.context.messages,
        tools,
        config,
        startedAt: clock.now(),
        skipInitialSteeringPoll: options?.skipInitialSteeringPoll,
      });
    const inspect = options?.inspect === undefined ? undefined : inspectRun(options.inspect, input, args.resumed);
    // R80: a durable run journals from its first step (a resumed one once its records ran out).
    const durable = args.resumed?.run ?? (options?.durable ? journalRun(options.durable, input, config) : undefined);
    const { machine, hosts } = hostedRuns();
    const host = hosts.newKey();
    // (Not `{ ...input, host }`: on Node 20 a literal that begins with a spread and adds a key got a
    // hidden class of its own per run, and every read of the input in the machine went megamorphic.)
    // A new run's input is its own (built above): the key goes into it. A resumed run's is its
    // journal's, and a durable run's journal holds it: those get a copy with the key.
    let hosted = input;
    if (args.resumed || durable) hosted = Object.assign({}, input, { host });
    else input.host = host;
    const actor: RunActor = createActor(machine, { input: hosted, inspect });
    const runtime = createRunRuntime({
      owner: actor,
      config,
      streamFn,
      tools: args.context.tools,
      registry: tools,
      clock,
      random: options?.random,
      subAgents,
      // R81: a durable run's sink is given each event's delivery (sequence number, provisional) too.
      sink: durable ? durable.sinkOf(args.sink) : args.sink,
      // A durable run journals its abort before the run sees it (R80).
      signal: durable ? undefined : args.signal,
      // R56: a sink that throws is the caller's bug: running tools are aborted and the run rejects.
      onSinkFailure: (error) => {
        durable?.abandon();
        // Settle first: stopping the actor completes it, and its observer would resolve the run.
        finish(() => reject(error));
        actor.stop();
      },
    });
    hosts.serve(host, runtime);
    durable?.attach(runtime, actor, args.signal, args.context.tools ?? [], (error) => {
      // R83: the run asked for what its journal does not hold: it cannot go on as recorded.
      durable.abandon();
      finish(() => reject(error));
      actor.stop();
    });
    actor.subscribe({
      complete: () => {
        const messages = actor.getSnapshot().output ?? [];
        durable?.end(messages, actor.getSnapshot().context.messages);
        afterDelivery(runtime.events, () => finish(() => resolve(messages)));
      },
      // A defect in the runtime itself: still end the run with a normal event sequence (R55).
      error: (error) => {
        runtime.abort(error);
        const messages = endAfterDefect(runtime, actor.getSnapshot().context, error);
        durable?.end(messages, actor.getSnapshot().context.messages.concat(messages.slice(actor.getSnapshot().context.newMessages.length)));
        afterDelivery(runtime.events, () => finish(() => resolve(messages)));
      },
    });
    options?.onActor?.(actor);
    actor.start();
    durable?.started();
  });
}

/**
 * The run's observers, attached before its journal's `run` record is written: an observer that
 * traces the run starts its span now and its ids go into the input (R110), so a run resumed or
 * restored elsewhere links to this trace. A resumed run keeps the trace its journal holds.
 */
function inspectRun(option: InspectOption, input: RunInput, resumed: StartRunArgs["resumed"]) {
  const origins = new TraceOrigins();
  const inspect = guardedInspect(option, {
    kind: "run",
    origins,
    ...(resumed ? { replaying: () => resumed.run.journal.replaying, ...(input.trace ? { origin: input.trace } : {}) } : {}),
  });
  if (!resumed) {
    const trace = origins.next();
    if (trace) input.trace = trace;
  }
  return inspect;
}

/**
 * What the listeners were given of a run when it failed (R55): whether a turn is open, and which
 * calls they saw start and end. A runtime defect's events follow everything already pushed, so
 * there it is what the run emitted; a listener that threw saw only the events up to its own.
 */
export interface DeliveredView {
  turnOpen: boolean;
  /** Calls whose `tool_execution_start` went out. */
  started: ReadonlySet<string>;
  /** Calls whose `tool_execution_end` went out; absent: each call with an outcome. */
  ended?: ReadonlySet<string>;
  /** Calls of the open turn whose result message went out; absent: the turn's results in the context. */
  answered?: ReadonlySet<string>;
}

/**
 * R55: the events that close a run whose runtime failed, from its last context and what the
 * listeners were given (`context.newMessages`: the messages whose `message_end` went out): for
 * every started call without a result message, its `tool_execution_end` (unless it went out; an
 * `Operation aborted` result when it has no outcome) and its result message; `turn_start` if no
 * turn is open; the assistant failure message, `turn_end`, and `agent_end` with every message of the run.
 */
export function failureEvents(
  context: RunContext,
  error: unknown,
  at: number,
  seen: DeliveredView,
  // R29: a run aborted before it failed ends aborted, as the machine's `failing` decides.
  ending: "error" | "aborted" = context.aborted ? "aborted" : "error",
): { events: AgentEvent[]; messages: AgentMessage[] } {
  const events: AgentEvent[] = [];
  const added: AgentMessage[] = [];
  const batch = seen.turnOpen ? answerableBatch(context.turn) : null;
  if (batch) {
    const answered = seen.answered ?? new Set(context.turn.toolResults.map((message) => message.toolCallId));
    batch.calls.forEach((call, index) => {
      if (!seen.started.has(call.id) || answered.has(call.id)) return;
      const outcome = batch.outcomes[index];
      const result = outcome?.result ?? abortedResult();
      const ended = seen.ended ? seen.ended.has(call.id) : outcome !== null && outcome !== undefined;
      if (!ended) events.push({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: outcome?.isError ?? true });
      const message = toolResultMessage(call, result, outcome?.isError ?? true, outcome?.durationMs, at);
      events.push({ type: "message_start", message }, { type: "message_end", message });
      added.push(message);
    });
  }
  const message = failureMessage(context, errorText(error), at, ending);
  const messages = context.newMessages.concat(added, message);
  if (!seen.turnOpen) events.push({ type: "turn_start" });
  events.push({ type: "message_start", message }, { type: "message_end", message });
  events.push({ type: "turn_end", message, toolResults: [] });
  events.push({ type: "agent_end", messages, reason: ending });
  return { events, messages };
}

/** Pushes `failureEvents` to the run's queue; returns the messages the run added. */
export function endAfterDefect(runtime: RunRuntime, context: RunContext, error: unknown): AgentMessage[] {
  const failure = failureEvents(context, error, runtime.clock.now(), { turnOpen: context.turn.open, started: runtime.startedCalls });
  for (const event of failure.events) runtime.events.push(event);
  return failure.messages;
}
