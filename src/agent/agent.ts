/**
 * The stateful Agent (SPEC R50–R55), API-compatible with pi-agent-core 1.6's `Agent`, over the
 * session statechart (`machines/session.machine.ts`). The session machine holds the plain data
 * (transcript, model, thinking level, queues, usage) and the lifecycle; this class holds what
 * cannot enter a machine (listeners, hooks, tools, the stream function) and turns method calls
 * into session events.
 *
 * Issue 19: an idle Agent keeps no session actor, only the session's context (plain data); the
 * actor is made again from it when a run starts or an event needs the machine, and dropped when
 * the session is idle again. An Agent with an `inspect` observer, or whose `actor` was asked
 * for, keeps its actor for good (what the inspector or the app holds stays the Agent's actor).
 */
import { createActor, type Actor, type AnyActorRef, type InspectionEvent, type Snapshot } from "xstate";
import { Subject, type Observable } from "rxjs";
import type {
  RetrySettings,
  OutputLimitSettings,
  OutputSettings,
  CompactSettings,
  AnyAgentEvent,
  AgentEndReason,
  RunBudget,
  AgentEvent,
  AgentMessage,
  AgentTool,
  ImageContent,
  Model,
  QueueMode,
  StreamFn,
  ThinkingLevel,
  ToolExecutionMode,
  Usage,
  ApprovalRule,
  ApproveOptions,
  ToolApprovalRequest,
} from "../types.js";
import type { QueueName, sessionMachine, SessionContext, SessionEvent, SessionInput } from "../../machines/session.machine.js";
import { initialSessionContext, nextBatch } from "../../machines/session.machine.js";
import { turnError } from "../../machines/session.helpers.js";
import { replayTranscript } from "../transcript/index.js";
import { idleSnapshot, rehostedSession, sessionHosting } from "./provided-session.js";
import { SessionRuntime, type RunPlan, type SessionOwner } from "./session-runtime.js";
import { redeliverFinishedChildren } from "../actors/finished-children.js";
import { LiveView } from "./live-view.js";
import { TranscriptView } from "./transcript-view.js";
import { detachedSnapshot } from "./detached-snapshot.js";
import { initialTranscript } from "./initial-transcript.js";
import { promptMessages } from "./prompt-input.js";
import { planContinuation, type Continuation } from "./continuation.js";
import { defaultConvertToLlm, LOOP_SETTING_KEYS, loopConfig } from "./loop-config.js";
import { resolveStreamFn } from "../api/default-stream-fn.js";
import type { AgentHooks, AgentListener, AgentOptions, AgentRuntimeListener, AgentState, AgentResumeOptions, SubscribeFromOptions } from "./types.js";
import type { SequencedListener } from "../durable/session-tail.js";
import { isRuntimeEvent } from "../loop/runtime-events.js";
import { countTakenEvent, inSessionStep, sendToSession, sentAndTaken } from "./session-steps.js";
import { checkMessage, checkMessages } from "../boundary/messages.js";
import { checkModel } from "../boundary/model.js";
import { keepHeaders, withHeaders, type HeadersHolder } from "../protocol/model-headers.js";
import { checkPromptInput } from "../boundary/prompt-input.js";
import { checkTools } from "../boundary/tools.js";
import { checkLoopSettings } from "../boundary/run-arguments.js";
import { guardedInspect, TraceOrigins } from "../boundary/inspect-observer.js";
import { checkedApproveOptions, checkedReason, issuedBy, pendingApprovalsOf, waitingCall, type ApprovalScope } from "./approvals.js";
import { ruleOf } from "../../machines/approval.helpers.js";
import { approvalsOf } from "../../machines/session.machine.js";
import type { RunContext } from "../../machines/run.types.js";
import { unfinishedRun } from "../durable/resume.js";
import { checkDurable, type QuietPointSnapshot } from "../durable/durable-run.js";
import { queuesAfter } from "../durable/queue-records.js";
import { asJson, jsonCopy, type QueueRecord } from "../durable/records.js";
import type { EventDelivery, LedgerDelivery } from "../durable/delivery.js";
import { SessionTail, type Subscription } from "../durable/session-tail.js";
import { sessionHead, storedEvents } from "../durable/stored-events.js";
import { AgentInputError } from "../boundary/errors.js";
import type { Json, SessionWriter } from "../store/run-store.js";

export type SessionActor = Actor<typeof sessionMachine>;

/** The reference's placeholder model until one is set. */
export const unknownModel: Model = {
  id: "unknown",
  name: "unknown",
  api: "unknown",
  provider: "unknown",
  baseUrl: "",
  reasoning: false,
  input: [],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
};

/** The messages a restored session's run added so far; undefined when no run actor is left (it ended). */
function resumedRunMessages(session: SessionActor): AgentMessage[] | undefined {
  const run = (session.getSnapshot().children as { run?: { getSnapshot(): { context?: { newMessages?: AgentMessage[] } } } }).run;
  return run?.getSnapshot().context?.newMessages?.slice();
}

/** The options an Agent copies when they are given (the prototype holds the others: `agentDefaults`). */
const OPTION_FIELDS = [
  "convertToLlm",
  "transformContext",
  "getApiKey",
  "beforeToolCall",
  "afterToolCall",
  "finishTurn",
  "prepareRequest",
  "prepareNextTurn",
  "prepareNextTurnWithContext",
  "toolExecution",
  ...LOOP_SETTING_KEYS,
  "sessionId",
  "thinkingBudgets",
  "transport",
  "maxRetryDelayMs",
  "onPayload",
  "onResponse",
  "onProviderStreamEvent",
  "identity",
] as const satisfies readonly (keyof AgentOptions & keyof Agent)[];
type OptionField = (typeof OPTION_FIELDS)[number];

/**
 * Issue 40.5: the defaults of what an Agent keeps as own fields only once set (8 bytes each: ~30
 * options and ten rarely used internals were a third of an idle Agent's heap), on its prototype.
 * Every option stays a member the app can read and set, as on the reference's Agent.
 */
const agentDefaults = {
  ...Object.fromEntries(OPTION_FIELDS.map((key) => [key, undefined])),
  convertToLlm: defaultConvertToLlm,
  toolExecution: "parallel",
  transport: "auto",
  pinned: false,
  actorHeld: false,
  inspect: undefined,
  origins: undefined,
  sequenced: 0,
  tail: undefined,
  transcript: undefined,
  stateObject: undefined,
  events: undefined,
  replay: undefined,
  durable: undefined,
  writer: undefined,
};

export class Agent {
  // Issue 40.5: the options' fields are the prototype's (their defaults, `agentDefaults`) until
  // set: an Agent holds only those it was given or that the app set since.
  // Hooks: settable at any time; each run reads them when it starts.
  declare convertToLlm: AgentHooks["convertToLlm"];
  declare transformContext?: AgentHooks["transformContext"];
  declare getApiKey?: AgentHooks["getApiKey"];
  declare beforeToolCall?: AgentHooks["beforeToolCall"];
  declare afterToolCall?: AgentHooks["afterToolCall"];
  declare finishTurn?: AgentHooks["finishTurn"];
  declare prepareRequest?: AgentHooks["prepareRequest"];
  declare prepareNextTurn?: AgentHooks["prepareNextTurn"];
  declare prepareNextTurnWithContext?: AgentHooks["prepareNextTurnWithContext"];
  /** The provider seam. */
  streamFunction: StreamFn;
  /** Tool execution strategy for a batch of several calls. */
  declare toolExecution: ToolExecutionMode;
  /** SPEC R63: each run's limits; read when a run starts. */
  declare budget?: RunBudget;
  /** SPEC R60–R62, R65, R67: recovery settings, read when a run starts (see `AgentLoopConfig`). */
  declare retry?: RetrySettings;
  declare outputLimit?: OutputLimitSettings;
  declare compact?: CompactSettings;
  declare toolTimeoutMs?: number;
  declare abortGraceMs?: number;
  declare requestLimiter?: AgentOptions["requestLimiter"];
  /** SPEC R70: tools start while the model streams (see `AgentLoopConfig.streamingToolExecution`); read when a run starts. */
  declare streamingToolExecution?: boolean;
  declare maxConcurrentTools?: number;
  /** SPEC R100: each run's structured final answer (see `AgentLoopConfig.output`); read when a run starts. `state.output` holds the last run's. */
  declare output?: OutputSettings;
  // Forwarded to the stream function when set.
  declare sessionId?: AgentOptions["sessionId"];
  declare thinkingBudgets?: AgentOptions["thinkingBudgets"];
  /** "auto" unless given, as the reference's (and so every request carries it). */
  declare transport: NonNullable<AgentOptions["transport"]>;
  declare maxRetryDelayMs?: AgentOptions["maxRetryDelayMs"];
  declare onPayload?: AgentOptions["onPayload"];
  declare onResponse?: AgentOptions["onResponse"];
  declare onProviderStreamEvent?: AgentOptions["onProviderStreamEvent"];
  declare identity?: AgentOptions["identity"];

  /** The session actor while it lives (see the class comment); `parked` otherwise. */
  private live: SessionActor | undefined;
  /** The idle session's context while no actor lives. */
  private parked: SessionContext | undefined;
  private readonly runtime: SessionRuntime<Agent>;
  /** What changes on every delta and tool start/end. */
  private readonly view = new LiveView();
  private tools: AgentTool[];
  private endReason: AgentEndReason | undefined;
  /** R100: the last run's validated final answer. */
  private lastOutput: unknown;
  /** By function, as the reference's Set: a listener subscribed twice is called once, and either unsubscribe removes it. */
  private listeners: Map<AgentRuntimeListener, ListenerEntry> = noListeners;
  // What most Agents never set is the prototype's too (`agentDefaults`), until set.
  /** The actor lives for good: an inspector watches it, or the app holds it. */
  private declare pinned: boolean;
  /** The app took the actor (`actor`): it may read the session's context mid-run, so each message is recorded as it ends. */
  private declare actorHeld: boolean;
  private declare readonly inspect: ((event: InspectionEvent) => void) | undefined;
  /** R110: a tracing observer's run spans, started as each run is planned (their ids go into its input). */
  private declare readonly origins: TraceOrigins | undefined;
  /** R81: listeners subscribed from a sequence number (they get a resumed run's replayed events too). */
  private declare sequenced: number;
  /** R81: a durable session's current run's events by sequence number, for `subscribe(l, { after })`. */
  private declare readonly tail: SessionTail | undefined;
  /** `state.messages`, made when first read. */
  private declare transcript: TranscriptView | undefined;
  /** `state`, made when first read (issue 40: its ten accessors cost a prompt on a new Agent ~3 %). */
  private declare stateObject: AgentState | undefined;
  /** Made when `events$` is first asked for. */
  private declare events: Subject<AgentEvent> | undefined;
  private declare replay: { messages: AgentMessage[]; length: number; systemPrompt: string } | undefined;
  /** R80: where the runs are journaled, if anywhere. */
  private declare readonly durable: AgentOptions["durable"];
  /** R84: the durable session's writer, held from the Agent's first use of the session until `release()` (or the process ends). */
  private declare writer: SessionWriter | undefined;
  /** R14: the headers of the session's models, which its context's models do not carry. */
  private declare headers: HeadersHolder | undefined;
  /** The model as the app reads it (`state.model`): the object it gave, while the session keeps its headerless copy. */
  private declare modelView: { kept: Model; full: Model } | undefined;
  static {
    Object.assign(this.prototype, agentDefaults);
  }

  /**
   * SPEC R13: an Agent from a snapshot taken with `getPersistedSnapshot()` (JSON round trips are
   * fine), with fresh options: its transcript, queues, usage and, when it was persisted mid-run,
   * the run itself. The run resumes at once: steps in flight are issued again (R13's replay rule
   * for tools); `waitForIdle()` settles when it ends. Options' hooks, tools and stream function
   * replace the originals (tools resolve by name).
   */
  static restore(snapshot: unknown, options: AgentOptions): Agent {
    return new Agent(options, snapshot);
  }

  /** Throws a `TypeError` when `options.streamFn` is absent and no default is set (`setDefaultStreamFn`). */
  constructor(options: AgentOptions = {}, restored?: unknown) {
    // Resolved first, so a missing stream function fails here rather than at the first prompt().
    this.streamFunction = resolveStreamFn(options.streamFn);
    const initial = options.initialState ?? {};
    if (initial.model !== undefined) checkModel(initial.model, "initialState.model");
    checkTools(initial.tools, "initialState.tools");
    if (initial.messages !== undefined) checkMessages(initial.messages, "initialState.messages");
    checkLoopSettings(options, "");
    // (Unset, an option is its default on the prototype: `agentDefaults`.)
    for (const key of OPTION_FIELDS) {
      const value = options[key];
      if (value !== undefined) (this as Record<OptionField, unknown>)[key] = value;
    }
    this.tools = (initial.tools ?? []).slice();
    const sessionId = options.sessionId ?? (options.durable as { sessionId?: string } | undefined)?.sessionId;
    // Only an inspected Agent can have a tracing observer to start its runs' traces (an idle Agent keeps no more).
    if (options.inspect !== undefined) {
      this.origins = new TraceOrigins();
      this.inspect = guardedInspect(options.inspect, { kind: "session", origins: this.origins, ...(typeof sessionId === "string" ? { sessionId } : {}) });
      this.pinned = true;
    }
    if (options.durable !== undefined) {
      checkDurable(options.durable, "options.durable");
      this.durable = options.durable;
      this.tail = sessionTail(options.durable);
    }

    this.runtime = new SessionRuntime(sessionHosting(), undefined, this, agentAsOwner, options.clock, options.random);
    const input: SessionInput = {
      host: this.runtime.key,
      messages: initialTranscript(initial.systemPrompt, this.tools, initial.messages ?? []),
      model: this.plainModel(initial.model ?? unknownModel),
      thinkingLevel: initial.thinkingLevel ?? "off",
      steeringMode: options.steeringMode,
      followUpMode: options.followUpMode,
    };
    if (restored === undefined && !this.pinned) {
      this.parked = initialSessionContext(input);
      return;
    }
    const session = this.wake(restored !== undefined ? { snapshot: detachedSnapshot(restored), input } : { input }, false);
    // R13: a session persisted mid-run resumes that run with this Agent's hooks, tools and stream function.
    const busy = restored !== undefined && !session.getSnapshot().matches("idle");
    const resumed = busy ? resumedRunMessages(session) : undefined;
    if (busy) {
      this.runtime
        .resume(this.runPlan({ prompts: null, skipInitialSteeringPoll: false }), resumed ?? [])
        .catch(() => {})
        .finally(() => this.park());
    }
    session.start();
    if (resumed) session.send({ type: "run.resume", messages: resumed });
    if (restored !== undefined) redeliverFinishedChildren(session);
    this.park();
  }

  /** A session actor, from a snapshot or input (the parked context when neither is given), bound to this Agent's runtime; started unless `start` is false. */
  private wake(from: { snapshot: Snapshot<unknown>; input: SessionInput } | { input: SessionInput } | undefined, start = true): SessionActor {
    const parked = this.parked;
    const session = createActor(sessionHosting().machine, {
      id: "session",
      input: from ? from.input : ({ context: parked } as SessionInput),
      // A parked session wakes idle with its context as it is (issue 40: no initial step); R13: a
      // persisted session is served by this Agent's runtime.
      snapshot: from === undefined ? idleSnapshot(parked!) : "snapshot" in from ? rehostedSession(from.snapshot, this.runtime.key, sessionHosting().runs) : undefined,
      ...(this.inspect ? { inspect: this.inspect } : {}),
    });
    this.runtime.attach(session);
    // Without an error observer a failed root actor rethrows asynchronously and crashes the process.
    session.subscribe({ next: countTakenEvent, error: (error) => this.runtime.crash(error) });
    if (this.transcript) this.follow(session);
    this.live = session;
    this.parked = undefined;
    if (start) session.start();
    return session;
  }

  /** The live session actor, made from the parked context if there is none. */
  private get session(): SessionActor {
    return this.live ?? this.wake(undefined);
  }

  /** Drops the actor of an idle session, keeping its context (unless pinned, or the session failed). */
  private park(): void {
    const session = this.live;
    if (this.pinned || !session) return;
    const snapshot = session.getSnapshot();
    if (snapshot.status !== "active" || !snapshot.matches("idle")) return;
    this.parked = snapshot.context;
    this.live = undefined;
    this.runtime.detach();
    session.stop();
  }

  /** Events for the session: a parked session wakes for one and, idle still, parks again. */
  private send(event: SessionEvent): void {
    const parked = this.live === undefined;
    sendToSession(this.session, event);
    if (parked) this.park();
  }

  /** Current state; see `AgentState`. One object for the Agent's life. */
  get state(): AgentState {
    return (this.stateObject ??= stateView(this));
  }

  /** The session actor (inspection, embedding); each run is its invoked child `run`. */
  get actor(): SessionActor {
    this.pinned = true;
    this.actorHeld = true;
    // (What the app holds records each message as it ends from now on.)
    this.runtime.recordEnds();
    return this.session;
  }

  /** Every event of every run, as it reaches the Agent (after the state update, before the listeners). */
  get events$(): Observable<AgentEvent> {
    return (this.events ??= new Subject<AgentEvent>()).asObservable();
  }

  /** R63: why the last run ended (its `agent_end.reason`); undefined before the first run ends. */
  get lastEndReason(): AgentEndReason | undefined {
    return this.endReason;
  }

  /** Tokens and cost of every assistant message and tool result of this Agent (kept across `reset()`). */
  get usage(): Usage {
    const context = this.context;
    return this.runtime.usageOf(context.messages, context.usage);
  }

  /** R51: listeners are awaited in registration order for every event. Returns the unsubscribe. */
  subscribe(listener: AgentListener): () => void;
  /** With `runtimeEvents: true`, the listener also gets the loop's own events (R66: retries, recoveries, compaction). */
  subscribe(listener: AgentRuntimeListener, options: { runtimeEvents: true }): () => void;
  /**
   * SPEC R81, an Agent with `durable`: from the sequence number `after` (a listener's third
   * argument, the last one you processed): the session's stored events after it, then its live
   * ones, each once, in order, with its delivery. See `SubscribeFromOptions`.
   */
  subscribe(listener: AgentRuntimeListener, options: SubscribeFromOptions): () => void;
  subscribe(listener: AgentListener | AgentRuntimeListener, options?: { runtimeEvents?: boolean; after?: number; onError?: (error: unknown) => void }): () => void {
    if (options?.after !== undefined) return this.subscribeFrom(listener as AgentRuntimeListener, options as SubscribeFromOptions);
    const key = listener as AgentRuntimeListener;
    // Subscribed again: it keeps its place (and its entry: see `entriesAfter`); asking for runtime events again adds them.
    const subscribed = this.listeners.get(key);
    if (subscribed) subscribed.runtimeEvents ||= options?.runtimeEvents === true;
    else this.ownListeners().set(key, { listener: key, runtimeEvents: options?.runtimeEvents === true });
    return () => void this.listeners.delete(key);
  }

  private subscribeFrom(listener: AgentRuntimeListener, options: SubscribeFromOptions): () => void {
    const tail = this.tail;
    if (!tail) throw new AgentInputError("subscribe(options.after)", "subscribe(listener, { after }) needs an Agent with options.durable (its events have sequence numbers)");
    const after = options.after;
    if (typeof after !== "number" || !Number.isSafeInteger(after) || after < 0) throw new AgentInputError("subscribe(options.after)", `options.after must be a sequence number (an integer >= 0), got ${String(after)}`);
    const onError = options.onError ?? ((error: unknown) => console.warn(`xstate-agent-loop: subscribe({ after: ${after} }) could not read the stored events (${error instanceof Error ? error.message : String(error)}); the subscription ended`));
    let subscription: Subscription | undefined;
    let done = false;
    const key: AgentRuntimeListener = (event, signal, delivery) => (delivery && subscription ? subscription.offer(event, signal, delivery) : undefined);
    const unsubscribe = () => {
      if (done) return;
      done = true;
      subscription?.close();
      if (this.listeners.delete(key)) this.sequenced--;
    };
    // (The catch-up may run to its end, or fail, within this call.)
    subscription = tail.subscribe(listener as SequencedListener, { after, runtimeEvents: options.runtimeEvents === true, onError: (error) => (unsubscribe(), onError(error)) });
    if (done) return unsubscribe;
    this.ownListeners().set(key, { listener: key, runtimeEvents: options.runtimeEvents === true, subscription });
    this.sequenced++;
    return unsubscribe;
  }

  /**
   * R81, an Agent with `durable`: the session's last sequence number, and the one before its current (or last) run's `agent_start`.
   * Before a run in this process they are read from the store: a journal that cannot be read throws the store's `StoreCorruptError`.
   */
  get sequence(): { readonly lastSeq: number; readonly runStartAfter: number } | undefined {
    const tail = this.tail;
    return tail && { lastSeq: tail.lastSeq, runStartAfter: tail.runStartAfter };
  }

  // --- Queues (R53) --------------------------------------------------------------------------

  get steeringMode(): QueueMode {
    return this.context.modes.steering;
  }
  set steeringMode(mode: QueueMode) {
    this.send({ type: "queue.setMode", queue: "steering", mode });
  }
  get followUpMode(): QueueMode {
    return this.context.modes.followUp;
  }
  set followUpMode(mode: QueueMode) {
    this.send({ type: "queue.setMode", queue: "followUp", mode });
  }

  /** Queue a message for the next drain point after the current turn (or the next run's start). */
  steer(message: AgentMessage): void {
    checkMessage(message, "steer(message)");
    this.journalQueue({ k: "queue", op: "push", queue: "steering", message });
    this.send({ type: "queue.steer", message });
  }
  /** Queue a message for when the agent would otherwise stop. */
  followUp(message: AgentMessage): void {
    checkMessage(message, "followUp(message)");
    this.journalQueue({ k: "queue", op: "push", queue: "followUp", message });
    this.send({ type: "queue.followUp", message });
  }
  clearSteeringQueue(): void {
    this.journalQueue({ k: "queue", op: "clear", queue: "steering" });
    this.send({ type: "queue.clear", queue: "steering" });
  }
  clearFollowUpQueue(): void {
    this.journalQueue({ k: "queue", op: "clear", queue: "followUp" });
    this.send({ type: "queue.clear", queue: "followUp" });
  }
  clearAllQueues(): void {
    this.journalQueue({ k: "queue", op: "clear", queue: "all" });
    this.send({ type: "queue.clear", queue: "all" });
  }

  /**
   * R80: a durable Agent journals each queue arrival (and clear) before it queues it: in the
   * journal of the run that holds the session, or, idle, on its own (taking the session's lock for
   * the append: a session another live process holds refuses it with `SessionLockedError`, and
   * nothing is queued). `resume()` rebuilds the queues from these records.
   */
  private journalQueue(record: QueueRecord): void {
    const durable = this.durable;
    if (!durable || this.runtime.journalQueue(record)) return;
    this.sessionWriter(true).append(asJson(jsonCopy(record)));
  }

  /**
   * R84: the durable session's writer: opened (its lock taken) at the Agent's first use of the
   * session and held until `release()`, so no other process can write the session meanwhile (a
   * second one gets `SessionLockedError` at once, and no run of either is ever dropped).
   */
  private sessionWriter(create: boolean): SessionWriter {
    const durable = this.durable!;
    return (this.writer ??= durable.store.openSession(durable.sessionId, { create }));
  }

  /**
   * R84: gives up the durable session (its writer lock): another process may open it now. Throws
   * while a run is active. The Agent opens the session again when it next uses it.
   */
  release(): void {
    if (this.busy) throw new Error("Agent is already processing. Wait for completion before releasing the session.");
    const writer = this.writer;
    this.writer = undefined;
    writer?.release();
  }

  /** R80: the durable session's free-form meta (a title, the working directory), written with the Agent's own lock. */
  setSessionMeta(meta: Json): void {
    if (!this.durable) throw new Error("Agent.setSessionMeta(): this Agent has no store (options.durable)");
    this.sessionWriter(true).setMeta(meta);
  }
  hasQueuedMessages(): boolean {
    const { queues } = this.context;
    return queues.steering.length > 0 || queues.followUp.length > 0;
  }
  /** Both queues as they stand (R53), for a UI that shows them; the arrays are the session's, not copies: do not change them. */
  get queuedMessages(): { readonly steering: readonly AgentMessage[]; readonly followUp: readonly AgentMessage[] } {
    return this.context.queues;
  }
  /** The messages the next drain point would take (steering first), without taking them. */
  peekQueuedMessages(): AgentMessage[] {
    const steering = nextBatch(this.context, "steering");
    return steering.length > 0 ? steering : nextBatch(this.context, "followUp");
  }

  // --- Approval (R82) -----------------------------------------------------------------------

  /** The calls of the current run waiting for `approve`/`reject`, as plain data (none when idle). */
  get pendingApprovals(): ToolApprovalRequest[] {
    return this.live ? pendingApprovalsOf(this.live.getSnapshot()) : [];
  }

  /** The session's "always allow" rules (`approve(id, {always})`), as plain data; kept in its snapshot. */
  get approvalRules(): ApprovalRule[] {
    return approvalsOf(this.context).rules.slice();
  }

  /**
   * Runs the call waiting as `approvalId` (SPEC R82), with `args` replacing its arguments when
   * given (validated again: an invalid replacement is the call's validation error result).
   * `always: true` allows this tool, `always: {path}` this path of it (or what lies under it, for
   * a path ending in `/`), for the rest of the session: later calls skip the wait, and so do the
   * batch's other waiting calls it covers. Throws `ApprovalError` (code `unknown`, `settled` or
   * `invalid`) and changes nothing when no call waits as that id or the options are malformed.
   */
  approve(approvalId: string, options?: ApproveOptions): void {
    const checked = checkedApproveOptions(String(approvalId), options);
    const entry = waitingCall(this.approvalScope(), approvalId);
    const rule = checked.always ? ruleOf(entry.toolName, checked.always) : undefined;
    const decision = { type: "approval.approve" as const, approvalId, ...checked, at: this.runtime.now() };
    this.send({ ...decision, ...(rule ? { rule } : {}) });
  }

  /** The call waiting as `approvalId` gets an error result carrying `reason` (SPEC R82). Throws like `approve`. */
  reject(approvalId: string, reason: string): void {
    const checked = checkedReason(String(approvalId), reason);
    waitingCall(this.approvalScope(), approvalId);
    const decision = { type: "approval.reject" as const, approvalId, reason: checked, at: this.runtime.now() };
    this.send(decision);
  }

  /** Forgets the session's "always allow" rules. */
  clearApprovalRules(): void {
    this.send({ type: "approval.clearRules" });
  }

  /** Where an approval id is looked up: the live run's waiting calls; ids of this session's runs so far were issued. */
  private approvalScope(): ApprovalScope {
    const run = (this.live?.getSnapshot().children as { run?: AnyActorRef } | undefined)?.run;
    const current = run && run.getSnapshot().status === "active" ? (run.getSnapshot() as { context: RunContext }).context.approval : undefined;
    const runs = approvalsOf(this.context).runs;
    return {
      run: current,
      issued: (id) => {
        if (issuedBy(current, id)) return true;
        // An earlier run's id (approval-N-<n>, N below the current run's) was settled when that run ended.
        const match = /^approval-(\d+)-(\d+)$/.exec(id);
        const last = current ? runs - 1 : runs;
        return match !== null && Number(match[1]) >= 1 && Number(match[1]) <= last && Number(match[2]) >= 1;
      },
    };
  }

  // --- Lifecycle (R52, R54) ------------------------------------------------------------------

  /** The current run's abort signal; undefined when idle. */
  get signal(): AbortSignal | undefined {
    return this.runtime.signal;
  }

  /** Aborts the current run, if any (R29, R6: it still ends with turn_end and agent_end). */
  abort(): void {
    this.send({ type: "run.abort" });
  }

  /** Resolves when no run is active and the `agent_end` listeners have settled. */
  waitForIdle(): Promise<void> {
    return this.runtime.idle();
  }

  /** R54: keeps one system message with the replayed prompt and tools; clears the queues. */
  reset(): void {
    if (this.busy) throw new Error("Agent is already processing. Wait for completion before resetting.");
    this.journalQueue({ k: "queue", op: "clear", queue: "all" });
    this.transcript?.replaced();
    this.send({ type: "session.reset" });
    this.view.clear();
  }

  /** Runs a prompt: text (with images), one message, or several. Rejects if a run is active (R52). */
  prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  prompt(input: string, images?: ImageContent[]): Promise<void>;
  async prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    checkPromptInput(input, images);
    if (this.busy) {
      throw new Error("Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.");
    }
    return this.run({ prompts: promptMessages(input, images), skipInitialSteeringPoll: false });
  }

  /** Continues from the transcript (R52). */
  async continue(): Promise<void> {
    if (this.busy) throw new Error("Agent is already processing. Wait for completion before continuing.");
    // (What it continues from is the transcript as the app left it.)
    this.adoptEdits();
    return this.run(planContinuation(this.context));
  }

  // --- Internals -----------------------------------------------------------------------------

  private get context(): SessionContext {
    return this.live ? this.live.getSnapshot().context : this.parked!;
  }

  private get busy(): boolean {
    return this.live !== undefined && !this.live.getSnapshot().matches("idle");
  }

  /**
   * R13: the session as plain JSON data, mid-run included; `Agent.restore` takes it back.
   */
  getPersistedSnapshot(): Snapshot<unknown> {
    this.runtime.recordEnds();
    // A parked session is persisted by an actor made for it and never started.
    const session = this.live ?? createActor(sessionHosting().machine, { id: "session", input: { context: this.parked } as SessionInput });
    return detachedSnapshot(session.getPersistedSnapshot());
  }

  private run(plan: Continuation): Promise<void> {
    const snapshot = this.session.getSnapshot();
    // Only after a defect in this runtime (the session actor failed): nothing can run any more.
    if (snapshot.status !== "active") throw new Error(`Agent session has stopped: ${String(snapshot.error ?? snapshot.status)}`);
    this.view.clear();
    this.adoptEdits();
    const runPlan = this.runPlan(plan);
    const trace = this.origins?.next();
    if (trace) runPlan.trace = trace;
    return this.runtime.start(runPlan).finally(() => this.idleAgain());
  }

  /** The app changed `state.messages` in place (the reference's array is its transcript): the session takes it. */
  private adoptEdits(): void {
    const edited = this.transcript?.edited();
    if (!edited) return;
    // Mirrored first: the view already holds what the session takes (it must not grow by it).
    const messages = edited.slice();
    this.transcript!.mirror(messages);
    this.send({ type: "session.setMessages", messages });
    this.transcript!.mirror(this.context.messages);
  }

  /**
   * SPEC R81: continues the stored session (`options.durable`) in this Agent, e.g. in a new
   * process after a crash: the session's state at its last quiet point (its snapshot, saved when a
   * run ended: R13's restore) replaces this Agent's, then an unfinished run, if the journal holds
   * one, is continued from its journal. Completed steps never run again and their events are not
   * delivered again: listeners get the run's events from the moment it goes live (steps in flight
   * at the crash run again, R13's replay rule for tools). Resolves when that run ended, with
   * whether there was one. Hooks, tools and the stream function are this Agent's.
   *
   * `onLive` is called once, when that run has replayed what its journal holds: from then on its
   * steps run for real and its events reach listeners (a run that waits for an approval waits
   * from then on too: `pendingApprovals` has the call). A run the journal holds to its last step
   * calls it as it ends; no unfinished run, no call. A throw from it is reported (console.warn)
   * and does not stop the run.
   */
  async resume(options: AgentResumeOptions = {}): Promise<boolean> {
    const durable = this.durable;
    if (!durable) throw new Error("Agent.resume(): this Agent has no store (options.durable)");
    if (this.busy) throw new Error("Agent is already processing. Wait for completion before resuming.");
    // R84: the session is this Agent's from now on (a live holder elsewhere: SessionLockedError).
    const reader = this.sessionWriter(false);
    const stored = reader.snapshot();
    const quiet = stored?.snapshot as QuietPointSnapshot | undefined;
    if (quiet?.kind === "agent") this.adopt(quiet.snapshot);
    const after = reader.records(stored?.atSeq ?? 0);
    // R80: what was queued since the quiet point and no run received is queued again.
    const queues = queuesAfter(this.context.queues, after.map((entry) => entry.record));
    this.send({ type: "queue.clear", queue: "all" });
    for (const message of queues.steering) this.send({ type: "queue.steer", message });
    for (const message of queues.followUp) this.send({ type: "queue.followUp", message });
    const unfinished = unfinishedRun(after);
    if (!unfinished) return false;
    const snapshot = this.session.getSnapshot();
    if (snapshot.status !== "active") throw new Error(`Agent session has stopped: ${String(snapshot.error ?? snapshot.status)}`);
    this.view.clear();
    const plan = this.runPlan({ prompts: null, skipInitialSteeringPoll: false });
    await this.runtime
      .start({ ...plan, resumed: { unfinished, onLive: options.onLive, ...(options.after !== undefined ? { after: options.after } : {}) } })
      .finally(() => this.idleAgain());
    return true;
  }

  /** An idle session's persisted snapshot becomes this Agent's session (R13). */
  private adopt(persisted: unknown): void {
    const context = this.context;
    if (this.live) {
      this.runtime.detach();
      this.live.stop();
      this.live = undefined;
    }
    this.parked = context;
    this.wake({ snapshot: detachedSnapshot(persisted), input: { context } as SessionInput });
    this.park();
  }

  /** A run ended: a durable Agent saves the idle session as the journal's quiet point (R80), then parks. */
  private idleAgain(): void {
    const journal = this.runtime.takeFinishedJournal();
    if (journal) journal.close({ kind: "agent", snapshot: this.getPersistedSnapshot() });
    this.park();
  }

  /** What a run of this Agent is made of: its hooks, tools and stream function as they are now. */
  private runPlan(plan: Continuation): RunPlan {
    const context = this.context;
    const config = loopConfig({
      hooks: this,
      streamOptions: this,
      toolExecution: this.toolExecution,
      settings: this,
      model: this.fullModel(context.model),
      thinkingLevel: context.thinkingLevel,
      drain: (queue) => this.drain(queue),
      followUpsEmpty: () => this.context.queues.followUp.length === 0,
      steeringEmpty: () => this.context.queues.steering.length === 0,
    });
    return {
      ...(this.durable ? { durable: this.durable, writer: this.sessionWriter(true) } : {}),
      // (An actor the app holds records each message as it ends. An inspected one defers as any
      // other, so that the inspector shows the path an Agent takes in production.)
      deferEnds: !this.actorHeld,
      config,
      streamFn: this.streamFunction,
      tools: this.tools,
      messages: context.messages,
      prompts: plan.prompts,
      skipInitialSteeringPoll: plan.skipInitialSteeringPoll,
      ...(plan.dequeue ? { dequeue: plan.dequeue } : {}),
    };
  }

  /** A drain point of the run (R53): takes the next batch out of the session's queue. */
  private drain(queue: QueueName): AgentMessage[] {
    const batch = nextBatch(this.context, queue);
    if (batch.length > 0) this.send({ type: "queue.take", queue, count: batch.length });
    return batch;
  }

  /**
   * The run's event sink: state first, then `events$`, then each listener in turn (R51). With no
   * listener there is nothing to wait for: no promise, so the run's next step need not wait a turn.
   * `delivery` (a durable run, R81): the event's sequence number, given to each listener as its
   * third argument; a skipped one (a resumed run's event delivered before) updates the state only.
   */
  private deliver(event: AnyAgentEvent, signal: AbortSignal, delivery?: LedgerDelivery): Promise<void> | undefined {
    const skipped = delivery?.skipped === true;
    const given = delivery && { seq: delivery.seq, provisional: delivery.provisional };
    if (given) this.tail?.feed(event, given);
    if (isRuntimeEvent(event)) {
      // R62: the Agent's transcript follows a compaction.
      if (event.type === "transcript_replaced") {
        this.runtime.recordEnds();
        this.send({ type: "run.transcriptReplaced", messages: event.messages });
      }
      // R61: the truncated answer it closed is taken back; R81: a retraction takes back what never ended.
      else if (event.type === "message_discarded") {
        if (event.reason === "interrupted") this.view.clear();
        else {
          this.runtime.recordEnds();
          this.send({ type: "run.messageDiscarded" });
        }
      }
      if (skipped) return this.sequenced === 0 ? undefined : this.notify(event, signal, true, given, true);
      return this.listeners.size === 0 ? undefined : this.notify(event, signal, true, given, false);
    }
    this.view.apply(event);
    if (event.type === "agent_end") {
      this.endReason = event.reason;
      this.lastOutput = event.output;
    }
    // (Taken later when the session is mid-step: the run's first events come while it starts the run.)
    let taken = true;
    if (event.type === "message_end") {
      // Issue 40: the session records the run's messages at its end; until then the Agent's state
      // has them (`transcriptNow`), and an array the app holds grows now.
      if (this.live && this.runtime.deferredEnds(this.live.getSnapshot().context.messages)) this.transcript?.follow(this.transcriptNow());
      else taken = this.sendTaken({ type: "run.messageEnd", message: event.message });
    }
    // (A turn without an error changes nothing in the session: not sent.)
    else if (event.type === "turn_end" && turnError(event.message) !== undefined) taken = this.sendTaken({ type: "run.turnEnd", message: event.message });
    if (skipped) return this.sequenced === 0 ? undefined : this.notify(event, signal, false, given, true);
    this.events?.next(event);
    if (this.listeners.size === 0) return undefined;
    // During a session's step (the run's first events, as it starts), as the reference times them;
    // a listener reads the state as of its event: not before the session took it.
    if (inSessionStep()) return this.notify(event, signal, false, given, false);
    return taken ? this.notifyNow(event, signal, given) : afterStep(() => this.notify(event, signal, false, given, false));
  }

  /** `send`, and whether the session took the event now (false: it was mid-step, and takes it once that step ends). */
  private sendTaken(event: SessionEvent): boolean {
    const parked = this.live === undefined;
    const taken = sentAndTaken(this.session, event);
    if (parked) this.park();
    return taken;
  }

  /**
   * Each listener in turn, awaited (R51); a runtime event only reaches those that asked for them
   * (R66); a `skipped` one (a resumed run's, delivered before) only those subscribed from a sequence number.
   */
  private async notify(event: AnyAgentEvent, signal: AbortSignal, runtimeEvent: boolean, delivery: EventDelivery | undefined, skipped: boolean): Promise<void> {
    for (const { listener, runtimeEvents, subscription } of this.listeners.values()) {
      if ((runtimeEvent && !runtimeEvents) || (skipped && !subscription)) continue;
      await listener(event, signal, delivery);
    }
  }

  /**
   * `notify` for an event of the run (issue 40: every delta comes through here, and every other
   * event of a prompt). A listener that returns no promise leaves nothing to await: the next one is
   * called at once and, when none returned one, there is no promise to return (the async `notify`
   * cost each event a promise and three microtask hops in the run's event queue, and the run's next
   * step waited for them). From the first promise on, the rest wait for it, as in `notify`; a
   * listener that throws rejects, as there.
   *
   * A single listener, the usual case, is called with no iterator held across the call (the
   * iterator and its two results were three objects a delta); what it subscribes or unsubscribes
   * meanwhile counts as in the map's own iteration (`entriesAfter`).
   */
  private notifyNow(event: AnyAgentEvent, signal: AbortSignal, delivery: EventDelivery | undefined): Promise<void> | undefined {
    const listeners = this.listeners;
    try {
      if (listeners.size !== 1) return notifyEach(listeners.values(), event, signal, delivery);
      const only = listeners.values().next().value!;
      const result = only.listener(event, signal, delivery);
      if (isThenable(result)) return notifyAfter(result, entriesAfter(listeners, only), event, signal, delivery);
      return listeners.size === 1 && listeners.get(only.listener) === only ? undefined : notifyEach(entriesAfter(listeners, only), event, signal, delivery);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The Agent's own listener map, made at its first subscription (an Agent with none shares one empty map). */
  private ownListeners(): Map<AgentRuntimeListener, ListenerEntry> {
    if (this.listeners === noListeners) this.listeners = new Map();
    return this.listeners;
  }

  /** `state.messages`: one array while the session only appends to its transcript. */
  private messages(): AgentMessage[] {
    if (!this.transcript) {
      this.transcript = new TranscriptView();
      if (this.live) this.follow(this.live);
    }
    return this.transcript.of(this.transcriptNow());
  }

  /** The transcript as the listeners have it: the session's, and the current run's messages it records at the run's end. */
  private transcriptNow(): AgentMessage[] {
    return this.runtime.transcriptOf(this.context.messages);
  }

  /** `state.messages`, once read, follows the session's transcript (an Agent nobody asks pays nothing). */
  private follow(session: SessionActor): void {
    session.subscribe((snapshot) => this.transcript!.follow(this.runtime.transcriptOf(snapshot.context.messages)));
  }

  /** The replayed system prompt, cached per transcript array and length. */
  private systemPrompt(): string {
    const messages = this.transcriptNow();
    const replay = this.replay;
    if (replay?.messages !== messages || replay.length !== messages.length) {
      this.replay = { messages, length: messages.length, systemPrompt: replayTranscript(messages).systemPrompt };
    }
    return this.replay!.systemPrompt;
  }

  /** `state.messages = …` */
  private setMessages(messages: AgentMessage[]): void {
    checkMessages(messages, "state.messages");
    // (What the run's messages cost stays in the usage totals.)
    this.runtime.recordEnds();
    this.transcript?.replaced();
    this.send({ type: "session.setMessages", messages: messages.slice() });
  }

  /** `state.model = …` */
  private setModel(model: Model): void {
    checkModel(model, "state.model");
    this.send({ type: "session.setModel", model: this.plainModel(model) });
  }

  /** R14: `model` as the session keeps it: without its headers, which this Agent keeps. */
  private plainModel(model: Model): Model {
    if (model.headers === undefined && this.headers === undefined) return model;
    const kept = keepHeaders((this.headers ??= { modelHeaders: undefined }), model);
    this.modelView = { kept, full: model };
    return kept;
  }

  /** The session's `model` with the headers this Agent keeps for it: one object per model (as the reference's `state.model`). */
  private fullModel(model: Model): Model {
    if (this.headers === undefined) return model;
    if (this.modelView?.kept === model) return this.modelView.full;
    const full = withHeaders(this.headers, model);
    this.modelView = { kept: model, full };
    return full;
  }

  /** `state.thinkingLevel = …` */
  private setThinkingLevel(thinkingLevel: ThinkingLevel): void {
    this.send({ type: "session.setThinkingLevel", thinkingLevel });
  }

  /** `state.tools = …` */
  private setTools(tools: AgentTool[]): void {
    this.tools = (checkTools(tools, "state.tools") ?? []).slice();
  }
}


interface ListenerEntry {
  /** Its key in the map, kept here so that dispatch iterates the values (no entry pair per listener and event). */
  listener: AgentRuntimeListener;
  runtimeEvents: boolean;
  subscription?: Subscription;
}

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | undefined)?.then === "function";

/** Calls each listener of `entries` in turn; from the first that returns a promise on, `notifyAfter` (a throw propagates). */
function notifyEach(entries: Iterator<ListenerEntry>, event: AnyAgentEvent, signal: AbortSignal, delivery: EventDelivery | undefined): Promise<void> | undefined {
  for (let next = entries.next(); !next.done; next = entries.next()) {
    const result = next.value.listener(event, signal, delivery);
    if (isThenable(result)) return notifyAfter(result, entries, event, signal, delivery);
  }
  return undefined;
}

/**
 * The entries of `listeners` after `entry`, which was its only one when its listener was called:
 * where the map's own iterator would go on. Its entry is replaced only when it was unsubscribed
 * (subscribing again keeps the entry), and then every entry in the map came after it.
 */
function entriesAfter(listeners: Map<AgentRuntimeListener, ListenerEntry>, entry: ListenerEntry): Iterator<ListenerEntry> {
  const entries = listeners.values();
  if (listeners.get(entry.listener) === entry) entries.next();
  return entries;
}

/** `notifyNow` once a listener returned a promise: it, then the listeners after it, each awaited (R51). */
async function notifyAfter(pending: PromiseLike<unknown>, entries: Iterator<ListenerEntry>, event: AnyAgentEvent, signal: AbortSignal, delivery: EventDelivery | undefined): Promise<void> {
  await pending;
  for (let next = entries.next(); !next.done; next = entries.next()) await next.value.listener(event, signal, delivery);
}
/** `deliver` once the session step in progress ended (it ends before any microtask runs). */
async function afterStep(deliver: () => Promise<void>): Promise<void> {
  await undefined;
  return deliver();
}

/** Never added to (see `ownListeners`). */
const noListeners = new Map<AgentRuntimeListener, ListenerEntry>();

/** What every Agent's session runtime calls on it (its own side of the runtime, as `state` is below). */
const agentAsOwner: SessionOwner<Agent> = {
  dispatch: (agent, event, signal, delivery) => agent["deliver"](event, signal, delivery),
  idle: (agent) => agent["view"].clear(),
};

const AGENT = Symbol("agent");
const agentOf = (state: object): Agent => (state as { [AGENT]: Agent })[AGENT];

/**
 * Shared by every `Agent.state`; `this` is the state object, which holds its Agent under a hidden
 * key. (Element access reaches the Agent's private members: this is its own view.)
 */
const stateProperties: PropertyDescriptorMap = {
  systemPrompt: { get: function (this: object) { return agentOf(this)["systemPrompt"](); } },
  model: {
    get: function (this: object) {
      const agent = agentOf(this);
      return agent["fullModel"](agent["context"].model);
    },
    set: function (this: object, model: Model) { agentOf(this)["setModel"](model); },
  },
  thinkingLevel: {
    get: function (this: object) { return agentOf(this)["context"].thinkingLevel; },
    set: function (this: object, thinkingLevel: ThinkingLevel) { agentOf(this)["setThinkingLevel"](thinkingLevel); },
  },
  tools: {
    get: function (this: object) { return agentOf(this)["tools"]; },
    set: function (this: object, tools: AgentTool[]) { agentOf(this)["setTools"](tools); },
  },
  messages: {
    get: function (this: object) { return agentOf(this)["messages"](); },
    set: function (this: object, messages: AgentMessage[]) { agentOf(this)["setMessages"](messages); },
  },
  isStreaming: { get: function (this: object) { return agentOf(this)["busy"]; } },
  streamingMessage: { get: function (this: object) { return agentOf(this)["view"].streamingMessage; } },
  pendingToolCalls: { get: function (this: object) { return agentOf(this)["view"].pendingToolCalls; } },
  errorMessage: { get: function (this: object) { return agentOf(this)["context"].errorMessage ?? undefined; } },
  output: { get: function (this: object) { return agentOf(this)["lastOutput"]; } },
};
// R100's `output` is additive: not enumerable, so the state's keys stay the reference's.
for (const [key, descriptor] of Object.entries(stateProperties)) Object.assign(descriptor, { enumerable: key !== "output", configurable: true });

/**
 * `Agent.state`: own enumerable accessors, as the reference's object literal has, but shared
 * functions instead of 18 closures per Agent (a third of an idle Agent's heap, issue 19).
 */
function stateView(agent: Agent): AgentState {
  const state = Object.defineProperties({}, stateProperties);
  Object.defineProperty(state, AGENT, { value: agent });
  return state as AgentState;
}

/** R81: a durable Agent's tail: its stored head and stored events read from the store (no lock: a reader). */
function sessionTail(durable: NonNullable<AgentOptions["durable"]>): SessionTail {
  const { store, sessionId } = durable;
  return new SessionTail({
    head: () => (store.hasSession(sessionId) ? sessionHead(store.readSession(sessionId)) : 0),
    stored: (after, through) => storedEvents(store.readSession(sessionId).records(), after, through),
  });
}
