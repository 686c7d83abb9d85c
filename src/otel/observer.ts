/**
 * `otelObserver({ tracer?, meter? })`: an observer for the `inspect` option of `agentLoop`, the
 * Agent and the durable entry points (or, through `next`, for `createActor` of an invoked run)
 * that turns the machines' inspection events into OpenTelemetry spans and metrics (SPEC R110).
 *
 * Cost: it attaches nothing when nothing would be recorded: when neither a tracer, a registered
 * tracer provider nor a meter is there (for a run or an Agent alike, and it starts no span to find
 * out); for an `agentLoop` run also when its run span is not recording (a no-op tracer, or not
 * sampled) and no meter is given.
 *
 * Runs are told apart by their actors: each run actor (logic id `run`) is one `invoke_agent` span;
 * a run actor whose parent (the source of its `xstate.init`) is a tool-call actor is a sub-agent,
 * its span a child of that call's span; any other run's parent is the app's active context when
 * the run started (inside `prompt()`/`agentLoop()`).
 *
 * Trace links (R110): the run span starts before the run's input is made, and its ids go into the
 * input as plain strings (`settings.trace`), so they are in the run's journal and snapshots. A run
 * whose input names a span this observer did not start (restored from a snapshot, resumed from its
 * journal, in this process or another) gets a new run span linked to that one.
 */
import { ProxyTracerProvider, context, trace, type Context, type Link, type Meter, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import type { AnyActorRef, InspectionEvent } from "xstate";
import type { AttachableObserver, ObservedRoot } from "../boundary/inspect-observer.js";
import type { RunContext, TraceOrigin } from "../../machines/run.types.js";
import type { ToolCall } from "../types.js";
import { ATTR, modelAttributes } from "./attributes.js";
import { contentRenderer, textRedactor, type ContentOptions } from "./content.js";
import { loopMetrics } from "./metrics.js";
import { RunTrace, type TraceSettings } from "./run-trace.js";
import { hrNow } from "./clock.js";
import { linkTo, originOf } from "./trace-origin.js";

export const INSTRUMENTATION_NAME = "xstate-agent-loop";

export interface OtelObserverOptions extends ContentOptions {
  /** Default: `trace.getTracer("xstate-agent-loop")` from the globally registered provider. */
  tracer?: Tracer;
  /** Metrics (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`, run ends). Default: none. */
  meter?: Meter;
  /** `gen_ai.agent.name` on each run span (its name becomes `invoke_agent {name}`). */
  agentName?: string;
  /** `gen_ai.conversation.id` when the observer is used outside an Agent (an Agent tells its own session id). */
  conversationId?: string;
  /**
   * R81: a run that continues a trace recorded elsewhere (restored or resumed in another process):
   * its run span links to these span contexts.
   */
  links?: readonly SpanContext[];
}

/** The observer: attachable (the loop asks it per run or session) and an XState observer (`next`). */
export interface OtelObserver extends AttachableObserver {
  next(event: InspectionEvent): void;
}

/** Whether spans from `tracer` would be dropped: none given and no provider registered. */
function noTracerProvider(): boolean {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegateTracer(INSTRUMENTATION_NAME) === undefined;
}

export function otelObserver(options: OtelObserverOptions = {}): OtelObserver {
  const metrics = options.meter ? loopMetrics(options.meter) : undefined;
  const content = contentRenderer(options);
  const redact = textRedactor(options);
  const tracerOf = () => options.tracer ?? trace.getTracer(INSTRUMENTATION_NAME);
  const links: Link[] | undefined = options.links?.map((spanContext) => ({ context: spanContext }));
  const settingsFor = (root: ObservedRoot): TraceSettings => ({
    tracer: tracerOf(),
    metrics,
    content,
    redact,
    conversationId: root.sessionId ?? options.conversationId ?? root.origin?.conversationId,
    agentName: options.agentName,
    replaying: root.replaying,
    links,
  });
  let system: SystemTrace | undefined;
  return {
    attach(root) {
      // Nothing would record (no tracer given, none registered, no meter): nothing to attach, and
      // no span to start and end for nothing.
      if (!options.tracer && !metrics && noTracerProvider()) return undefined;
      const settings = settingsFor(root);
      if (root.kind === "run") {
        // The run span now: the app's active context is the one `agentLoop` was called in.
        const span = startRunSpan(settings, context.active(), root.replaying?.() === true, root.origin);
        const recording = span.isRecording();
        if (!recording && !metrics) {
          span.end(hrNow());
          return undefined;
        }
        if (recording) root.origins?.provide(() => originOf(span, settings.conversationId));
        return new SystemTrace(settings, span).observe;
      }
      const system = new SystemTrace(settings, undefined);
      root.origins?.provide(() => system.startAhead());
      return system.observe;
    },
    next(event) {
      (system ??= new SystemTrace(settingsFor({ kind: "session" }), undefined)).observe(event);
    },
  };
}

/** A run span; `origin`: the trace of the run it continues (restored or resumed), linked. */
function startRunSpan(settings: TraceSettings, parent: Context, resumed: boolean, origin?: TraceOrigin | null): Span {
  const name = settings.agentName ? `invoke_agent ${settings.agentName}` : "invoke_agent";
  const link = linkTo(origin);
  const links = link ? [...(settings.links ?? []), link] : settings.links;
  const conversationId = settings.conversationId ?? origin?.conversationId;
  return settings.tracer.startSpan(
    name,
    {
      attributes: {
        [ATTR.operationName]: "invoke_agent",
        ...(settings.agentName ? { [ATTR.agentName]: settings.agentName } : {}),
        ...(conversationId !== undefined ? { [ATTR.conversationId]: conversationId } : {}),
        ...(resumed ? { [ATTR.resumed]: true } : {}),
        [ATTR.state]: "run",
      },
      ...(links ? { links } : {}),
      startTime: hrNow(),
    },
    parent,
  );
}

interface ActorLike {
  sessionId: string;
  id?: string;
  logic?: { id?: string };
  getSnapshot(): { context?: unknown };
}

const logicId = (ref: AnyActorRef): string | undefined => (ref as unknown as ActorLike).logic?.id;

/** The spans of one actor system (one `agentLoop` run and its sub-agents, or an Agent's session). */
class SystemTrace {
  private readonly runs = new Map<string, RunTrace>();
  private readonly toolActors = new Map<string, { run: RunTrace; index: number }>();
  /** Run spans started ahead of their runs (`startAhead`), by the `traceparent` the runs' inputs carry. */
  private readonly ahead = new Map<string, { span: Span; parent: Context }>();

  constructor(
    private readonly settings: TraceSettings,
    /** An `agentLoop` run's span, started at attach: the system's first top-level run takes it. */
    private pending: Span | undefined,
  ) {}

  readonly observe = (event: InspectionEvent): void => {
    if (event.type === "@xstate.snapshot") {
      const id = event.actorRef.sessionId;
      const run = this.runs.get(id);
      const snapshot = event.snapshot as unknown as { status: string; value: unknown; context: RunContext; error?: unknown };
      if (run) {
        run.snapshot(snapshot);
        if (snapshot.status !== "active") {
          this.runs.delete(id);
          // Calls stopped without a final snapshot of their own (R72, R73) go with their run.
          for (const [toolId, tool] of this.toolActors) if (tool.run === run) this.toolActors.delete(toolId);
        }
        return;
      }
      const tool = this.toolActors.get(id);
      if (tool) {
        tool.run.toolSnapshot(tool.index, snapshot.value, event.event);
        if (snapshot.status !== "active") this.toolActors.delete(id);
      }
    } else if (event.type === "@xstate.event") {
      if (event.event.type === "xstate.init") return this.init(event.actorRef as AnyActorRef, event.sourceRef as AnyActorRef | undefined);
      this.runs.get(event.actorRef.sessionId)?.event(event.event);
    }
  };

  /** R110: a run of this session is about to be made: its span now, its ids for the run's input. */
  startAhead(): TraceOrigin | undefined {
    const parent = context.active();
    const span = startRunSpan(this.settings, parent, false);
    if (!span.isRecording()) {
      span.end(hrNow());
      return undefined;
    }
    const origin = originOf(span, this.settings.conversationId);
    this.ahead.set(origin.traceparent, { span, parent });
    return origin;
  }

  private init(ref: AnyActorRef, source: AnyActorRef | undefined): void {
    const id = logicId(ref);
    if (id === "run") this.startRun(ref, source);
    else if (id === "toolCall" && source) {
      const run = this.runs.get(source.sessionId);
      if (!run) return;
      const tool = (ref.getSnapshot() as { context?: { index?: number; toolCall?: ToolCall } }).context;
      if (typeof tool?.index !== "number") return;
      this.toolActors.set(ref.sessionId, { run, index: tool.index });
      run.toolSpawned(tool.index, tool.toolCall);
    }
  }

  private startRun(ref: AnyActorRef, source: AnyActorRef | undefined): void {
    const caller = source ? this.toolActors.get(source.sessionId) : undefined;
    const runContext = (ref.getSnapshot() as { context?: RunContext }).context;
    const origin = runContext?.settings.trace ?? null;
    const ahead = origin ? this.ahead.get(origin.traceparent) : undefined;
    let span: Span;
    let parent: Context;
    if (caller) {
      // A sub-agent: a child of its tool call's span.
      parent = caller.run.toolContext(caller.index);
      span = startRunSpan({ ...this.settings, links: undefined }, parent, false);
    } else if (this.pending) {
      span = this.pending;
      this.pending = undefined;
      parent = context.active();
    } else if (ahead) {
      ({ span, parent } = ahead);
      this.ahead.delete(origin!.traceparent);
    } else {
      // A run traced before (its input names its first span): restored or resumed, linked to it.
      parent = context.active();
      span = startRunSpan(this.settings, parent, origin !== null, origin);
    }
    if (!span.isRecording() && !this.settings.metrics) return;
    if (runContext) span.setAttributes(modelAttributes(runContext.model));
    const hooks = () => (ref.getSnapshot() as { context?: RunContext }).context?.settings.hooks;
    this.runs.set(ref.sessionId, new RunTrace(this.settings, span, parent, hooks));
  }
}
