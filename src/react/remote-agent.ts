/**
 * A session that lives on the server, seen from the page: `createRemoteAgent({ url, chatId })`
 * reads the route's agent event stream (`GET <url>/<chatId>/events`, see ui-stream's
 * `agent-frames.ts`) and keeps the same state an in-page Agent keeps (transcript, the message
 * streaming now, phase, pending approvals, queues, end reason, usage), so the hooks of
 * `./react` read either through one store. Actions are posted back to `<url>`. Browser-safe:
 * `fetch` and web streams only.
 *
 * A reload resumes where the page was: with `storage` (sessionStorage), the state and its last
 * sequence number are kept when the page hides, and the next page asks for the events after it
 * (`after`), so nothing is shown twice or lost; the server answers with a `reset` when it no
 * longer holds them.
 */
import type { AgentEndReason, ToolApprovalRequest } from "../protocol/events.js";
import type { AgentMessage, Model, Usage } from "../protocol/messages.js";
import type { ApproveOptions } from "../types.js";
import { ProxyMessageBuilder } from "../proxy/rebuild.js";
import type { AgentStreamFrame, RemoteSessionStatus, WireAgentEvent } from "../ui-stream/agent-frames.js";

export interface RemoteAgentOptions {
  /** The route's api path (`/api/chat`; an absolute URL outside a page). */
  url: string;
  chatId: string;
  /** Keeps the page's state across reloads (`sessionStorage`). */
  storage?: Pick<Storage, "getItem" | "setItem">;
  /** A failed action or stream read (default: `console.error`). */
  onError?: (error: unknown) => void;
  /** Delay before the stream is opened again after it dropped (default 500 ms, doubling up to 5 s). */
  retryMs?: number;
  fetch?: typeof fetch;
}

/** A request the route refused (its JSON `error`), or a stream it could not serve. */
export class RemoteAgentError extends Error {
  override name = "RemoteAgentError";
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The page's copy of the session: plain data (it is what `storage` keeps). */
interface RemoteState {
  epoch: string | undefined;
  seq: number;
  messages: AgentMessage[];
  streaming: AgentMessage | undefined;
  isStreaming: boolean;
  pendingToolCalls: string[];
  pendingApprovals: ToolApprovalRequest[];
  status: RemoteSessionStatus;
}

const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const initialState = (): RemoteState => ({
  epoch: undefined,
  seq: 0,
  messages: [],
  streaming: undefined,
  isStreaming: false,
  pendingToolCalls: [],
  pendingApprovals: [],
  status: { queues: { steering: [], followUp: [] }, lastEndReason: undefined, usage: emptyUsage(), errorMessage: undefined },
});

const textOf = (message: string | AgentMessage): string => (typeof message === "string" ? message : textContent(message));
function textContent(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : "")).join("") : "";
}

export type RemoteEventListener = (event: WireAgentEvent, seq: number) => void;

export class RemoteAgent {
  private current: RemoteState;
  private builder: ProxyMessageBuilder | undefined;
  private readonly listeners = new Set<RemoteEventListener>();
  private readonly changeListeners = new Set<(what: "status" | "all") => void>();
  private idleWaiters: (() => void)[] = [];
  private controller: AbortController | undefined;
  private closed = false;
  private readonly fetcher: typeof fetch;
  private readonly storageKey: string;
  private readonly onPageHide = () => this.persist();
  /** Settles when the stream caught up with the session (the events it held were applied). */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  /** The `after` each stream was opened with (undefined: from the server's reset point). */
  readonly openedAfter: (number | undefined)[] = [];

  constructor(readonly options: RemoteAgentOptions) {
    this.fetcher = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.storageKey = `xstate-agent-loop:remote:${options.url}:${options.chatId}`;
    this.current = this.restored() ?? initialState();
    if (this.current.streaming?.role === "assistant") this.builder = builderFor(this.current.streaming);
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    (globalThis as { addEventListener?: (type: string, listener: () => void) => void }).addEventListener?.("pagehide", this.onPageHide);
    void this.run();
  }

  // --- What the store reads (the Agent's names) ----------------------------------------------

  get state(): { messages: AgentMessage[]; streamingMessage: AgentMessage | undefined; isStreaming: boolean; pendingToolCalls: ReadonlySet<string>; errorMessage: string | undefined } {
    const state = this.current;
    return { messages: state.messages, streamingMessage: state.streaming, isStreaming: state.isStreaming, pendingToolCalls: new Set(state.pendingToolCalls), errorMessage: state.status.errorMessage };
  }
  get pendingApprovals(): ToolApprovalRequest[] {
    return this.current.pendingApprovals;
  }
  get queuedMessages(): { readonly steering: readonly AgentMessage[]; readonly followUp: readonly AgentMessage[] } {
    return this.current.status.queues;
  }
  get lastEndReason(): AgentEndReason | undefined {
    return this.current.status.lastEndReason;
  }
  get usage(): Usage {
    return this.current.status.usage;
  }
  /** The last sequence number applied (what a reload resumes after). */
  get lastSeq(): number {
    return this.current.seq;
  }

  /** Each event as it arrives, with its sequence number (after the state took it in). */
  subscribe(listener: RemoteEventListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  /** Changes no event reports: a status frame (`status`), or a reset to the server's state (`all`). */
  subscribeChanges(listener: (what: "status" | "all") => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }
  /** Resolves when no run goes (as far as the stream has told). */
  waitForIdle(): Promise<void> {
    if (!this.current.isStreaming) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // --- Actions (posted to the route) ---------------------------------------------------------

  /** Starts a run; while one goes, the server steers the text into it (R53). Resolves when the server took it. */
  async prompt(text: string): Promise<void> {
    await this.post({ action: "prompt", text });
  }
  async steer(message: string | AgentMessage): Promise<void> {
    await this.post({ action: "steer", text: textOf(message) });
  }
  async followUp(message: string | AgentMessage): Promise<void> {
    await this.post({ action: "followUp", text: textOf(message) });
  }
  /** Stop is an explicit request (R29); closing the page is only a disconnect. */
  async abort(): Promise<void> {
    await this.post({ action: "stop" });
  }
  async approve(approvalId: string, options?: ApproveOptions): Promise<void> {
    await this.post({ action: "approve", approvalId, ...(options ? { options } : {}) });
  }
  async reject(approvalId: string, reason: string): Promise<void> {
    await this.post({ action: "reject", approvalId, reason });
  }
  /** R81 on the server: continues its stored session; true when a run went live. */
  async resume(): Promise<boolean> {
    return ((await this.post({ action: "resume" })) as { resumed?: boolean }).resumed === true;
  }

  /** Reports a failed action to `onError` (the hooks' actions do this for you). */
  reportError(error: unknown): void {
    (this.options.onError ?? ((e: unknown) => console.error(e)))(error);
  }

  /** Keeps the state in `storage` now (done on `pagehide` and at each run's end). */
  persist(): void {
    try {
      this.options.storage?.setItem(this.storageKey, JSON.stringify(this.current));
    } catch {
      // Full or unavailable storage: a reload starts from the server's reset point instead.
    }
  }

  /** Stops reading (keeping the state in `storage`); the session on the server goes on. */
  close(): void {
    if (this.closed) return;
    this.persist();
    this.closed = true;
    this.controller?.abort();
    (globalThis as { removeEventListener?: (type: string, listener: () => void) => void }).removeEventListener?.("pagehide", this.onPageHide);
  }

  // --- The stream ------------------------------------------------------------------------------

  private async post(body: Record<string, unknown>): Promise<unknown> {
    const response = await this.fetcher(this.options.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: this.options.chatId, ...body }) });
    const answer = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
    if (!response.ok) throw new RemoteAgentError(answer.error?.code ?? "http_error", response.status, answer.error?.message ?? `HTTP ${response.status}`);
    return answer;
  }

  private async run(): Promise<void> {
    let delay = this.options.retryMs ?? 500;
    while (!this.closed) {
      const controller = (this.controller = new AbortController());
      try {
        const { epoch, seq } = this.current;
        const after = epoch !== undefined ? seq : undefined;
        this.openedAfter.push(after);
        const query = after !== undefined ? `?after=${after}&epoch=${encodeURIComponent(epoch!)}` : "";
        const response = await this.fetcher(`${this.options.url}/${encodeURIComponent(this.options.chatId)}/events${query}`, { signal: controller.signal });
        if (!response.ok || !response.body) throw new RemoteAgentError("stream_failed", response.status, `The event stream answered ${response.status}`);
        for await (const frame of readFrames(response.body)) {
          this.apply(frame);
          delay = this.options.retryMs ?? 500;
        }
      } catch (error) {
        if (this.closed) return;
        this.reportError(error);
      }
      if (this.closed) return;
      // Dropped (a network failure, the server released the session): open it again from where we are.
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }

  private apply(frame: AgentStreamFrame): void {
    const state = this.current;
    switch (frame.type) {
      case "open":
        state.epoch = frame.epoch;
        if (frame.reset) {
          this.current = { ...initialState(), epoch: frame.epoch, seq: frame.reset.seq, messages: frame.reset.messages, status: state.status };
          this.builder = undefined;
          this.changed("all");
        }
        return;
      case "live":
        this.markReady();
        return;
      case "status":
        state.status = frame.status;
        this.changed("status");
        return;
      case "event":
        // Each number is one event (R81: a retraction takes a new one): what was applied already is skipped.
        if (frame.seq <= state.seq) return;
        this.applyEvent(frame.event);
        state.seq = frame.seq;
        for (const listener of [...this.listeners]) listener(frame.event, frame.seq);
        if (frame.event.type === "agent_end") {
          this.persist();
          for (const resolve of this.idleWaiters.splice(0)) resolve();
        }
        return;
    }
  }

  private applyEvent(event: WireAgentEvent): void {
    const state = this.current;
    switch (event.type) {
      case "agent_start":
        state.isStreaming = true;
        state.pendingToolCalls = [];
        state.pendingApprovals = [];
        return;
      case "message_start":
        this.builder = event.message.role === "assistant" ? builderFor(event.message) : undefined;
        state.streaming = this.builder?.message ?? event.message;
        return;
      case "message_update":
        try {
          this.builder?.apply(event.delta);
        } catch (error) {
          // A delta that does not fit: the message shows whole at its message_end.
          this.reportError(error);
        }
        return;
      case "message_end":
        state.streaming = undefined;
        this.builder = undefined;
        state.messages.push(event.message);
        return;
      case "message_discarded":
        state.streaming = undefined;
        this.builder = undefined;
        // R61: the truncated answer is taken back from the transcript.
        if (event.reason === "output_limit_escalated" && state.messages.at(-1)?.role === "assistant") state.messages.pop();
        return;
      case "transcript_replaced":
        state.messages = [...event.messages];
        return;
      case "tool_execution_start":
        state.pendingToolCalls = [...state.pendingToolCalls, event.toolCallId];
        return;
      case "tool_execution_end":
        state.pendingToolCalls = state.pendingToolCalls.filter((id) => id !== event.toolCallId);
        return;
      case "tool_approval_requested": {
        const { approvalId, toolCallId, toolName, args, reason } = event;
        state.pendingApprovals = [...state.pendingApprovals, { approvalId, toolCallId, toolName, args, reason }];
        return;
      }
      case "tool_approval_resolved":
        state.pendingApprovals = state.pendingApprovals.filter((request) => request.approvalId !== event.approvalId);
        return;
      case "agent_end":
        state.isStreaming = false;
        state.streaming = undefined;
        this.builder = undefined;
        state.pendingToolCalls = [];
        state.pendingApprovals = [];
        if (event.reason) state.status = { ...state.status, lastEndReason: event.reason };
        return;
      default:
        return;
    }
  }

  private changed(what: "status" | "all"): void {
    for (const listener of [...this.changeListeners]) listener(what);
  }

  private restored(): RemoteState | undefined {
    try {
      const text = this.options.storage?.getItem(this.storageKey);
      const value = text ? (JSON.parse(text) as RemoteState) : undefined;
      return value && typeof value.seq === "number" && Array.isArray(value.messages) ? value : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Grows `start` (an assistant message at its `message_start`) in place with each delta. */
function builderFor(start: AgentMessage): ProxyMessageBuilder {
  const message = start as AgentMessage & { api: string; provider: string; model: string; timestamp: number; content: unknown[] };
  const builder = new ProxyMessageBuilder({ api: message.api, provider: message.provider, id: message.model } as Model, message.timestamp);
  Object.assign(builder.message, message, { content: [...message.content] });
  return builder;
}

/** The frames of an SSE body (`data: <json>` events, blank-line separated). */
async function* readFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<AgentStreamFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
          .join("\n");
        if (data) yield JSON.parse(data) as AgentStreamFrame;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** A remote session for the hooks of `./react` (`useAgent(remote)`), reading from now on. */
export function createRemoteAgent(options: RemoteAgentOptions): RemoteAgent {
  return new RemoteAgent(options);
}
