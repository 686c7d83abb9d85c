/**
 * One run's spans, from its run actor's and tool-call actors' inspection events (SPEC R110):
 *
 *   invoke_agent ─┬─ hook getSteeringMessages            (steps outside a turn)
 *                 └─ turn ─┬─ hook prepareNextTurn … hook transformContext (configured hooks)
 *                          ├─ compaction                  (R62)
 *                          ├─ chat {model}                (one per attempt, R60) ─ retry_backoff between
 *                          ├─ execute_tool {name}         (preflight to result) ─┬─ await_approval (R82)
 *                          │                                                     ├─ hook afterToolCall
 *                          │                                                     └─ invoke_agent (a sub-agent)
 *                          └─ hook finishTurn
 *
 * A span opens when its state is entered and ends when it is left (or when the step's reply
 * arrives: a response, a preflight's immediate result, a call's outcome); each carries the state
 * path that produced it. Deltas never reach the machine, so they cost no span.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type Link, type Span, type Tracer } from "@opentelemetry/api";
import type { AgentToolResult, AssistantMessage, Model, ToolCall } from "../types.js";
import type { RunContext, StreamedResponse, ToolCallOutcome } from "../../machines/run.types.js";
import type { Preflight } from "../../machines/steps.js";
import { ATTR, isFailedEnd, modelAttributes, responseAttributes } from "./attributes.js";
import { pathOf, stepAt, type StepSpec } from "./state-spans.js";
import type { ContentRenderer } from "./content.js";
import type { LoopMetrics } from "./metrics.js";
import { boundText } from "../boundary/bounded-text.js";
import { httpStatusFromText } from "../loop/classify-failure.js";
import { hrNow, now } from "./clock.js";

export interface TraceSettings {
  tracer: Tracer;
  metrics: LoopMetrics | undefined;
  content: ContentRenderer | undefined;
  /** Every failure text goes through it before a span holds it (the app's `secrets`, credential shapes). */
  redact: (text: string) => string;
  conversationId: string | undefined;
  agentName: string | undefined;
  /** R81: while true, the run replays its journal: its steps were traced before the crash. */
  replaying: (() => boolean) | undefined;
  links: Link[] | undefined;
}

interface Open {
  span: Span;
  /** The span's context, for the spans that have children (run, turn, tool call). */
  context: Context;
  /** performance.now() at the start (metrics). */
  at: number;
}

interface OpenStep extends Omit<Open, "context"> {
  spec: StepSpec;
  /** The state path the step lasts for. */
  path: string;
}

interface OpenTool extends Omit<Open, "context"> {
  /** The turn's context; the call's own is made when a child needs it (`toolSpanContext`). */
  parent: Context;
  context?: Context;
  call: ToolCall;
  approval?: Span;
  afterHook?: Span;
  executed?: boolean;
  /** An approval wait came between the call's start and its execution. */
  waited?: boolean;
}

export class RunTrace {
  private path = "";
  private turn: Open | undefined;
  private turnNumber = 0;
  private step: OpenStep | undefined;
  /**
   * The path of a request whose response arrived while the run stays in its state (R70: a streamed
   * turn's calls still run): not a new attempt, until the run leaves it.
   */
  private answered: string | undefined;
  private tools: (OpenTool | undefined)[] = [];
  private attempts = 0;
  private model: Model | undefined;
  private lastFailureKind: string | undefined;
  private input = 0;
  private output = 0;
  private ended = false;
  /** R81: the step state entered while the run replayed its journal (see `transition`). */
  private deferred: { spec: StepSpec; path: string; startTime: HrTime; context: RunContext } | undefined;
  /**
   * R81: calls preflighted while the run replayed its journal, by index: a call in flight at the
   * crash settles live, and is traced once, from when the resumed run reached it (see `openTool`).
   */
  private deferredTools: ({ call: ToolCall; startTime: HrTime; context: RunContext } | undefined)[] = [];
  readonly context: Context;
  private hookFlags: RunContext["settings"]["hooks"] | undefined;

  constructor(
    private readonly settings: TraceSettings,
    readonly span: Span,
    parent: Context,
    private readonly hooks: () => RunContext["settings"]["hooks"] | undefined,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  /** The context for a tool call's children (a sub-agent's run), or the run's own. */
  toolContext(index: number): Context {
    const tool = this.tools[index];
    return tool ? this.toolSpanContext(tool) : (this.turn?.context ?? this.context);
  }

  private toolSpanContext(tool: OpenTool): Context {
    return (tool.context ??= trace.setSpan(tool.parent, tool.span));
  }

  /** The run's hook flags (its input's: they do not change while it runs). */
  private flags(): RunContext["settings"]["hooks"] | undefined {
    return (this.hookFlags ??= this.hooks());
  }

  /** A failure's message for a span's status: redacted with the observer's own `secrets`, then bounded. */
  private failureText(text: string): string {
    return boundText(this.settings.redact(text), 500);
  }

  /** performance.now() for a duration metric; nothing to read without metrics. */
  private at(): number {
    return this.settings.metrics ? now() : 0;
  }

  private replaying(): boolean {
    return this.settings.replaying?.() === true;
  }

  /**
   * A span; only parents get a context of their own (an allocation per span the leaves do without).
   * INTERNAL unless told: the GenAI conventions make an inference (`chat`) span CLIENT, a call to a
   * model service, and `execute_tool` INTERNAL.
   */
  private start(name: string, parent: Context, attributes: Attributes, startTime: HrTime = hrNow(), kind: SpanKind = SpanKind.INTERNAL): Span {
    return this.settings.tracer.startSpan(name, { kind, attributes, startTime }, parent);
  }

  /** The attributes every span has. Built, not spread: spreads are slow on Node 20 and this runs per span. */
  private common(path: string): Attributes {
    const attributes: Attributes = {};
    attributes[ATTR.state] = path;
    if (this.settings.conversationId !== undefined) attributes[ATTR.conversationId] = this.settings.conversationId;
    return attributes;
  }

  // --- the run actor ---

  snapshot(snapshot: { status: string; value: unknown; context: RunContext; error?: unknown }): void {
    if (this.ended) return;
    const context = snapshot.context;
    if (snapshot.status !== "active") return this.end(snapshot);
    const path = pathOf(snapshot.value);
    if (this.deferred && !this.replaying()) this.goLive();
    // A turn ends when it is counted (R63's count, at `turn_end`): the machine may go from one turn
    // to the next without leaving its `turn` state.
    if (this.turn && context.spent.turns >= this.turnNumber) this.endTurn(context);
    if (path !== this.path || !this.turn) this.transition(path, context);
    if ((this.turn || this.replaying()) && path.startsWith("turn.executingTools.preflightingCall")) this.openPreflights(path, context);
  }

  private transition(path: string, context: RunContext): void {
    this.path = path;
    this.model = context.model;
    if (this.step && path !== this.step.path && !path.startsWith(`${this.step.path}.`)) this.endStep(undefined);
    const inTurn = path.startsWith("turn.");
    if (this.turn && !inTurn) this.endTurn(context);
    if (this.answered !== undefined && path !== this.answered && !path.startsWith(`${this.answered}.`)) this.answered = undefined;
    let at = this.step ? undefined : stepAt(path, context.settings.hooks);
    if (at?.path === this.answered) at = undefined;
    if (this.replaying()) {
      // R81: a step entered while the journal replays may be the one in flight at the crash, made
      // again live: traced only if its reply comes live, from when it was entered.
      this.deferred = at ? { ...at, startTime: hrNow(), context } : undefined;
      return;
    }
    this.deferred = undefined;
    if (!this.turn && inTurn) this.startTurn(context);
    if (at) this.startStep(at.spec, at.path, context);
  }

  /** R81: the run went live inside a step entered while it replayed: that step is traced now. */
  private goLive(): void {
    const deferred = this.deferred!;
    this.deferred = undefined;
    if (this.path !== deferred.path && !this.path.startsWith(`${deferred.path}.`)) return;
    if (!this.turn && this.path.startsWith("turn.")) this.startTurn(deferred.context);
    this.startStep(deferred.spec, deferred.path, deferred.context, deferred.startTime);
  }

  private startTurn(context: RunContext): void {
    this.turnNumber = context.spent.turns + 1;
    this.attempts = 0;
    this.tools = [];
    const attributes = this.common("turn");
    attributes[ATTR.turn] = this.turnNumber;
    const span = this.start("turn", this.context, attributes);
    this.turn = { span, context: trace.setSpan(this.context, span), at: this.at() };
  }

  private endTurn(context: RunContext): void {
    const turn = this.turn!;
    this.turn = undefined;
    this.deferredTools = [];
    if (this.step) this.endStep(undefined);
    // Calls the machine settled without a reply of their own (R72, R73: cancelled, aborted).
    const outcomes = context.turn.batch?.outcomes;
    this.tools.forEach((tool, index) => {
      if (tool) this.endTool(index, outcomes?.[index] ?? undefined);
    });
    const message = context.turn.assistant;
    if (message && (message.stopReason === "error" || message.stopReason === "aborted")) {
      turn.span.setStatus({ code: SpanStatusCode.ERROR, message: message.stopReason });
    }
    turn.span.end(hrNow());
  }

  private startStep(spec: StepSpec, path: string, context: RunContext, startTime?: HrTime): void {
    const parent = spec.kind === "hook" && !spec.inTurn ? this.context : (this.turn?.context ?? this.context);
    const attributes = this.common(path);
    let name: string;
    switch (spec.kind) {
      case "hook":
        name = `hook ${spec.hook}`;
        attributes[ATTR.hook] = spec.hook;
        break;
      case "compaction":
        name = "compaction";
        attributes[ATTR.compactionReason] = spec.reason;
        break;
      case "backoff":
        name = "retry_backoff";
        if (this.lastFailureKind) attributes[ATTR.retryKind] = this.lastFailureKind;
        break;
      case "request": {
        this.attempts++;
        name = `chat ${context.model?.id ?? "unknown"}`;
        Object.assign(attributes, modelAttributes(context.model));
        attributes[ATTR.operationName] = "chat";
        attributes[ATTR.attempt] = this.attempts;
        const render = this.settings.content;
        if (render && context.request.llmMessages) attributes[ATTR.inputMessages] = render(context.request.llmMessages);
        break;
      }
    }
    this.step = { span: this.start(name, parent, attributes, startTime, spec.kind === "request" ? SpanKind.CLIENT : SpanKind.INTERNAL), at: this.at(), spec, path };
  }

  private endStep(error: string | undefined): void {
    const step = this.step!;
    this.step = undefined;
    if (error !== undefined) step.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    step.span.end(hrNow());
  }

  /** An event the run actor received: the replies that end spans, and aborts. */
  event(event: { type: string; output?: unknown; error?: unknown }): void {
    if (this.ended) return;
    if (this.deferred && !this.replaying()) this.goLive();
    const type = event.type;
    if (type === "step.streamResponse.done") this.endRequest(event.output as StreamedResponse);
    else if (type === "step.preflightCalls.done") this.preflighted(event.output as Preflight[]);
    else if (type.startsWith("xstate.done.actor.tool:")) this.endTool(toolIndex(type), event.output as ToolCallOutcome);
    else if (type.startsWith("xstate.error.actor.tool:")) this.endTool(toolIndex(type), undefined, event.error);
    else if (type === "step.compact.done" && this.step?.spec.kind === "compaction") {
      const messages = event.output as unknown[] | null;
      this.step.span.setAttribute("xstate_agent_loop.compaction.compacted", Array.isArray(messages));
    } else if (type === "run.abort") this.span.addEvent("abort", hrNow());
    else if (type === "step.failed" && this.step) this.endStep(this.failureText(errorMessage(event.error)));
  }

  private endRequest(response: StreamedResponse | undefined): void {
    const step = this.step;
    if (!step || step.spec.kind !== "request" || !response) return;
    const message = response.message as AssistantMessage | undefined;
    const span = step.span;
    span.setAttributes(responseAttributes(message));
    if (this.settings.content && message) span.setAttribute(ATTR.outputMessages, this.settings.content([message]));
    const failed = message?.stopReason === "error" || message?.stopReason === "aborted";
    if (failed) {
      const failure = response.failure;
      const kind = failure?.contextOverflow ? "context_overflow" : failure?.kind && failure.kind !== "unknown" ? failure.kind : (httpStatusOf(message!) ?? message!.stopReason);
      this.lastFailureKind = kind;
      span.setAttribute(ATTR.errorType, kind);
      if (response.failure?.retryable) span.setAttribute("xstate_agent_loop.retryable", true);
      span.setStatus({ code: SpanStatusCode.ERROR, message: message!.stopReason === "aborted" ? "aborted" : kind });
    }
    if (message?.usage) {
      this.input += (message.usage.input ?? 0) + (message.usage.cacheRead ?? 0) + (message.usage.cacheWrite ?? 0);
      this.output += message.usage.output ?? 0;
    }
    // A failed request's message carries zeros when the provider reported no usage: recorded, they
    // would pull the token histogram down; a failure after some usage was reported counts it.
    const usage = message?.usage && (!failed || reportsTokens(message.usage)) ? message.usage : undefined;
    this.settings.metrics?.request((now() - step.at) / 1000, usage, {
      [ATTR.operationName]: "chat",
      ...modelAttributes(this.model),
      ...(failed ? { [ATTR.errorType]: this.lastFailureKind } : {}),
    });
    this.step = undefined;
    this.answered = step.path;
    span.end(hrNow());
  }

  // --- tool calls ---

  private openPreflights(path: string, context: RunContext): void {
    const batch = context.turn.batch;
    if (!batch) return;
    if (path.endsWith(".preflightingCall")) this.openTool(batch.cursor, batch.calls[batch.cursor], context);
    else for (let i = 0; i < batch.calls.length; i++) this.openTool(i, batch.calls[i], context);
  }

  private openTool(index: number, call: ToolCall | undefined, context?: RunContext, startTime?: HrTime): void {
    if (call && this.replaying()) {
      // R81: traced only if it settles live (`endTool`); a replayed outcome drops it.
      if (context && this.deferredTools[index]?.call.id !== call.id) this.deferredTools[index] = { call, startTime: hrNow(), context };
      return;
    }
    if (!call || this.tools[index] || !this.turn) return;
    const attributes = this.common(this.path);
    attributes[ATTR.operationName] = "execute_tool";
    attributes[ATTR.toolName] = call.name;
    attributes[ATTR.toolCallId] = call.id;
    attributes[ATTR.toolType] = "function";
    if (this.settings.content) attributes[ATTR.toolArguments] = this.settings.content(call.arguments);
    const span = this.start(`execute_tool ${call.name}`, this.turn.context, attributes, startTime);
    this.tools[index] = { span, parent: this.turn.context, at: this.at(), call };
  }

  /** R81: a call preflighted while the journal replayed settles live: its span, from when the resumed run reached it (its turn's too). */
  private openDeferredTool(index: number): void {
    const deferred = this.deferredTools[index];
    this.deferredTools[index] = undefined;
    if (!deferred || this.replaying()) return;
    if (!this.turn && this.path.startsWith("turn.")) this.startTurn(deferred.context);
    this.openTool(index, deferred.call, undefined, deferred.startTime);
  }

  private preflighted(preflights: Preflight[] | undefined): void {
    if (!Array.isArray(preflights)) return;
    for (const preflight of preflights) {
      if (!preflight.ready) this.endTool(preflight.index, { index: preflight.index, result: preflight.result, isError: true, settledAt: preflight.settledAt });
      // The end of a `beforeToolCall` hook; without one, preflight is no step of its own.
      else if (this.flags()?.beforeToolCall) this.tools[preflight.index]?.span.addEvent("preflight.passed", hrNow());
    }
  }

  private endTool(index: number, outcome: ToolCallOutcome | undefined, crash?: unknown): void {
    if (this.deferredTools[index]) this.openDeferredTool(index);
    const tool = this.tools[index];
    if (!tool) return;
    this.tools[index] = undefined;
    tool.approval?.end(hrNow());
    tool.afterHook?.end(hrNow());
    const span = tool.span;
    // One error type for the span and the duration metric.
    const errorType = !outcome ? (crash === undefined ? "not_settled" : "crashed") : outcome.isError ? (tool.executed ? "tool_error" : "not_executed") : undefined;
    if (errorType !== undefined) span.setAttribute(ATTR.errorType, errorType);
    if (!outcome) span.setStatus({ code: SpanStatusCode.ERROR, message: crash === undefined ? "the call has no result" : this.failureText(errorMessage(crash)) });
    else if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR });
    if (outcome && this.settings.content) span.setAttribute(ATTR.toolResult, this.settings.content(resultContent(outcome.result)));
    this.settings.metrics?.toolCall((now() - tool.at) / 1000, {
      [ATTR.operationName]: "execute_tool",
      [ATTR.toolName]: tool.call.name,
      ...(errorType !== undefined ? { [ATTR.errorType]: errorType } : {}),
    });
    span.end(hrNow());
  }

  /** A tool-call actor appeared (R70: in streaming mode it preflights itself). */
  toolSpawned(index: number, call: ToolCall | undefined): void {
    this.openTool(index, call);
  }

  /** A tool-call actor's state: the approval wait and `afterToolCall` as child spans. */
  toolSnapshot(index: number, value: unknown, cause: { type: string } | undefined): void {
    const tool = this.tools[index];
    if (!tool) return;
    if (value === "awaitingApproval") {
      tool.waited = true;
      tool.approval ??= this.settings.tracer.startSpan("await_approval", { startTime: hrNow(), attributes: { [ATTR.state]: "awaitingApproval", [ATTR.toolName]: tool.call.name } }, this.toolSpanContext(tool));
      return;
    }
    if (tool.approval) {
      const decision = cause?.type === "approval.approve" ? "approved" : cause?.type === "approval.reject" ? "rejected" : cause?.type === "approval.abort" ? "aborted" : (cause?.type ?? "unknown");
      tool.approval.setAttribute(ATTR.approvalDecision, decision);
      if (decision === "aborted") tool.approval.setStatus({ code: SpanStatusCode.ERROR, message: "aborted" });
      tool.approval.end(hrNow());
      tool.approval = undefined;
    }
    if (value === "executing" && !tool.executed) {
      tool.executed = true;
      // Only when something came between the span's start and the execution (a hook, an approval wait).
      if (tool.waited || this.flags()?.beforeToolCall) tool.span.addEvent("execute", hrNow());
    }
    if (value === "finalizing" && this.flags()?.afterToolCall) {
      tool.afterHook ??= this.settings.tracer.startSpan("hook afterToolCall", { startTime: hrNow(), attributes: { [ATTR.state]: "finalizing", [ATTR.hook]: "afterToolCall" } }, this.toolSpanContext(tool));
    } else if (tool.afterHook) {
      tool.afterHook.end(hrNow());
      tool.afterHook = undefined;
    }
  }

  // --- the end ---

  private end(snapshot: { status: string; context: RunContext; error?: unknown }): void {
    this.ended = true;
    const context = snapshot.context;
    if (this.turn) this.endTurn(context);
    else if (this.step) this.endStep(undefined);
    const span = this.span;
    span.setAttributes({ [ATTR.inputTokens]: this.input, [ATTR.outputTokens]: this.output });
    let reason: string;
    if (snapshot.status === "done") {
      reason = context.endReason;
      if (isFailedEnd(context.endReason)) span.setStatus({ code: SpanStatusCode.ERROR, message: context.failure ? this.failureText(context.failure) : context.endReason });
    } else if (snapshot.status === "error") {
      reason = "error";
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.failureText(errorMessage(snapshot.error)) });
    } else {
      // Stopped before its end: persisted for a restore (R13), or its sink failed.
      reason = "stopped";
    }
    span.setAttribute(ATTR.endReason, reason);
    this.settings.metrics?.runEnded({ [ATTR.operationName]: "invoke_agent", [ATTR.endReason]: reason, ...modelAttributes(context.model) });
    span.end(hrNow());
  }
}

/** A failure no kind names (an authentication error, a bad request): the HTTP status its text gives, low-cardinality as `error.type` wants. */
function httpStatusOf(message: AssistantMessage): string | undefined {
  if (message.stopReason !== "error" || typeof message.errorMessage !== "string") return undefined;
  const status = httpStatusFromText(message.errorMessage);
  return status === undefined ? undefined : String(status);
}

const reportsTokens = (usage: AssistantMessage["usage"]): boolean => (usage.input ?? 0) + (usage.output ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) > 0;

function toolIndex(type: string): number {
  return Number(type.slice(type.lastIndexOf(":") + 1));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function resultContent(result: AgentToolResult | undefined): unknown {
  return result ? { content: result.content, ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}) } : null;
}
