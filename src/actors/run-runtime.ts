/**
 * What one run's steps need that is not plain data: the caller's functions, the clock, the tool
 * functions, the ordered path to the event sink, the abort signal and the API key in flight. It
 * lives outside the machine (SPEC R14: nothing but plain data in context, input and snapshots),
 * one per run actor, found by the run's step worker by the run's key (`RunHosts`), so any number
 * of runs share one provided machine and one actor system.
 */
import type { AnyActorLogic, AnyActorRef } from "xstate";
import type { AgentContext, AgentEventSink, AnyAgentEvent, AgentLoopConfig, AgentRunOptions, AssistantMessage, Model, StreamFn, StreamOptions } from "../types.js";
import { keepHeaders } from "../protocol/model-headers.js";
import { EventQueue } from "../bridge/event-queue.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { answerToolOf } from "../loop/output-tool.js";
import { systemClock, systemRandom, type Clock, type RandomSource } from "../loop/clock.js";
import { streamOptionsOf } from "../loop/stream-options.js";
import { routeEvents, type RuntimeEventSink } from "../loop/runtime-events.js";
import type { RequestSlotRelease } from "../loop/request-limiter.js";
import type { JobExecutor } from "./job-executor.js";
import type { JobJournal } from "./job-journal.js";
import type { RunContext } from "../../machines/run.types.js";

export type { AgentRunOptions };

/**
 * How a runtime starts sub-agents: the embedded run logic and its event stream (src/api/run-logic.ts).
 * Handed to each run's runtime by its host (`RunRuntimeArgs.subAgents`): the actors, which the
 * run logic depends on, never import it back.
 */
export interface SubAgentLauncher {
  /** How deep the runs it starts nest (a run's own sub-agents: 1); `runSubAgent` refuses past MAX_SUB_AGENT_DEPTH. */
  readonly depth: number;
  logic(options: AgentRunOptions): AnyActorLogic;
  events(ref: AnyActorRef): { subscribe(next: (event: AnyAgentEvent) => void): { unsubscribe(): void } };
}


/**
 * The hooks and options a runtime reads. A run's is an `AgentLoopConfig`; `runToolCall`'s host has
 * only the tool hooks (its steps never read the rest).
 */
export type RuntimeConfig = AgentLoopConfig | Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall">;

export interface RunRuntime {
  /** The run actor (or `runToolCall`'s host) the runtime serves. */
  readonly owner: AnyActorRef;
  readonly config: Partial<AgentLoopConfig>;
  readonly streamFn: StreamFn;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly executor: JobExecutor | undefined;
  /** The config's stream options (everything that is not a hook or a loop setting), computed once per run. */
  readonly streamOptions: StreamOptions;
  readonly tools: ToolRegistry;
  readonly events: EventQueue;
  /** The run's signal (R29): aborted by `abort()`, by a sink failure, or by the caller's signal. */
  readonly signal: AbortSignal;
  /**
   * Whether the run's signal aborted, read without making it: the signal is made when first read
   * (most runs never need one, and an AbortController costs ~4 µs on Node 20).
   */
  readonly aborted: boolean;
  /** Aborts the run's signal and tells the run (`run.abort`); idempotent. */
  abort(reason?: unknown): void;
  /** Aborts the signal only: the run already knows (its worker calls this on `run.abort`). */
  abortSignal(reason?: unknown): void;
  /** The key `getApiKey` resolved for the next request; cleared once used. Never in a machine. */
  apiKey: { next: string | undefined };
  /** R14: the headers of the run's models (`config.model`'s, a hook's), which the machine's models do not carry. */
  modelHeaders: Map<string, NonNullable<Model["headers"]>> | undefined;
  /** The request limiter's slot held for the next request (`awaitingRequestSlot`); released when its response ended. */
  requestSlot: { held: RequestSlotRelease | undefined };
  /** What tool hooks see: the message that issued the calls and the current context. */
  hookContext(): { assistantMessage: AssistantMessage; context: AgentContext };
  /** Calls whose `tool_execution_start` was emitted (R55: each gets a result even if the run fails). */
  readonly startedCalls: Set<string>;
  /** What `context.runSubAgent` starts (R14); absent where a host runs no sub-agents. */
  readonly subAgents: SubAgentLauncher | undefined;
  /** R80: the run's journal, bound before the run starts (`bindJobJournal`); its worker reports to it. */
  journal: JobJournal | undefined;
}


export interface RunRuntimeArgs extends Omit<AgentRunOptions, "config"> {
  config: RuntimeConfig;
  /** The registry the run's input was built from (built from `tools` when absent). */
  registry?: ToolRegistry;
  /** The run actor (or `runToolCall`'s host). */
  owner: AnyActorRef;
  sink: AgentEventSink;
  /** Where the loop's own events go (R66), after `config.onRuntimeEvent`: the Agent's opted-in listeners, an embedded run's channel. */
  runtimeSink?: RuntimeEventSink;
  /** The sink threw (R56): the run's signal is already aborted; `abortedBefore`: it was before the throw (R29). */
  onSinkFailure(error: unknown, abortedBefore: boolean): void;
  /** A caller's signal the run follows. */
  signal?: AbortSignal;
  /** What a tool's `context.runSubAgent` starts (src/api/sub-agents.ts). */
  subAgents?: SubAgentLauncher;
  /** What tool hooks see instead of the run's (`runToolCall`: the caller's message and context). */
  hookContext?: RunRuntime["hookContext"];
}

export function createRunRuntime(args: RunRuntimeArgs): RunRuntime {
  return new HostedRuntime(args);
}

/**
 * One run's runtime. A class, not an object literal: its accessors and methods live on the
 * prototype, so every run's runtime shares one hidden class (a literal with getters got a map of
 * its own per run, and each of its closures a context: ~1.5 KB more per run in flight).
 */
class HostedRuntime implements RunRuntime {
  readonly owner: AnyActorRef;
  readonly config: Partial<AgentLoopConfig>;
  readonly streamFn: StreamFn;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly executor: JobExecutor | undefined;
  readonly streamOptions: StreamOptions;
  readonly tools: ToolRegistry;
  readonly events: EventQueue;
  readonly apiKey: { next: string | undefined } = { next: undefined };
  modelHeaders: RunRuntime["modelHeaders"] = undefined;
  readonly requestSlot: { held: RequestSlotRelease | undefined } = { held: undefined };
  readonly startedCalls = new Set<string>();
  readonly subAgents: SubAgentLauncher | undefined;
  journal: JobJournal | undefined = undefined;
  /**
   * The run's AbortController, made when first needed (most runs never read their signal, and one
   * costs ~4 µs on Node 20). In an object of its own, so a runtime that delegates to this one
   * (`Object.create(runtime)`, as a test wiring does) shares it.
   */
  private readonly own: { controller: AbortController | undefined } = { controller: undefined };
  private readonly hooked: RunRuntime["hookContext"] | undefined;

  constructor(args: RunRuntimeArgs) {
    const { owner, config } = args;
    this.owner = owner;
    this.config = config;
    this.streamFn = args.streamFn;
    this.clock = args.clock ?? systemClock;
    this.random = args.random ?? systemRandom;
    this.executor = args.executor;
    // R14: the model's headers stay here (its input's model has none).
    if ("model" in config) {
      this.streamOptions = streamOptionsOf(config);
      if (config.model?.headers !== undefined) keepHeaders(this, config.model);
    } else this.streamOptions = {};
    this.subAgents = args.subAgents;
    this.hooked = args.hookContext;
    const snapshot = owner.getSnapshot() as { context?: Partial<RunContext> } | undefined;
    const restored = snapshot?.context;
    const tools = (this.tools = args.registry ?? new ToolRegistry(args.tools, answerToolOf(config)));
    // R13: a restored run resolves the tools its snapshot names (those a hook installed included).
    // A new run's names are the registry's own (its input was built from it): nothing to resolve.
    if (restored?.toolSet) {
      const names = restored.toolSet.tools.map((tool) => tool.decl.name);
      if (!resolvesAs(tools, names)) tools.restore(names, args.tools ?? []);
    }
    const events = (this.events = new EventQueue(routeEvents(args.sink, runtimeSinkOf(config, args.runtimeSink)), (error) => {
      const abortedBefore = this.signal?.aborted === true;
      this.abort(error);
      args.onSinkFailure(error, abortedBefore);
    }));
    const { startedCalls } = this;
    // The machine's own events join the steps' events in the one ordered queue. A start the machine
    // emits (R70: a streamed call's) marks the call started, as a preflight's does (R55).
    owner.on("*", (event) => {
      if (event.type === "tool_execution_start") startedCalls.add((event as { toolCallId: string }).toolCallId);
      void events.push(event as AnyAgentEvent);
    });
    if (restored?.aborted) this.controller().abort();
    const external = args.signal;
    if (external?.aborted) this.abort(external.reason);
    else external?.addEventListener("abort", () => this.abort(external.reason), { once: true });
  }

  private controller(): AbortController {
    return (this.own.controller ??= new AbortController());
  }

  get signal(): AbortSignal {
    return this.controller().signal;
  }

  get aborted(): boolean {
    return this.own.controller?.signal.aborted ?? false;
  }

  abort(reason?: unknown): void {
    if (this.own.controller?.signal.aborted) return;
    this.controller().abort(reason);
    if (this.owner.getSnapshot().status === "active") this.owner.send({ type: "run.abort" });
  }

  abortSignal(reason?: unknown): void {
    this.controller().abort(reason);
  }

  hookContext(): { assistantMessage: AssistantMessage; context: AgentContext } {
    if (this.hooked) return this.hooked();
    const context = (this.owner.getSnapshot() as { context: RunContext }).context;
    return { assistantMessage: context.turn.assistant!, context: { messages: context.messages, tools: this.tools.list } };
  }
}

/**
 * Whether `tools.restore(names, …)` would leave the registry as it is: it lists the tools of those
 * names in that order, each the one the name resolves to (the first of that name).
 */
function resolvesAs(tools: ToolRegistry, names: readonly string[]): boolean {
  const list = tools.list;
  return list.length === names.length && list.every((tool, i) => tool.name === names[i] && tools.find(tool.name) === tool);
}

/** R66: the config's `onRuntimeEvent`, then the host's own runtime sink, each awaited in turn. */
function runtimeSinkOf(config: RuntimeConfig, host: RuntimeEventSink | undefined): RuntimeEventSink | undefined {
  const own = "onRuntimeEvent" in config ? config.onRuntimeEvent : undefined;
  if (!own || !host) return own ?? host;
  return (event) => {
    const first = own(event);
    return first ? first.then(() => host(event)) : host(event);
  };
}
