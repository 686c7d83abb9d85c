/**
 * The Agent's side of its session machine: what each run needs that is not plain data (its abort
 * controller, event queue, tools and hooks), the implementations behind the machine's
 * placeholders, and the promise `prompt()`/`continue()` return. One run at a time: the machine
 * takes `RUN` only when idle.
 */
import type { ActorRefFrom, ActorSystem, AnyActorRef } from "xstate";
import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, StreamFn } from "../types.js";
import type { runMachine } from "../../machines/run.machine.js";
import type { QueueName, SessionEvent } from "../../machines/session.machine.js";
import { EventQueue } from "../bridge/event-queue.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { initialRunContext, type RunContext, type RunInput } from "../loop/run-context.js";
import { bindDeps } from "../actors/system-deps.js";
import { createRunDeps, endAfterDefect, failureEvents, runInput } from "../api/start-run.js";

type RunRef = ActorRefFrom<typeof runMachine>;

/** Delivers one event to the Agent: its state first, then every listener, in order (R51). */
export type AgentDispatch = (event: AgentEvent, signal: AbortSignal) => Promise<void>;

/** What the Agent hands over to start a run. */
export interface RunPlan {
  config: AgentLoopConfig;
  streamFn: StreamFn;
  tools: readonly AgentTool[];
  /** The transcript the run starts from. */
  messages: AgentMessage[];
  /** Prompts (R1), or `null` to continue (R2). */
  prompts: AgentMessage[] | null;
  skipInitialSteeringPoll: boolean;
  dequeue?: { queue: QueueName; count: number };
}

/** The session actor as the runtime uses it. */
export interface SessionHost {
  send(event: SessionEvent): void;
  readonly system: ActorSystem<any>;
}

interface ActiveRun {
  input: RunInput;
  controller: AbortController;
  events: EventQueue;
  /** The invoked run actor; undefined if it failed before it could be observed. */
  actor: RunRef | undefined;
  /** Messages whose `message_end` the Agent has delivered, in order. */
  ended: AgentMessage[];
  /** Set when a listener threw (R55). */
  sinkFailure: { error: unknown } | undefined;
  /** Set when delivering the failure events threw again: `prompt()` then rejects with it. */
  rejection: { error: unknown } | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
  done: Promise<void>;
}

export class SessionRuntime {
  private active: ActiveRun | undefined;

  constructor(
    private readonly host: SessionHost,
    private readonly dispatch: AgentDispatch,
    /** Called when the session is idle again, before `prompt()` settles. */
    private readonly onIdle: () => void,
  ) {}

  /** The current run's abort signal. */
  get signal(): AbortSignal | undefined {
    return this.active?.controller.signal;
  }

  /** Settles when the current run (if any) and its listeners are done; never rejects. */
  idle(): Promise<void> {
    return this.active ? this.active.done.then(noop, noop) : Promise.resolve();
  }

  /**
   * Binds the run's dependencies to the session's actor system and sends `RUN`. Resolves when
   * the session is idle again; rejects only when a listener threw and then threw again on the
   * failure events (the reference does the same).
   */
  start(plan: RunPlan): Promise<void> {
    const controller = new AbortController();
    const tools = new ToolRegistry(plan.tools);
    const input = runInput({
      prompts: plan.prompts,
      messages: plan.messages,
      tools,
      config: plan.config,
      skipInitialSteeringPoll: plan.skipInitialSteeringPoll,
    });
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const run: ActiveRun = {
      input,
      controller,
      events: undefined as unknown as EventQueue,
      actor: undefined,
      ended: [],
      sinkFailure: undefined,
      rejection: undefined,
      ...settle,
      done,
    };
    run.events = new EventQueue(
      (event) => {
        if (event.type === "message_end") run.ended.push(event.message);
        return this.dispatch(event, controller.signal);
      },
      (error) => this.sinkFailed(run, error),
    );
    // Runs are sequential, so the session's one system carries the current run's dependencies.
    bindDeps(
      this.host.system,
      createRunDeps({ config: plan.config, streamFn: plan.streamFn, signal: controller.signal, events: run.events, tools, context: () => contextOf(run) }),
    );
    this.active = run;
    this.host.send({ type: "RUN", input, ...(plan.dequeue ? { dequeue: plan.dequeue } : {}) });
    return done;
  }

  // --- The session machine's implementations -------------------------------------------------

  observeRun(ref: AnyActorRef | undefined): void {
    const run = this.active;
    if (!run || !ref) return;
    run.actor = ref as RunRef;
    run.actor.on("*", (event) => void run.events.push(event));
  }

  abortRun(): void {
    this.active?.controller.abort();
  }

  /** R55: the run actor failed; close the run through its own queue, after what it emitted. */
  endAfterDefect(error: unknown): void {
    const run = this.active;
    if (!run) return;
    run.controller.abort(error);
    endAfterDefect(run.events, contextOf(run), error);
  }

  settleEvents(): Promise<void> {
    return this.active?.events.settled() ?? Promise.resolve();
  }

  /**
   * R55: a listener threw; the run is stopped. The failure events go to the listeners directly,
   * and `agent_end` lists the messages whose `message_end` they were given (the run's context may
   * not have appended the last one yet), plus the failure message.
   */
  async emitFailure(): Promise<void> {
    const run = this.active;
    if (!run) return;
    const { events } = failureEvents({ ...contextOf(run), newMessages: run.ended }, run.sinkFailure?.error);
    try {
      for (const event of events) await this.dispatch(event, run.controller.signal);
    } catch (error) {
      run.rejection = { error };
    }
  }

  finishRun(): void {
    const run = this.active;
    if (!run) return;
    this.active = undefined;
    this.onIdle();
    if (run.rejection) run.reject(run.rejection.error);
    else run.resolve();
  }

  /** The session actor itself failed (a defect in this runtime): release whoever waits. */
  crash(error: unknown): void {
    const run = this.active;
    if (!run) return;
    this.active = undefined;
    run.controller.abort(error);
    this.onIdle();
    run.reject(error);
  }

  private sinkFailed(run: ActiveRun, error: unknown): void {
    if (run !== this.active) return;
    run.sinkFailure = { error };
    // As in startRun (R56): running tools see the abort.
    run.controller.abort(error);
    this.host.send({ type: "SINK_FAILED" });
  }
}

/** The run's latest context; its input's initial context if the actor never got going. */
function contextOf(run: ActiveRun): RunContext {
  return run.actor?.getSnapshot().context ?? initialRunContext(run.input);
}

function noop(): void {}
