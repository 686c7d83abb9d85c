/**
 * An Agent as an external store for UIs, in slices that change at different rates, each with its
 * own listeners: the transcript (at message ends), the streaming message (every delta, batched to
 * one notification per frame), and the status (phase, approvals, queues, end reason, usage). A
 * component reading one slice re-renders only when that slice changes. Framework-free: the React
 * hooks in `hooks.ts` read it with `useSyncExternalStore`.
 */
import type { AgentEndReason, AnyAgentEvent, ToolApprovalRequest } from "../protocol/events.js";
import type { AgentMessage, Usage } from "../protocol/messages.js";

/** The session's phase, following its statechart (the route sends the same value as `data-agent-state`). */
export type AgentPhase = "idle" | "running" | "streaming" | "executingTools" | "awaitingApproval";

export interface AgentStatus {
  value: AgentPhase;
  isStreaming: boolean;
  pendingApprovals: ToolApprovalRequest[];
  queues: { steering: readonly AgentMessage[]; followUp: readonly AgentMessage[] };
  lastEndReason: AgentEndReason | undefined;
  usage: Usage;
  errorMessage: string | undefined;
}

export interface StreamingSnapshot {
  /** The message streaming now (its content grows in place; `version` tells renders apart), or undefined between messages. */
  message: AgentMessage | undefined;
  version: number;
}

/** Runs `flush` later, once per batch: `requestAnimationFrame` in a browser, a macrotask elsewhere. */
export type BatchScheduler = (flush: () => void) => void;

export const frameScheduler: BatchScheduler = (flush) => {
  if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => flush());
  else setTimeout(flush, 0);
};

type Slice = "transcript" | "streaming" | "status";

/**
 * What the store reads: an `Agent` in the page, or a `RemoteAgent` (a session on the server, kept
 * in step by its event stream). Listeners only look at each event's `type`, then read the state.
 */
export interface StoreSubject {
  readonly state: {
    readonly messages: readonly AgentMessage[];
    readonly streamingMessage?: AgentMessage | undefined;
    readonly isStreaming: boolean;
    readonly pendingToolCalls: ReadonlySet<string>;
    readonly errorMessage?: string | undefined;
  };
  readonly pendingApprovals: ToolApprovalRequest[];
  readonly queuedMessages: { readonly steering: readonly AgentMessage[]; readonly followUp: readonly AgentMessage[] };
  readonly lastEndReason: AgentEndReason | undefined;
  readonly usage: Usage;
  subscribe(listener: (event: { type: AnyAgentEvent["type"] }) => void, options: { runtimeEvents: true }): () => void;
  waitForIdle(): Promise<void>;
  /** Changes no event reports (a remote session's status frame, or its reset to the server's state). */
  subscribeChanges?(listener: (what: "status" | "all") => void): () => void;
}

export interface AgentStoreOptions {
  /**
   * How delta notifications are batched (default `frameScheduler`). One batching per Agent: its
   * hooks share one store, which batches with the `schedule` given last to any of them (a hook
   * given none leaves it as it is); hooks given different ones get a console warning, once.
   */
  schedule?: BatchScheduler;
}

export class AgentStore {
  private transcript: readonly AgentMessage[];
  private streaming: StreamingSnapshot = { message: undefined, version: 0 };
  private status: AgentStatus;
  private readonly listeners: Record<Slice, Set<() => void>> = { transcript: new Set(), streaming: new Set(), status: new Set() };
  private unsubscribe: (() => void) | undefined;
  private flushPending = false;
  private streamingSize = 0;
  private schedule: BatchScheduler;
  private scheduleGiven = false;
  private warnedSchedules = false;

  constructor(
    readonly agent: StoreSubject,
    options: AgentStoreOptions = {},
  ) {
    this.schedule = frameScheduler;
    if (options.schedule) this.setSchedule(options.schedule);
    this.transcript = [...agent.state.messages];
    this.status = this.readStatus();
  }

  getTranscript = (): readonly AgentMessage[] => this.transcript;
  getStreaming = (): StreamingSnapshot => this.streaming;
  getStatus = (): AgentStatus => this.status;

  subscribeTranscript = (listener: () => void) => this.listen("transcript", listener);
  subscribeStreaming = (listener: () => void) => this.listen("streaming", listener);
  subscribeStatus = (listener: () => void) => this.listen("status", listener);

  /**
   * Batches deltas with `schedule` from now on. The hooks' options are read at every render: a
   * component written `{ schedule: (flush) => … }` gives a new function each time, the same
   * batching, so only a function with other source text counts as a conflict.
   */
  setSchedule(schedule: BatchScheduler): void {
    if (schedule === this.schedule) return;
    if (this.scheduleGiven && !this.warnedSchedules && String(schedule) !== String(this.schedule)) {
      this.warnedSchedules = true;
      console.warn("xstate-agent-loop/react: hooks of one Agent were given different `schedule`s; they share one store, which batches with the one given last");
    }
    this.schedule = schedule;
    this.scheduleGiven = true;
  }

  /** Reads everything again (after a change the Agent emits no event for: `reset()`, assigning `state.messages`). */
  refresh(): void {
    this.transcript = [...this.agent.state.messages];
    this.notify("transcript");
    this.flushStreaming();
    this.refreshStatus();
  }

  refreshStatus(): void {
    this.status = this.readStatus();
    this.notify("status");
  }

  private listen(slice: Slice, listener: () => void): () => void {
    this.listeners[slice].add(listener);
    if (!this.unsubscribe) {
      const events = this.agent.subscribe((event) => this.onEvent(event), { runtimeEvents: true });
      const changes = this.agent.subscribeChanges?.((what) => (what === "all" ? this.refresh() : this.refreshStatus()));
      this.unsubscribe = () => (events(), changes?.());
      // Nothing listened since the last subscriber left (or since the store was made, at a render
      // before this subscription): the Agent's events in between went unheard, so a (re)mounted
      // component would read the state of then until the next event.
      this.catchUp();
    }
    return () => {
      this.listeners[slice].delete(listener);
      if (Object.values(this.listeners).every((set) => set.size === 0)) {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
      }
    };
  }

  /** Reads the Agent again, notifying only the slices that changed (a first mount renders once). */
  private catchUp(): void {
    this.syncTranscript();
    this.flushStreaming();
    const status = this.readStatus();
    if (sameStatus(status, this.status)) return;
    this.status = status;
    this.notify("status");
  }

  private onEvent(event: { type: AnyAgentEvent["type"] }): void {
    switch (event.type) {
      case "message_update":
        // Deltas: one notification per batch, whatever their number.
        if (!this.flushPending) {
          this.flushPending = true;
          this.schedule(() => this.flushStreaming());
        }
        return;
      case "message_start":
        this.flushStreaming();
        this.refreshStatus();
        return;
      case "message_end":
        this.flushStreaming();
        this.syncTranscript();
        this.refreshStatus();
        return;
      case "transcript_replaced":
        this.syncTranscript();
        this.refreshStatus();
        return;
      case "agent_end":
        this.syncTranscript();
        // The Agent is idle once the agent_end listeners (this one among them) have settled.
        void this.agent.waitForIdle().then(() => this.refreshStatus());
        return;
      case "agent_start":
      case "tool_execution_start":
      case "tool_execution_end":
      case "tool_approval_requested":
      case "tool_approval_resolved":
      case "turn_start":
        this.refreshStatus();
        return;
      default:
        return;
    }
  }

  /** A new snapshot only when the transcript changed (the array grows in place; a compaction replaces it). */
  private syncTranscript(): void {
    const messages = this.agent.state.messages;
    const same = messages.length === this.transcript.length && messages.every((message, index) => message === this.transcript[index]);
    if (same) return;
    this.transcript = [...messages];
    this.notify("transcript");
  }

  private flushStreaming(): void {
    this.flushPending = false;
    const message = this.agent.state.streamingMessage;
    // Its size tells whether a batch changed anything to show (the partial may be a new object per event).
    const size = sizeOf(message);
    const previous = this.streaming.message;
    if ((message === undefined) === (previous === undefined) && message?.role === previous?.role && size === this.streamingSize) return;
    this.streamingSize = size;
    this.streaming = { message, version: this.streaming.version + 1 };
    this.notify("streaming");
  }

  private notify(slice: Slice): void {
    for (const listener of [...this.listeners[slice]]) listener();
  }

  private readStatus(): AgentStatus {
    const agent = this.agent;
    const pendingApprovals = agent.pendingApprovals;
    const waiting = new Set(pendingApprovals.map((request) => request.toolCallId));
    const running = agent.state.pendingToolCalls;
    let value: AgentPhase = "running";
    if (!agent.state.isStreaming) value = "idle";
    else if (agent.state.streamingMessage?.role === "assistant") value = "streaming";
    else if (pendingApprovals.length > 0 && [...running].every((id) => waiting.has(id))) value = "awaitingApproval";
    else if (running.size > 0) value = "executingTools";
    return {
      value,
      isStreaming: agent.state.isStreaming,
      pendingApprovals,
      queues: agent.queuedMessages,
      lastEndReason: agent.lastEndReason,
      usage: agent.usage,
      errorMessage: agent.state.errorMessage,
    };
  }
}

/** Whether two readings show the same (the Agent's getters may build new arrays and objects per read). */
function sameStatus(a: AgentStatus, b: AgentStatus): boolean {
  return (
    a.value === b.value &&
    a.isStreaming === b.isStreaming &&
    a.lastEndReason === b.lastEndReason &&
    a.errorMessage === b.errorMessage &&
    sameItems(a.queues.steering, b.queues.steering) &&
    sameItems(a.queues.followUp, b.queues.followUp) &&
    sameItems(
      a.pendingApprovals.map((request) => request.approvalId),
      b.pendingApprovals.map((request) => request.approvalId),
    ) &&
    JSON.stringify(a.usage) === JSON.stringify(b.usage)
  );
}

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((item, index) => item === b[index]);

function sizeOf(message: AgentMessage | undefined): number {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return typeof content === "string" ? content.length : 0;
  let size = content.length;
  for (const part of content as { text?: string; thinking?: string; arguments?: unknown }[]) size += (part.text ?? part.thinking ?? "").length;
  return size;
}

const stores = new WeakMap<StoreSubject, AgentStore>();

/**
 * The one store of `agent` (hooks on the same Agent share it and its single subscription); a
 * `schedule` in `options` becomes its batching, whichever hook made the store.
 */
export function agentStore(agent: StoreSubject, options?: AgentStoreOptions): AgentStore {
  const store = stores.get(agent);
  if (!store) {
    const made = new AgentStore(agent, options);
    stores.set(agent, made);
    return made;
  }
  if (options?.schedule) store.setSchedule(options.schedule);
  return store;
}
