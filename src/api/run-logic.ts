/**
 * Embedding a run (SPEC R14): `createAgentRunLogic({ streamFn, tools, config })` is XState actor
 * logic an app invokes or spawns in its own statechart, any number at once in one actor system.
 *
 * - Input is plain data: `{ prompts?, messages, continue?, forwardEvents? }` (prompts → R1,
 *   `continue: true` → R2). Output: the messages the run added (R12).
 * - The hooks, tools and stream function stay in the logic (closed over here), never in context.
 * - AgentEvents: `agentEvents(actorRef)` observes every one, in order, stream deltas and tool
 *   updates included (its first subscriber from the run's first event, even after the run started:
 *   see `RunEventChannel`); with `forwardEvents: true` each also goes to the parent actor as
 *   `{ type: "agent.event", id, event }`. (`actorRef.on(...)` sees only the events of the machine's
 *   own transitions: deltas, tool updates and a preflight's events come from its steps, so that
 *   they never cost a macrostep, a snapshot or inspector traffic each.)
 * - Restore (R13): `createActor(createAgentRunLogic(sameOptions), { snapshot })`; steps in flight
 *   are issued again (see `machines/steps.ts`).
 */
import { NEVER, type Observable } from "rxjs";
import type { Actor, AnyActorLogic, AnyActorRef, SnapshotFrom, StateMachine } from "xstate";
import type { AnyAgentEvent, AgentMessage, ApprovalRule } from "../types.js";
import { AgentInputError } from "../boundary/errors.js";
import { RestoreError } from "../loop/restore-error.js";
import type { runMachine } from "../../machines/run.machine.js";
import type { RunContext } from "../../machines/run.types.js";
import { createRunRuntime, type AgentRunOptions, type RunRuntime, type SubAgentLauncher } from "../actors/run-runtime.js";
import type { RunInput } from "../../machines/run.types.js";
import { journalRun, numberEvents, recordingJournal, type DurableOptions } from "../durable/durable-run.js";
import { DeliveryLedger, type EventDelivery } from "../durable/delivery.js";
import type { JournalWriter } from "../durable/run-journal.js";
import { bindJobJournal } from "../actors/steps-worker.js";
import { provideRunMachine } from "../actors/implementations.js";
import { ToolRegistry } from "../loop/tool-registry.js";
import { answerToolOf } from "../loop/output-tool.js";
import { systemClock } from "../loop/clock.js";
import { RunHosts, rehostedRun } from "./run-hosts.js";
import { runInput } from "./run-input.js";
import { RunEventChannel } from "./run-event-channel.js";
import { checkRunArguments } from "./check-arguments.js";
import { checkLoopSettings } from "../boundary/run-arguments.js";
import { checkModel } from "../boundary/model.js";
import { checkTools } from "../boundary/tools.js";
import { checkMessages } from "../boundary/messages.js";
import { describeValue, isRecord } from "../boundary/describe-value.js";

/** What an embedded run starts from. */
export interface AgentRunInput {
  /** New prompt messages (R1). */
  prompts?: AgentMessage[];
  /** The transcript so far. */
  messages: AgentMessage[];
  /** Continue from `messages` without a prompt (R2). */
  continue?: boolean;
  /** Also send each AgentEvent to the parent actor as `{ type: "agent.event", event }`. */
  forwardEvents?: boolean;
  /**
   * R82 for a host that runs one session's runs one after another: the prefix of this run's
   * approval ids (so ids stay unique within the session; default `approval-`) and the session's
   * "always allow" rules so far. The run's own rules, those included, are in its final snapshot
   * (`context.approval.rules`) for the next run.
   */
  approval?: { idPrefix?: string; rules?: ApprovalRule[] };
}

/** What a parent actor receives with `forwardEvents: true`: `id` is the run actor's id. */
export interface AgentEventForward {
  type: "agent.event";
  id: string;
  event: AnyAgentEvent;
}

/** The run machine, taking the public `AgentRunInput` (the logic resolves the rest from its options). */
export type AgentRunLogic = WithInput<typeof runMachine, AgentRunInput>;

type WithInput<M, I> =
  M extends StateMachine<infer C, infer E, infer Ch, infer A, infer Ac, infer G, infer D, infer S, infer T, unknown, infer O, infer Em, infer Me, infer Co>
    ? StateMachine<C, E, Ch, A, Ac, G, D, S, T, I, O, Em, Me, Co>
    : never;

/**
 * Each embedded run's event channel, by the run's key (`context.host`, unique in the process):
 * made with the run actor (so `agentEvents` works before it starts), dropped when its worker stops.
 */
const channels = new Map<string, RunEventChannel>();

/** Closes the key of a run actor collected while its key was open (created, never started: no worker closes it). */
const neverStarted = new FinalizationRegistry<{ hosts: RunHosts; key: string }>(({ hosts, key }) => hosts.close(key));

/**
 * Every AgentEvent of an embedded run, in order (none once it ended). The run's first subscriber
 * gets them from the run's first event, also when it subscribes after the run started (an invoked
 * or spawned run starts with its parent), unless the run emitted more than 1,000 events before;
 * later subscribers get them from the moment they subscribe.
 */
export function agentEvents(ref: AnyActorRef): Observable<AnyAgentEvent> {
  const host = (ref.getSnapshot() as { context?: { host?: unknown } } | undefined)?.context?.host;
  return (typeof host === "string" && channels.get(host)?.events) || NEVER;
}

/** SPEC R80: an embedded run's journal: `durable` journals each run actor made from this logic (not one restored from a snapshot). */
export interface DurableRunOptions extends AgentRunOptions {
  durable?: DurableOptions;
  /**
   * R80, R83 without a store: each run actor made from this logic appends its journal's records
   * (the same records a store holds, for `replayRun`) to this writer: no lock, no snapshot, no
   * resume (a durable-execution engine keeps those; the Restate session object writes them into its
   * state). A writer that throws stops the run actor.
   */
  journalTo?: JournalTarget;
}

/** Where a `journalTo` run records: a writer, and the session's event count before the run (R81's numbering continues from it). */
export interface JournalTarget extends JournalWriter {
  readonly eventBase?: number;
  /** R81: told the run's numbering when the run starts recording (the writer's owner numbers its log by it). */
  numberedBy?(delivery: RecordedRunDelivery): void;
}

/** R81 for a `journalTo` run: its events' numbering, as the embedded store numbers them. */
export interface RecordedRunDelivery {
  /** The event being delivered now (call it from the event's subscriber). */
  current(): EventDelivery;
  /** The number the next event gets. */
  nextSeq(): number;
  /** Retracts the provisional events from `fromSeq` on (a response re-requested after a crash): journaled, then `message_discarded`. */
  retract(fromSeq: number): void;
}

/**
 * The options are checked here, at the call (a malformed one is an `AgentInputError`, a missing
 * `streamFn`/`convertToLlm`/`model` a `TypeError`, as `agentLoop`'s). Each run's input is checked
 * when its actor is created: a malformed one fails the actor with an `AgentInputError` when it starts.
 */
export function createAgentRunLogic(options: DurableRunOptions): AgentRunLogic {
  return runLogicAt(options, 0);
}

/** What a run at sub-agent depth `depth` starts its sub-agents with (its own runs are at `depth`). */
export function subAgentLauncher(depth: number): SubAgentLauncher {
  return { depth, logic: (options) => runLogicAt(options, depth), events: agentEvents };
}

/** `createAgentRunLogic` for runs nested `depth` sub-agents deep (0: the app's own). */
function runLogicAt(options: DurableRunOptions, depth: number): AgentRunLogic {
  checkRunLogicOptions(options);
  const clock = options.clock ?? systemClock;
  // The runtimes of this logic's runs, by key: each run actor made from it gets one, served until its worker stops.
  const hosts = new RunHosts();
  const provided = provideRunMachine(hosts);
  /**
   * Serves the runtime of the run actor `owner` under a new key (made when its worker starts; `input`: journal it).
   * The worker closes the key when it stops; an actor that is never started has no worker, so what
   * is served holds the actor weakly and the key is closed when the actor is collected.
   */
  const host = (owner: AnyActorRef, input: RunInput | undefined): string => {
    const key = hosts.newKey();
    const channel = new RunEventChannel();
    channels.set(key, channel);
    const ref = new WeakRef(owner);
    // The worker runs inside the actor: it is alive when its worker asks for its runtime.
    hosts.serve(key, () => embeddedRuntime(ref.deref()!, channel, options, input, depth), () => channels.delete(key));
    neverStarted.register(owner, { hosts, key });
    return key;
  };
  // The machine's input is its own plain-data RunInput; an embedding app gives the public
  // AgentRunInput, resolved here against the options (model, hooks, tools' declarations).
  const logic = Object.create(provided) as AgentRunLogic;
  logic.getInitialSnapshot = ((scope: unknown, given: unknown) => {
    // Thrown here, XState keeps the error as the new actor's (status "error"): `start()` reports it
    // to the actor's error observers, an invoking parent's `onError` and `toPromise`.
    const input = checkedRunInput(given);
    const prompts = input.continue ? null : (input.prompts ?? []);
    const messages = input.messages;
    checkRunArguments(prompts, { messages, tools: options.tools as never }, options.config, options.streamFn);
    const resolved = runInput({
      prompts,
      messages,
      tools: new ToolRegistry(options.tools, answerToolOf(options.config)),
      config: options.config,
      startedAt: clock.now(),
      forwardEvents: input.forwardEvents,
    });
    const approval = checkedApprovalInput(input.approval);
    if (approval) resolved.approval = approval;
    const key = host((scope as { self: AnyActorRef }).self, options.durable || options.journalTo ? resolved : undefined);
    return provided.getInitialSnapshot(scope as never, { ...resolved, host: key });
  }) as unknown as AgentRunLogic["getInitialSnapshot"];
  // R13: a restored run is served under a key of its own (not journaled: see `DurableRunOptions`).
  // A tool the snapshot names that the options lack is found where the snapshot is handed in, and
  // thrown when the actor starts: XState makes a throw from `start` the actor's error (status
  // "error", the invoking parent's `onError`, `toPromise` rejects). Not thrown from
  // `restoreSnapshot`: a child restored with its parent in error is never started, so the parent
  // would never hear of it. (Found by the run's worker, as before, it failed only the worker: the run hung.)
  // (Kept by the restored snapshot object, which XState hands back to `start`.)
  const refused = new WeakMap<object, RestoreError>();
  logic.restoreSnapshot = ((snapshot: unknown, scope: { self: AnyActorRef }) => {
    const error = restoreProblem(snapshot, options);
    const restored = provided.restoreSnapshot(rehostedRun(snapshot as never, host(scope.self, undefined)), scope as never);
    if (error) refused.set(restored, error);
    return restored;
  }) as unknown as AgentRunLogic["restoreSnapshot"];
  logic.start = ((snapshot: object) => {
    const error = refused.get(snapshot);
    if (error) throw error;
    provided.start!(snapshot as never);
  }) as unknown as AgentRunLogic["start"];
  return logic;
}

/** R13: the `RestoreError` the run's runtime would throw for a tool the snapshot names that `options` do not provide. */
function restoreProblem(snapshot: unknown, options: AgentRunOptions): RestoreError | undefined {
  const toolSet = (snapshot as { context?: Partial<RunContext> } | null | undefined)?.context?.toolSet;
  if (!toolSet || !Array.isArray(toolSet.tools)) return undefined;
  try {
    new ToolRegistry(options.tools, answerToolOf(options.config)).restore(
      toolSet.tools.map((tool) => tool.decl.name),
      options.tools ?? [],
    );
    return undefined;
  } catch (error) {
    if (error instanceof RestoreError) return error;
    throw error;
  }
}

/** The run's input, or an `AgentInputError` naming the field (as `agentLoop` refuses its arguments). */
function checkedRunInput(input: unknown): AgentRunInput {
  if (!isRecord(input)) throw new AgentInputError("input", `the run's input must be { messages, prompts?, continue?, forwardEvents?, approval? }, got ${describeValue(input)}`);
  for (const flag of ["continue", "forwardEvents"] as const) {
    const value = input[flag];
    if (value !== undefined && typeof value !== "boolean") throw new AgentInputError(`input.${flag}`, `input.${flag} must be a boolean, got ${describeValue(value)}`);
  }
  checkMessages(input.messages, "input.messages");
  if (input.continue !== true && input.prompts !== undefined) checkMessages(input.prompts, "input.prompts");
  return input as unknown as AgentRunInput;
}

/** The options of `createAgentRunLogic`, checked at the call, in `agentLoop`'s order: what a run needs, then the shapes. */
function checkRunLogicOptions(options: DurableRunOptions): void {
  if (!isRecord(options)) throw new AgentInputError("options", `createAgentRunLogic's options must be { streamFn, config, tools? }, got ${describeValue(options)}`);
  checkRunArguments([], { messages: [], tools: options.tools as never }, options.config, options.streamFn);
  checkTools(options.tools, "tools");
  checkModel(options.config.model, "config.model");
  checkLoopSettings(options.config, "config.");
}

/** `input.approval` as plain data, or an `AgentInputError` naming what is wrong. */
function checkedApprovalInput(approval: AgentRunInput["approval"]): RunInput["approval"] {
  if (approval === undefined) return undefined;
  if (typeof approval !== "object" || approval === null) throw new AgentInputError("input.approval", "input.approval must be { idPrefix?, rules? }");
  const { idPrefix, rules } = approval;
  if (idPrefix !== undefined && typeof idPrefix !== "string") throw new AgentInputError("input.approval.idPrefix", "input.approval.idPrefix must be a string");
  const valid = (rule: unknown): rule is ApprovalRule =>
    typeof rule === "object" && rule !== null && typeof (rule as ApprovalRule).toolName === "string" && ((rule as ApprovalRule).path === undefined || typeof (rule as ApprovalRule).path === "string");
  if (rules !== undefined && !(Array.isArray(rules) && rules.every(valid))) throw new AgentInputError("input.approval.rules", "input.approval.rules must be an array of { toolName, path? }");
  return { ...(idPrefix !== undefined ? { idPrefix } : {}), ...(rules ? { rules: rules.map((rule) => ({ ...rule })) } : {}) };
}

function embeddedRuntime(owner: AnyActorRef, channel: RunEventChannel, options: DurableRunOptions, input: RunInput | undefined, depth: number) {
  const context = (owner.getSnapshot() as SnapshotFrom<typeof runMachine>).context as RunContext;
  const forward = context.settings.forwardEvents ? invokerOf(owner) : undefined;
  const relay = (event: AnyAgentEvent) => {
    channel.next(event);
    forward?.send({ type: "agent.event", id: owner.id, event } satisfies AgentEventForward);
  };
  const runtime = createRunRuntime({
    ...options,
    owner,
    sink: (event) => relay(event),
    runtimeSink: (event) => relay(event),
    // An embedded run's sink is its RunEventChannel, an RxJS Subject, which never throws into its producer.
    onSinkFailure: () => {},
    subAgents: subAgentLauncher(depth + 1),
  });
  if (options.durable && input) journalEmbedded(owner, runtime, options, options.durable, input);
  else if (options.journalTo && input) recordEmbedded(owner, runtime, options, options.journalTo, input);
  return runtime;
}

/**
 * The actor that invoked or spawned `run` (`forwardEvents`): the `parent` option XState created it
 * with (public `ActorOptions.parent`, kept in `actor.options`), not the internal `_parent`.
 */
function invokerOf(run: AnyActorRef): AnyActorRef | undefined {
  return (run as Partial<Pick<Actor<AnyActorLogic>, "options">>).options?.parent;
}

/** R80: records an embedded run into `writer` from its first step to its `end` record. */
function recordEmbedded(owner: AnyActorRef, runtime: RunRuntime, options: AgentRunOptions, writer: JournalTarget, input: RunInput): void {
  const base = writer.eventBase ?? 0;
  const journal = recordingJournal(writer, input, options.config ?? {}, base);
  journal.attach(runtime, owner);
  bindJobJournal(runtime, journal);
  // R81: numbered, flagged and retracted as the embedded store's runs are.
  const ledger = new DeliveryLedger(base, base + 1);
  numberEvents(runtime, journal, ledger, false);
  writer.numberedBy?.({
    current: () => {
      const { seq, provisional } = ledger.current();
      return { seq, provisional };
    },
    nextSeq: () => ledger.nextSeq,
    retract: (fromSeq) => journal.retract(fromSeq),
  });
  journal.hooks.onFailure = () => owner.stop();
  owner.subscribe({
    complete: () => {
      const snapshot = owner.getSnapshot() as SnapshotFrom<typeof runMachine>;
      if (snapshot.status === "done") journal.end((snapshot.output as AgentMessage[] | undefined) ?? []);
    },
    error: () => {},
  });
  journal.started();
}

/** R80: journals an embedded run from its first step; its end saves the quiet point. A store that fails stops the run (the actor errors). */
function journalEmbedded(owner: AnyActorRef, runtime: RunRuntime, options: AgentRunOptions, durable: DurableOptions, input: RunInput): void {
  const journaled = journalRun(durable, input, options.config);
  journaled.attach(runtime, owner, undefined, options.tools ?? [], () => {
    journaled.abandon();
    owner.stop();
  });
  owner.subscribe({
    complete: () => {
      const snapshot = owner.getSnapshot() as SnapshotFrom<typeof runMachine>;
      // Stopped before its end (the app persisted it, R13): the journal stays resumable.
      if (snapshot.status !== "done") return journaled.abandon();
      journaled.end((snapshot.output as AgentMessage[] | undefined) ?? [], (snapshot.context as RunContext).messages);
    },
    error: () => journaled.abandon(),
  });
  journaled.started();
}
