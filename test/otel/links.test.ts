/**
 * SPEC R110: a run restored or resumed elsewhere links to its original trace. The run span's ids
 * travel as plain strings in the run's input (`settings.trace` in its context, so in snapshots, and
 * the journal's `run` record); the continuing run's span, made by another tracer provider as in
 * another process, links to the original span and keeps its conversation id.
 */
import { describe, expect, it } from "vitest";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createActor, toPromise } from "xstate";
import { Agent, composeObservers, createAgentRunLogic, runAgentLoop, scriptedModel, scriptedStreamFn, text, type AgentEvent } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import type { Json } from "../../src/store/run-store.js";
import type { RunRecord } from "../../src/durable/records.js";
import { otelObserver } from "../../src/otel/index.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { crashSession, fixedClock, prompt } from "../durable/crash-scenario.js";
import { baseConfig, user } from "../loop/helpers.js";
import { memoryTracer } from "./helpers.js";

const runSpans = (spans: readonly ReadableSpan[]) => spans.filter((span) => span.name.startsWith("invoke_agent"));
const traceparent = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
/** A run span as compared: its trace, its links, its conversation, whether it continues a run. */
const view = (span: ReadableSpan) => ({
  trace: span.spanContext().traceId,
  links: span.links.map((link) => `00-${link.context.traceId}-${link.context.spanId}-0${link.context.traceFlags}`),
  conversation: span.attributes["gen_ai.conversation.id"],
  resumed: span.attributes["xstate_agent_loop.resumed"],
});
const snapshotOnPrompt = (take: () => unknown, into: { snapshot?: unknown }) => (event: AgentEvent) => {
  if (event.type === "message_end" && event.message.role === "user" && into.snapshot === undefined) into.snapshot = JSON.parse(JSON.stringify(take()));
};

describe("R110: restored and resumed runs link to the original trace", () => {
  it("R110, R13: an agentLoop run's ids are in its snapshot; restored in a new actor, its span links to the original", async () => {
    const original = memoryTracer();
    const saved: { snapshot?: unknown } = {};
    let take!: () => unknown;
    await runAgentLoop([user("go")], { messages: [], tools: [] }, baseConfig(), snapshotOnPrompt(() => take(), saved), undefined, scriptedStreamFn([{ content: [text("first")] }]), {
      inspect: otelObserver({ tracer: original.tracer, conversationId: "conv-1" }),
      onActor: (actor) => (take = () => actor.getPersistedSnapshot()),
    });
    const [first] = runSpans(original.spans());
    const origin = (saved.snapshot as { context: { settings: { trace: unknown } } }).context.settings.trace;
    expect(origin).toEqual({ traceparent: traceparent(first!), conversationId: "conv-1" });

    // "Another process": another provider, an observer told nothing of the first run.
    const elsewhere = memoryTracer();
    const logic = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [text("restored")] }]), tools: [], config: baseConfig() });
    const actor = createActor(logic, { snapshot: saved.snapshot as never, input: { messages: [] }, inspect: composeObservers(otelObserver({ tracer: elsewhere.tracer })) });
    actor.start();
    await toPromise(actor);
    expect(runSpans(elsewhere.spans()).map(view)).toEqual([
      { trace: expect.not.stringMatching(first!.spanContext().traceId), links: [traceparent(first!)], conversation: "conv-1", resumed: true },
    ]);
  });

  it("R110, R13: an Agent's run span is started with its input (one per run); Agent.restore links to it", async () => {
    const original = memoryTracer();
    const agent = new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn([{ content: [text("one")] }]), sessionId: "conv-7", inspect: otelObserver({ tracer: original.tracer }) });
    const saved: { snapshot?: unknown } = {};
    agent.subscribe(snapshotOnPrompt(() => agent.getPersistedSnapshot(), saved));
    await agent.prompt("first");
    const runs = runSpans(original.spans());
    expect(runs.map(view)).toEqual([{ trace: runs[0]!.spanContext().traceId, links: [], conversation: "conv-7", resumed: undefined }]);

    const elsewhere = memoryTracer();
    const restored = Agent.restore(saved.snapshot, { streamFn: scriptedStreamFn([{ content: [text("restored")] }]), inspect: otelObserver({ tracer: elsewhere.tracer }) });
    await restored.waitForIdle();
    expect(runSpans(elsewhere.spans()).map(view)).toEqual([
      { trace: expect.not.stringMatching(runs[0]!.spanContext().traceId), links: [traceparent(runs[0]!)], conversation: "conv-7", resumed: true },
    ]);
  });

  it("R110, R81: the journal's run record holds the trace; a durable resume's span links to the original", async () => {
    const store = memoryRunStore();
    const session = crashSession(() => {}, { fast: true });
    const original = memoryTracer();
    await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, () => {}, undefined, session.streamFn, {
      durable: { store, sessionId: "s" },
      clock: fixedClock,
      inspect: otelObserver({ tracer: original.tracer, conversationId: "conv-2" }),
    });
    const [first] = runSpans(original.spans());
    const records = store.readSession("s").records().map((r) => r.record);
    expect((records[0] as unknown as RunRecord).input.trace).toEqual({ traceparent: traceparent(first!), conversationId: "conv-2" });

    // A crash after the third record, resumed in "another process".
    const crashed = memoryRunStore();
    const writer = crashed.openSession("s");
    for (const record of records.slice(0, 3)) writer.append(record as Json);
    writer.release();
    const resumed = crashSession(() => {}, { fast: true });
    const elsewhere = memoryTracer();
    const result = await resumeAgentLoop(
      { store: crashed, sessionId: "s" },
      { config: resumed.config, tools: resumed.tools, streamFn: resumed.streamFn, sink: () => {}, clock: fixedClock, inspect: otelObserver({ tracer: elsewhere.tracer }) },
    );
    expect(result.resumed).toBe(true);
    expect(runSpans(elsewhere.spans()).map(view)).toEqual([
      { trace: expect.not.stringMatching(first!.spanContext().traceId), links: [traceparent(first!)], conversation: "conv-2", resumed: true },
    ]);
  });

  it("R110: a trace origin that names no span (an edited journal or snapshot) costs the link, never the run", async () => {
    const elsewhere = memoryTracer();
    const logic = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [text("first")] }]), tools: [], config: baseConfig() });
    const saved: { snapshot?: unknown } = {};
    const source = createActor(logic, { input: { prompts: [user("go")], messages: [] } });
    source.subscribe(() => {
      if (saved.snapshot === undefined) saved.snapshot = JSON.parse(JSON.stringify(source.getPersistedSnapshot()));
    });
    source.start();
    await toPromise(source);
    const snapshot = saved.snapshot as { context: { settings: { trace: unknown } } };
    snapshot.context.settings.trace = { traceparent: "00-not-a-trace-01" };
    const actor = createActor(logic, { snapshot: snapshot as never, input: { messages: [] }, inspect: composeObservers(otelObserver({ tracer: elsewhere.tracer })) });
    actor.start();
    expect((await toPromise(actor)).length).toBeGreaterThan(0);
    expect(runSpans(elsewhere.spans()).map((span) => span.links)).toEqual([[]]);
  });
});
