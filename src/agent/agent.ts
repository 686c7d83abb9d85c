/**
 * The stateful Agent (SPEC R50–R55), API-compatible with pi-agent-core 1.6's `Agent`, over the
 * session statechart (`machines/session.machine.ts`). The session machine holds the plain data
 * (transcript, model, thinking level, queues, usage) and the lifecycle; this class holds what
 * cannot enter a machine (listeners, hooks, tools, the stream function) and turns method calls
 * into session events.
 */
import { createActor, type Actor, type Snapshot } from "xstate";
import { Subject, type Observable } from "rxjs";
import type {
  RetrySettings,
  OutputLimitSettings,
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
} from "../types.js";
import type { QueueName, sessionMachine, SessionContext } from "../../machines/session.machine.js";
import { nextBatch } from "../../machines/session.machine.js";
import { replayTranscript } from "../transcript/index.js";
import { bindSession, providedSessionMachine } from "./provided-session.js";
import { SessionRuntime, type RunPlan } from "./session-runtime.js";
import { redeliverFinishedChildren } from "../actors/finished-children.js";
import { LiveView } from "./live-view.js";
import { initialTranscript } from "./initial-transcript.js";
import { promptMessages } from "./prompt-input.js";
import { planContinuation, type Continuation } from "./continuation.js";
import { defaultConvertToLlm, loopConfig } from "./loop-config.js";
import { resolveStreamFn } from "../api/default-stream-fn.js";
import type { AgentHooks, AgentListener, AgentOptions, AgentRuntimeListener, AgentState } from "./types.js";
import { isRuntimeEvent } from "../loop/runtime-events.js";
import { checkMessage, checkMessages } from "../boundary/messages.js";
import { checkModel } from "../boundary/model.js";
import { checkPromptInput } from "../boundary/prompt-input.js";
import { checkTools } from "../boundary/tools.js";
import { checkLoopSettings } from "../boundary/run-arguments.js";

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

export class Agent {
  // Hooks: settable at any time; each run reads them when it starts.
  convertToLlm: AgentHooks["convertToLlm"];
  transformContext?: AgentHooks["transformContext"];
  getApiKey?: AgentHooks["getApiKey"];
  beforeToolCall?: AgentHooks["beforeToolCall"];
  afterToolCall?: AgentHooks["afterToolCall"];
  finishTurn?: AgentHooks["finishTurn"];
  prepareRequest?: AgentHooks["prepareRequest"];
  prepareNextTurn?: AgentHooks["prepareNextTurn"];
  prepareNextTurnWithContext?: AgentHooks["prepareNextTurnWithContext"];
  /** The provider seam. */
  streamFunction: StreamFn;
  /** Tool execution strategy for a batch of several calls. */
  toolExecution: ToolExecutionMode;
  /** SPEC R63: each run's limits; read when a run starts. */
  budget?: RunBudget;
  /** SPEC R60–R62, R65, R67: recovery settings, read when a run starts (see `AgentLoopConfig`). */
  retry?: RetrySettings;
  outputLimit?: OutputLimitSettings;
  compact?: CompactSettings;
  toolTimeoutMs?: number;
  abortGraceMs?: number;
  requestLimiter?: AgentOptions["requestLimiter"];
  // Forwarded to the stream function when set.
  sessionId?: AgentOptions["sessionId"];
  thinkingBudgets?: AgentOptions["thinkingBudgets"];
  transport?: AgentOptions["transport"];
  maxRetryDelayMs?: AgentOptions["maxRetryDelayMs"];
  onPayload?: AgentOptions["onPayload"];
  onResponse?: AgentOptions["onResponse"];
  onProviderStreamEvent?: AgentOptions["onProviderStreamEvent"];
  identity?: AgentOptions["identity"];

  /** Current state; see `AgentState`. */
  readonly state: AgentState;
  /** Every event of every run, as it reaches the Agent (after the state update, before the listeners). */
  readonly events$: Observable<AgentEvent>;

  private readonly session: SessionActor;
  private readonly runtime: SessionRuntime;
  private readonly listeners = new Set<Listener>();
  private readonly view = new LiveView();
  private readonly events = new Subject<AgentEvent>();
  private tools: AgentTool[];
  private replay: { messages: AgentMessage[]; systemPrompt: string } | undefined;
  private endReason: AgentEndReason | undefined;

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
    this.convertToLlm = options.convertToLlm ?? defaultConvertToLlm;
    this.transformContext = options.transformContext;
    this.getApiKey = options.getApiKey;
    this.beforeToolCall = options.beforeToolCall;
    this.afterToolCall = options.afterToolCall;
    this.finishTurn = options.finishTurn;
    this.prepareRequest = options.prepareRequest;
    this.prepareNextTurn = options.prepareNextTurn;
    this.prepareNextTurnWithContext = options.prepareNextTurnWithContext;
    this.toolExecution = options.toolExecution ?? "parallel";
    checkLoopSettings(options, "");
    this.budget = options.budget;
    this.retry = options.retry;
    this.outputLimit = options.outputLimit;
    this.compact = options.compact;
    this.toolTimeoutMs = options.toolTimeoutMs;
    this.abortGraceMs = options.abortGraceMs;
    this.requestLimiter = options.requestLimiter;
    this.sessionId = options.sessionId;
    this.thinkingBudgets = options.thinkingBudgets;
    this.transport = options.transport;
    this.maxRetryDelayMs = options.maxRetryDelayMs;
    this.onPayload = options.onPayload;
    this.onResponse = options.onResponse;
    this.onProviderStreamEvent = options.onProviderStreamEvent;
    this.identity = options.identity;
    this.tools = (initial.tools ?? []).slice();
    this.events$ = this.events.asObservable();

    this.session = createActor(providedSessionMachine(), {
      id: "session",
      ...(restored !== undefined ? { snapshot: restored as Snapshot<unknown> } : {}),
      input: {
        messages: initialTranscript(initial.systemPrompt, this.tools, initial.messages ?? []),
        model: initial.model ?? unknownModel,
        thinkingLevel: initial.thinkingLevel ?? "off",
        steeringMode: options.steeringMode,
        followUpMode: options.followUpMode,
      },
      inspect: options.inspect,
    });
    this.runtime = new SessionRuntime(
      this.session,
      (event, signal) => this.deliver(event, signal),
      () => this.view.clear(),
      options.clock,
      options.random,
    );
    bindSession(this.session, this.runtime);
    // Without an error observer a failed root actor rethrows asynchronously and crashes the process.
    this.session.subscribe({ error: (error) => this.runtime.crash(error) });
    // R13: a session persisted mid-run resumes that run with this Agent's hooks, tools and stream function.
    const busy = restored !== undefined && !this.session.getSnapshot().matches("idle");
    const resumed = busy ? resumedRunMessages(this.session) : undefined;
    if (busy) this.runtime.resume(this.runPlan({ prompts: null, skipInitialSteeringPoll: false }), resumed ?? []).catch(() => {});
    this.session.start();
    if (resumed) this.session.send({ type: "run.resume", messages: resumed });
    if (restored !== undefined) redeliverFinishedChildren(this.session);
    this.state = this.stateView();
  }

  /** The session actor (inspection, embedding); each run is its invoked child `run`. */
  get actor(): SessionActor {
    return this.session;
  }

  /** R63: why the last run ended (its `agent_end.reason`); undefined before the first run ends. */
  get lastEndReason(): AgentEndReason | undefined {
    return this.endReason;
  }

  /** Tokens and cost of every assistant message and tool result of this Agent (kept across `reset()`). */
  get usage(): Usage {
    return this.context.usage;
  }

  /** R51: listeners are awaited in registration order for every event. Returns the unsubscribe. */
  subscribe(listener: AgentListener): () => void;
  /** With `runtimeEvents: true`, the listener also gets the loop's own events (R66: retries, recoveries, compaction). */
  subscribe(listener: AgentRuntimeListener, options: { runtimeEvents: true }): () => void;
  subscribe(listener: AgentListener | AgentRuntimeListener, options?: { runtimeEvents?: boolean }): () => void {
    const entry: Listener = { listener: listener as AgentRuntimeListener, runtimeEvents: options?.runtimeEvents === true };
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  // --- Queues (R53) --------------------------------------------------------------------------

  get steeringMode(): QueueMode {
    return this.context.modes.steering;
  }
  set steeringMode(mode: QueueMode) {
    this.session.send({ type: "queue.setMode", queue: "steering", mode });
  }
  get followUpMode(): QueueMode {
    return this.context.modes.followUp;
  }
  set followUpMode(mode: QueueMode) {
    this.session.send({ type: "queue.setMode", queue: "followUp", mode });
  }

  /** Queue a message for the next drain point after the current turn (or the next run's start). */
  steer(message: AgentMessage): void {
    checkMessage(message, "steer(message)");
    this.session.send({ type: "queue.steer", message });
  }
  /** Queue a message for when the agent would otherwise stop. */
  followUp(message: AgentMessage): void {
    checkMessage(message, "followUp(message)");
    this.session.send({ type: "queue.followUp", message });
  }
  clearSteeringQueue(): void {
    this.session.send({ type: "queue.clear", queue: "steering" });
  }
  clearFollowUpQueue(): void {
    this.session.send({ type: "queue.clear", queue: "followUp" });
  }
  clearAllQueues(): void {
    this.session.send({ type: "queue.clear", queue: "all" });
  }
  hasQueuedMessages(): boolean {
    const { queues } = this.context;
    return queues.steering.length > 0 || queues.followUp.length > 0;
  }
  /** The messages the next drain point would take (steering first), without taking them. */
  peekQueuedMessages(): AgentMessage[] {
    const steering = nextBatch(this.context, "steering");
    return steering.length > 0 ? steering : nextBatch(this.context, "followUp");
  }

  // --- Lifecycle (R52, R54) ------------------------------------------------------------------

  /** The current run's abort signal; undefined when idle. */
  get signal(): AbortSignal | undefined {
    return this.runtime.signal;
  }

  /** Aborts the current run, if any (R29, R6: it still ends with turn_end and agent_end). */
  abort(): void {
    this.session.send({ type: "run.abort" });
  }

  /** Resolves when no run is active and the `agent_end` listeners have settled. */
  waitForIdle(): Promise<void> {
    return this.runtime.idle();
  }

  /** R54: keeps one system message with the replayed prompt and tools; clears the queues. */
  reset(): void {
    if (this.busy) throw new Error("Agent is already processing. Wait for completion before resetting.");
    this.session.send({ type: "session.reset" });
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
    return this.run(planContinuation(this.context));
  }

  // --- Internals -----------------------------------------------------------------------------

  private get context(): SessionContext {
    return this.session.getSnapshot().context;
  }

  private get busy(): boolean {
    return !this.session.getSnapshot().matches("idle");
  }

  /** R13: the session as plain JSON data, mid-run included; `Agent.restore` takes it back. */
  getPersistedSnapshot(): Snapshot<unknown> {
    return this.session.getPersistedSnapshot();
  }

  private run(plan: Continuation): Promise<void> {
    const snapshot = this.session.getSnapshot();
    // Only after a defect in this runtime (the session actor failed): nothing can run any more.
    if (snapshot.status !== "active") throw new Error(`Agent session has stopped: ${String(snapshot.error ?? snapshot.status)}`);
    this.view.clear();
    return this.runtime.start(this.runPlan(plan));
  }

  /** What a run of this Agent is made of: its hooks, tools and stream function as they are now. */
  private runPlan(plan: Continuation): RunPlan {
    const context = this.context;
    const config = loopConfig({
      hooks: this,
      streamOptions: this,
      toolExecution: this.toolExecution,
      settings: this,
      model: context.model,
      thinkingLevel: context.thinkingLevel,
      drain: (queue) => this.drain(queue),
    });
    return {
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
    if (batch.length > 0) this.session.send({ type: "queue.take", queue, count: batch.length });
    return batch;
  }

  /** The run's event sink: state first, then `events$`, then each listener in turn (R51). */
  private async deliver(event: AnyAgentEvent, signal: AbortSignal): Promise<void> {
    if (isRuntimeEvent(event)) {
      // R62: the Agent's transcript follows a compaction.
      if (event.type === "transcript_replaced") this.session.send({ type: "run.transcriptReplaced", messages: event.messages });
      // R61: the truncated answer it closed is taken back.
      else if (event.type === "message_discarded") this.session.send({ type: "run.messageDiscarded" });
      for (const { listener, runtimeEvents } of this.listeners) if (runtimeEvents) await listener(event, signal);
      return;
    }
    this.view.apply(event);
    if (event.type === "agent_end") this.endReason = event.reason;
    if (event.type === "message_end") this.session.send({ type: "run.messageEnd", message: event.message });
    else if (event.type === "turn_end") this.session.send({ type: "run.turnEnd", message: event.message });
    this.events.next(event);
    for (const { listener } of this.listeners) await listener(event, signal);
  }

  private systemPrompt(): string {
    const messages = this.context.messages;
    if (this.replay?.messages !== messages) this.replay = { messages, systemPrompt: replayTranscript(messages).systemPrompt };
    return this.replay.systemPrompt;
  }

  private stateView(): AgentState {
    const agent = this;
    return {
      get systemPrompt() {
        return agent.systemPrompt();
      },
      get model() {
        return agent.context.model;
      },
      set model(model: Model) {
        checkModel(model, "state.model");
        agent.session.send({ type: "session.setModel", model });
      },
      get thinkingLevel() {
        return agent.context.thinkingLevel;
      },
      set thinkingLevel(thinkingLevel: ThinkingLevel) {
        agent.session.send({ type: "session.setThinkingLevel", thinkingLevel });
      },
      get tools() {
        return agent.tools;
      },
      set tools(tools: AgentTool[]) {
        agent.tools = (checkTools(tools, "state.tools") ?? []).slice();
      },
      get messages() {
        return agent.context.messages;
      },
      set messages(messages: AgentMessage[]) {
        checkMessages(messages, "state.messages");
        agent.session.send({ type: "session.setMessages", messages: messages.slice() });
      },
      get isStreaming() {
        return agent.busy;
      },
      get streamingMessage() {
        return agent.view.streamingMessage;
      },
      get pendingToolCalls() {
        return agent.view.pendingToolCalls;
      },
      get errorMessage() {
        return agent.context.errorMessage ?? undefined;
      },
    };
  }
}

interface Listener {
  listener: AgentRuntimeListener;
  runtimeEvents: boolean;
}
