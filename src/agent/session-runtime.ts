/**
 * The Agent's side of its session machine: what each run needs that is not plain data (its hooks,
 * tools, stream function and the Agent's listeners), the implementations behind the machine's
 * placeholders, and the promise `prompt()`/`continue()` return. One run at a time: the machine
 * takes `run.start` only when idle. While a run is in progress the runtime is served in
 * `SessionHosts` under its key (`context.host` of its session), where the session machine's actions
 * and actors find it, and the run's runtime in `RunHosts` under the run's key (R14).
 */
import { subAgents } from "../api/sub-agents.js";
import type { AnyActorRef } from "xstate";
import type { AgentEvent, AnyAgentEvent, AgentLoopConfig, AgentMessage, AgentTool, StreamFn, Usage } from "../types.js";
import { addMessageUsage } from "../../machines/session.helpers.js";
import type { QueueName, SessionEvent } from "../../machines/session.machine.js";
import type { RunContext, RunInput, TraceOrigin } from "../../machines/run.types.js";
import { initialRunContext } from "../../machines/run.helpers.js";
import { answerToolOf } from "../loop/output-tool.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { systemClock, type Clock, type RandomSource } from "../loop/clock.js";
import { createRunRuntime, type RunRuntime } from "../actors/run-runtime.js";
import type { RunHosts } from "../api/run-hosts.js";
import { endAfterDefect, failureEvents } from "../api/start-run.js";
import { runInput } from "../api/run-input.js";
import { toPlainData } from "../loop/plain-data.js";
import { journalRun, newJournaledRun, resumedRun, type DurableOptions, type JournaledRun, type LiveAt, type UnfinishedRun } from "../durable/durable-run.js";
import type { SessionWriter } from "../store/run-store.js";
import type { QueueRecord } from "../durable/records.js";
import type { LedgerDelivery } from "../durable/delivery.js";
import type { SessionHosts, SessionServices } from "./session-actors.js";
import { sendToSession } from "./session-steps.js";

/**
 * What the runtime calls on the session's owner (the Agent), given the owner: one object serves
 * every Agent, where two closures per Agent did (issue 40.5).
 */
export interface SessionOwner<O> {
  /**
   * Delivers one event to the Agent: its state first, then every listener, in order (R51).
   * `delivery` (a durable run, R81): the event's sequence number; `skipped`: a resumed run's event
   * delivered before the crash (or before the consumer's `after`): the Agent's state only, no listener.
   */
  dispatch(owner: O, event: AnyAgentEvent, signal: AbortSignal, delivery?: LedgerDelivery): Promise<void> | undefined;
  /** The session is idle again, before `prompt()` settles. */
  idle(owner: O): void;
}

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
  /** R80: journal the run into this store session. */
  durable?: DurableOptions;
  /** R84: the session's writer the Agent holds (the run journals with it and leaves it held). */
  writer?: SessionWriter;
  /**
   * R81: the run is the stored session's unfinished one: its journaled input and the records after
   * its start; `onLive` is called once its journal has no more records (what follows runs for real).
   */
  resumed?: { unfinished: UnfinishedRun; onLive?: (live: LiveAt) => void; after?: number | "journal" };
  /** R110: the new run's trace (its span, started ahead by a tracing observer), for its input. */
  trace?: TraceOrigin;
  /**
   * Issue 40: the session records the run's messages with its output, at its end, not one step per
   * `message_end` (see `deferredEnds`). Not for a resumed run.
   */
  deferEnds?: boolean;
}

/** The session actor as the runtime uses it. */
export interface SessionHost extends AnyActorRef {
  send(event: SessionEvent): void;
}

interface ActiveRun {
  plan: RunPlan;
  /** The run's input as journaled (its key, `host`, is given to the actor only). */
  input: RunInput;
  /** The run's key in `RunHosts`. */
  host: string;
  /** The tools the input was built from; the run's runtime resolves calls with the same. */
  registry: ToolRegistry;
  /** Created when the run's worker starts; until then an abort is remembered. */
  runtime: RunRuntime | undefined;
  actor: AnyActorRef | undefined;
  abortRequested: boolean;
  /** R80: the run's journal, when the Agent is durable. */
  durable: JournaledRun | undefined;
  /** Messages whose `message_end` the Agent has delivered, in order. */
  ended: AgentMessage[];
  /** The session records `ended` at the run's end, not as each ends (see `deferredEnds`). */
  deferEnds: boolean;
  /** `plan.messages` followed by `ended`, as last made (`transcriptOf`). */
  joined: AgentMessage[] | undefined;
  /** R55: what else the listeners were given: whether a turn is open; this turn's calls they saw start, end and answered. */
  seen: { turnOpen: boolean | undefined; started: Set<string>; ended: Set<string>; answered: Set<string> };
  /** Set when delivering the failure events threw again: `prompt()` then rejects with it. */
  rejection: { error: unknown } | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
  done: Promise<void>;
}

export class SessionRuntime<O = unknown> implements SessionServices {
  /** This runtime's key in `sessions`: its session's `context.host`. */
  readonly key: string;
  private active: ActiveRun | undefined;
  /** The journal of the run that ended last, until the Agent saved its quiet point (R80). */
  private finished: JournaledRun | undefined;
  /** Timestamps of the runs' inputs and of R55's failure message. */
  private readonly clock: Clock;

  private host: SessionHost | undefined;

  constructor(
    private readonly hosts: { sessions: SessionHosts; runs: RunHosts },
    host: SessionHost | undefined,
    private readonly owner: O,
    private readonly port: SessionOwner<O>,
    clock?: Clock,
    private readonly random?: RandomSource,
  ) {
    this.clock = clock ?? systemClock;
    this.key = hosts.sessions.newKey();
    if (host) this.attach(host);
  }

  /** Delivers one event to the owner (see `SessionOwner.dispatch`). */
  private dispatch(event: AnyAgentEvent, signal: AbortSignal, delivery?: LedgerDelivery): Promise<void> | undefined {
    return this.port.dispatch(this.owner, event, signal, delivery);
  }

  /** The session actor this runtime serves from now on (an Agent makes a new one when it wakes from idle). */
  attach(host: SessionHost): void {
    this.host = host;
  }

  /** The session actor is dropped (an idle Agent keeps none). */
  detach(): void {
    this.host = undefined;
  }

  private get session(): SessionHost {
    if (!this.host) throw new Error("agent: the session runtime has no session actor");
    return this.host;
  }

  /** The injected clock's time (R13): when an approval decision was taken. */
  now(): number {
    return this.clock.now();
  }

  /** The current run's abort signal. */
  get signal(): AbortSignal | undefined {
    return this.active?.runtime?.signal;
  }

  /** Settles when the current run (if any) and its listeners are done; never rejects. */
  idle(): Promise<void> {
    return this.active ? this.active.done.then(noop, noop) : Promise.resolve();
  }

  /** Sends `run.start`. Resolves when the session is idle again; rejects only when a listener threw twice (as the reference). */
  start(plan: RunPlan): Promise<void> {
    const done = this.activate(plan);
    // R84: a durable run takes the session's lock now, so a session another live process holds is
    // this call's `SessionLockedError` (nothing written), not a run that dies as it starts.
    try {
      this.active!.durable = journaledRun(this.active!);
    } catch (error) {
      this.retire();
      return Promise.reject(error);
    }
    const { input, host } = this.active!;
    const start: Extract<SessionEvent, { type: "run.start" }> = { type: "run.start", input, host };
    if (plan.dequeue) start.dequeue = plan.dequeue;
    sendToSession(this.session, start);
    return done;
  }

  /**
   * R13: a restored session's run in flight gets its runtime from `plan` when its worker starts;
   * `messages` are what it added before the snapshot (as if delivered here).
   */
  resume(plan: RunPlan, messages: AgentMessage[]): Promise<void> {
    // The restored run's key, given to it by `rehostedSession`.
    const done = this.activate(plan, (this.runActor()?.getSnapshot() as { context?: RunContext } | undefined)?.context?.host);
    this.active!.ended.push(...messages);
    return done;
  }

  private activate(plan: RunPlan, host = this.hosts.runs.newKey()): Promise<void> {
    const registry = new ToolRegistry(plan.tools, answerToolOf(plan.config));
    const input = (plan.resumed?.unfinished.run.input as RunInput | undefined) ?? runInput({
      prompts: plan.prompts,
      messages: plan.messages,
      tools: registry,
      config: plan.config,
      startedAt: this.clock.now(),
      skipInitialSteeringPoll: plan.skipInitialSteeringPoll,
    });
    if (plan.trace && !plan.resumed) input.trace = plan.trace;
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    this.active = { plan, input, host, registry, runtime: undefined, actor: undefined, abortRequested: false, durable: undefined, ended: [], deferEnds: plan.deferEnds === true && !plan.resumed, joined: undefined, seen: { turnOpen: undefined, started: new Set(), ended: new Set(), answered: new Set() }, rejection: undefined, ...settle, done };
    this.hosts.sessions.serve(this.key, this);
    this.hosts.runs.serve(host, () => this.runtimeFor(this.runActor()!));
    return done;
  }

  /**
   * Issue 40: while the session's transcript is still the one the run started from (`messages`),
   * the run's messages that ended so far, which the session records with the run's output at its
   * end (`adoptRunOutput`) rather than a step per `message_end`; undefined when it recorded them
   * (the run ended, or `recordEnds`), or records each as it ends.
   */
  deferredEnds(messages: readonly AgentMessage[]): AgentMessage[] | undefined {
    const run = this.active;
    return run?.deferEnds && messages === run.plan.messages ? run.ended : undefined;
  }

  /** The transcript as the listeners have it: the session's `messages` and the run's deferred ends. */
  transcriptOf(messages: AgentMessage[]): AgentMessage[] {
    const run = this.active;
    const ended = this.deferredEnds(messages);
    if (!run || !ended || ended.length === 0) return messages;
    if (run.joined?.length !== messages.length + ended.length) run.joined = messages.concat(ended);
    return run.joined;
  }

  /** The usage totals as the listeners have them: the session's `usage` and what the run's deferred ends cost. */
  usageOf(messages: readonly AgentMessage[], usage: Usage): Usage {
    const ended = this.deferredEnds(messages);
    return ended ? ended.reduce(addMessageUsage, usage) : usage;
  }

  /**
   * The session records the run's deferred ends now, in one step, and each later one as it ends:
   * before its transcript changes otherwise mid-run (a compaction, a discarded message, the app's
   * own), a listener fails (R55), or the app takes the actor or a snapshot.
   */
  recordEnds(): void {
    const run = this.active;
    if (!run?.deferEnds) return;
    run.deferEnds = false;
    run.joined = undefined;
    const messages = (this.host?.getSnapshot() as { context?: { messages?: unknown } } | undefined)?.context?.messages;
    if (messages === run.plan.messages && run.ended.length > 0) sendToSession(this.session, { type: "run.messagesEnd", messages: run.ended.slice() });
  }

  /** The session's run actor (its invoked child `run`), if it has one. */
  private runActor(): AnyActorRef | undefined {
    return (this.host?.getSnapshot() as { children?: { run?: AnyActorRef } } | undefined)?.children?.run;
  }

  /** No run in progress: the session machine's implementations have nothing to find here. */
  private retire(): void {
    // (The run's worker closed its key when it stopped; a run that never started has one still.)
    if (this.active) this.hosts.runs.close(this.active.host);
    this.active = undefined;
    this.hosts.sessions.retire(this.key);
  }

  /** The runtime of the session's run actor `owner`, built from the current plan. */
  private runtimeFor(owner: AnyActorRef): RunRuntime {
    const run = this.active;
    if (!run) throw new Error("agent: a run started without a plan");
    run.actor = owner;
    const durable = (run.durable ??= journaledRun(run));
    let runtime: RunRuntime;
    runtime = createRunRuntime({
      owner,
      config: run.plan.config,
      streamFn: run.plan.streamFn,
      tools: run.plan.tools,
      registry: run.registry,
      clock: this.clock,
      ...(this.random ? { random: this.random } : {}),
      subAgents,
      sink: (event) => {
        given(run, event);
        return this.dispatch(event, runtime.signal, durable?.delivery());
      },
      runtimeSink: (event) => this.dispatch(event, runtime.signal, durable?.delivery()),
      onSinkFailure: (error, abortedBefore) => this.sinkFailed(run, error, abortedBefore),
    });
    run.runtime = runtime;
    durable?.attach(runtime, owner, undefined, run.plan.tools, (error) => this.crash(error));
    // An abort that came before the run's worker: the run is told now (R29), the journal first (R80).
    if (run.abortRequested) {
      if (durable) durable.abort(runtime);
      else runtime.abort();
    }
    durable?.started();
    return runtime;
  }

  // --- The session machine's implementations -------------------------------------------------

  abortRun(): void {
    const run = this.active;
    if (!run) return;
    run.abortRequested = true;
    this.abortRuntime(run);
  }

  /**
   * R29: the session machine tells the run itself (a send after its step, not nested in this
   * action), so only the signal is aborted here; a durable run journals the abort first (R80).
   */
  private abortRuntime(run: ActiveRun): void {
    if (!run.runtime) return;
    if (run.durable) run.durable.abort(run.runtime);
    else run.runtime.abortSignal();
  }

  /** The journal of the run that ended last (once): the Agent saves its idle snapshot with it and lets it go (R80). */
  takeFinishedJournal(): JournaledRun | undefined {
    const finished = this.finished;
    this.finished = undefined;
    return finished;
  }

  /** R80: journals a queue change in the journal of the run that holds the session (false: none does). */
  journalQueue(record: QueueRecord): boolean {
    const journaled = this.active?.durable ?? this.finished;
    if (!journaled) return false;
    journaled.queued(record);
    return true;
  }

  /** R55: the run actor failed; close the run through its own queue, after what it emitted. */
  endAfterDefect(error: unknown): void {
    const run = this.active;
    if (!run?.runtime) return;
    run.runtime.abort(error);
    endAfterDefect(run.runtime, contextOf(run), error);
  }

  /** Settles when every event of the current run has been delivered; undefined when none is pending. */
  settleEvents(): Promise<void> | undefined {
    return this.active?.runtime?.events.settled();
  }

  /** R55: a listener threw; the run is stopped and these events (see `sinkFailed`) go to the listeners directly. */
  async emitFailure(events: AgentEvent[]): Promise<void> {
    const run = this.active;
    if (!run) return;
    const signal = run.runtime?.signal ?? new AbortController().signal;
    try {
      for (const event of events) await this.dispatch(event, signal);
    } catch (error) {
      run.rejection = { error };
    }
  }

  finishRun(): void {
    const run = this.active;
    if (!run) return;
    this.retire();
    if (run.durable) {
      run.durable.ended(contextOf(run).newMessages);
      this.finished = run.durable;
    }
    this.port.idle(this.owner);
    if (run.rejection) run.reject(run.rejection.error);
    else run.resolve();
  }

  /** The session actor itself failed (a defect in this runtime): release whoever waits. */
  crash(error: unknown): void {
    const run = this.active;
    if (!run) return;
    this.retire();
    run.durable?.abandon();
    run.runtime?.abort(error);
    this.port.idle(this.owner);
    run.reject(error);
  }

  /**
   * R55: a listener threw. The failure events are fixed now, as plain data the session keeps: the
   * started calls' results, the failure message, `turn_end`, and `agent_end` listing the messages
   * whose `message_end` the listeners were given (the run's context may not have appended the last
   * one yet), plus the failure message.
   */
  private sinkFailed(run: ActiveRun, error: unknown, abortedBefore: boolean): void {
    if (run !== this.active) return;
    // The run's context may be ahead of them (a turn closed, results appended, not yet delivered).
    const context = contextOf(run);
    // (A run restored mid-turn whose listeners got no turn event here yet: its context says.)
    const turnOpen = run.seen.turnOpen ?? context.turn.open;
    this.recordEnds();
    // R29: the run ends aborted only if the app had aborted it before the listener threw (the throw aborts it too).
    const { events } = failureEvents({ ...context, newMessages: run.ended }, error, this.clock.now(), { ...run.seen, turnOpen }, abortedBefore ? "aborted" : "error");
    sendToSession(this.session, { type: "sink.failed", events: toPlainData(events) });
  }
}

/** Notes what an event gives the listeners, before they get it (one that throws on it was given it). */
function given(run: ActiveRun, event: AgentEvent): void {
  const { seen } = run;
  switch (event.type) {
    case "message_end":
      run.ended.push(event.message);
      if (event.message.role === "toolResult") seen.answered.add(event.message.toolCallId);
      break;
    case "turn_start":
      // Call ids are unique within a turn, not across turns.
      seen.turnOpen = true;
      seen.started.clear();
      seen.ended.clear();
      seen.answered.clear();
      break;
    case "turn_end":
      seen.turnOpen = false;
      break;
    case "tool_execution_start":
      seen.started.add(event.toolCallId);
      break;
    case "tool_execution_end":
      seen.ended.add(event.toolCallId);
      break;
  }
}

/** R80, R81: the run's journal: a new one for a durable plan, or the stored session's for a resumed run. */
function journaledRun(run: ActiveRun): JournaledRun | undefined {
  const { durable, resumed, writer } = run.plan;
  if (!durable) return undefined;
  // The Agent's own writer, lent to the run: the run's end does not give the session up (R84).
  const lent = writer ? { ...writer, release: () => {} } : undefined;
  if (!resumed) return lent ? newJournaledRun(lent, run.input, run.plan.config) : journalRun(durable, run.input, run.plan.config);
  return resumedRun(lent ?? durable.store.openSession(durable.sessionId, { create: false }), resumed.unfinished, { after: resumed.after, onLive: resumed.onLive });
}

/** The run's latest context; its input's initial context if the actor never got going. */
function contextOf(run: ActiveRun): RunContext {
  return (run.actor?.getSnapshot() as { context?: RunContext } | undefined)?.context ?? initialRunContext(run.input);
}

function noop(): void {}
