/**
 * SPEC R110: the OpenTelemetry observer mirrors the machines as spans (an in-memory exporter).
 * One multi-turn run with parallel tools, an approval, a sub-agent, a retry, a compaction and an
 * abort, its span tree asserted whole; content off by default, redacted when captured.
 */
import { describe, expect, it } from "vitest";
import { context, SpanKind, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { MeterProvider, InMemoryMetricExporter, PeriodicExportingMetricReader, AggregationTemporality } from "@opentelemetry/sdk-metrics";
import { createActor, toPromise } from "xstate";
import { Agent, approveToolCall, composeObservers, createAgentRunLogic, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool, type InspectOption, type RunActor, type ToolExecutionContext } from "../../src/index.js";
import { otelObserver } from "../../src/otel/index.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";
import { memoryTracer, spanTree, useContextManager } from "./helpers.js";

/** The attributes a tree line shows, by span kind. */
function keyAttributes(span: ReadableSpan): string {
  const a = span.attributes;
  const shown = ["end_reason", "turn", "request.attempt", "response.finish_reasons", "error.type", "tool.name", "tool.call.id", "approval.decision", "retry.kind", "compaction.reason", "hook"];
  const full = (key: string) => [`gen_ai.${key}`, `xstate_agent_loop.${key}`, key].find((name) => a[name] !== undefined);
  const pairs = shown.flatMap((key) => {
    const name = full(key);
    return name === undefined ? [] : [`${key}=${JSON.stringify(a[name])}`];
  });
  return `(${a["xstate_agent_loop.state"]})${pairs.length ? ` ${pairs.join(" ")}` : ""}`;
}

function scenario() {
  const controller = new AbortController();
  let actor!: RunActor;
  const subStream = scriptedStreamFn([{ content: [text("sub answer")] }]);
  const tools: AgentTool[] = [
    tool("read"),
    tool("write", undefined, { needsApproval: true }),
    tool("delegate", async (_id, _args, _signal, _update, run?: ToolExecutionContext) => {
      await run!.runSubAgent({ streamFn: subStream, config: baseConfig() }, { prompts: [user("sub task")] });
      return ok("delegated");
    }),
    // Aborts the run from inside (no timer), then stops when its signal says so (R29).
    tool("slow", (_id, _args, signal) => {
      controller.abort();
      return new Promise((resolve) => (signal!.aborted ? resolve(ok("stopped")) : signal!.addEventListener("abort", () => resolve(ok("stopped")))));
    }),
  ];
  const stream = scriptedStreamFn([
    { content: [toolCall("read", {}, "c1"), toolCall("write", {}, "c2"), toolCall("delegate", {}, "c3")] },
    { failure: "overloaded" },
    { failure: "prompt_too_long" },
    { content: [toolCall("slow", {}, "c4")] },
    { content: [text("never")] },
  ]);
  const config = baseConfig({
    retry: { baseDelayMs: 1 },
    // Hooks that run are spans of their own.
    finishTurn: async () => undefined,
    afterToolCall: async () => undefined,
    // (Keeps the last response with its tool results: a compactor keeps each result next to its call, R62.)
    compact: { compactor: async ({ messages }) => messages.slice(-4) },
    onRuntimeEvent: (event) => {
      if (event.type === "tool_approval_requested") approveToolCall(actor, event.approvalId);
    },
  });
  const run = (inspect: InspectOption) =>
    runAgentLoop([user("go")], { messages: [user("older"), user("old")], tools }, config, () => {}, controller.signal, stream, { inspect, onActor: (a) => (actor = a) });
  return { run };
}

describe("R110: spans mirror the machines", () => {
  it("R110: a run with parallel tools, an approval, a sub-agent, a retry, a compaction and an abort, as one span tree", async () => {
    const { tracer, spans } = memoryTracer();
    const output = await scenario().run(otelObserver({ tracer }));
    expect(output.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(spanTree(spans(), keyAttributes)).toEqual([
      'invoke_agent (run) end_reason="aborted" !aborted',
      '  turn (turn) turn=1',
      '    chat scripted (turn.requesting.streaming) request.attempt=1 response.finish_reasons=["toolUse"]',
      '    execute_tool read (turn.executingTools.preflightingCalls) tool.name="read" tool.call.id="c1"',
      '      hook afterToolCall (finalizing) hook="afterToolCall"',
      '    execute_tool write (turn.executingTools.preflightingCalls) tool.name="write" tool.call.id="c2"',
      '      await_approval (awaitingApproval) tool.name="write" approval.decision="approved"',
      '      hook afterToolCall (finalizing) hook="afterToolCall"',
      '    execute_tool delegate (turn.executingTools.preflightingCalls) tool.name="delegate" tool.call.id="c3"',
      '      invoke_agent (run) end_reason="completed"',
      '        turn (turn) turn=1',
      '          chat scripted (turn.requesting.streaming) request.attempt=1 response.finish_reasons=["stop"]',
      '      hook afterToolCall (finalizing) hook="afterToolCall"',
      '    hook finishTurn (turn.finishingTurn) hook="finishTurn"',
      '  turn (turn) turn=2',
      '    chat scripted (turn.requesting.streaming) request.attempt=1 response.finish_reasons=["error"] error.type="overloaded" !overloaded',
      '    retry_backoff (turn.requesting.backingOff) retry.kind="overloaded"',
      '    chat scripted (turn.requesting.streaming) request.attempt=2 response.finish_reasons=["error"] error.type="context_overflow" !context_overflow',
      '    compaction (turn.compactingOnOverflow) compaction.reason="overflow"',
      '    chat scripted (turn.requesting.streaming) request.attempt=3 response.finish_reasons=["toolUse"]',
      '    execute_tool slow (turn.executingTools.preflightingCalls) tool.name="slow" tool.call.id="c4"',
      '      hook afterToolCall (finalizing) hook="afterToolCall"',
      '    hook finishTurn (turn.finishingTurn) hook="finishTurn"',
      '  turn (turn) turn=3 !aborted',
      '    chat scripted (turn.requesting.streaming) request.attempt=1 response.finish_reasons=["aborted"] error.type="aborted" !aborted',
      '    hook finishTurn (turn.finishingTurn) hook="finishTurn"',
    ]);
    // One trace; the GenAI attributes of a request.
    expect(new Set(spans().map((span) => span.spanContext().traceId)).size).toBe(1);
    const chat = spans().find((span) => span.name === "chat scripted")!;
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": "scripted",
      "gen_ai.response.model": "scripted",
      "gen_ai.usage.input_tokens": expect.any(Number),
      "gen_ai.usage.output_tokens": expect.any(Number),
    });
  });
});

describe("R110: span kinds by the GenAI conventions", () => {
  it("R110: an inference (chat) span is CLIENT; the run, its turns, hooks and execute_tool spans are INTERNAL", async () => {
    const { tracer, spans } = memoryTracer();
    await runAgentLoop([user("go")], { messages: [], tools: [tool("read")] }, baseConfig({ finishTurn: async () => undefined }), () => {}, undefined, scriptedStreamFn([{ content: [toolCall("read", {}, "c1")] }, { content: [text("done")] }]), {
      inspect: otelObserver({ tracer }),
    });
    const kinds = new Map(spans().map((span) => [span.name, SpanKind[span.kind]]));
    expect(Object.fromEntries(kinds)).toEqual({
      "chat scripted": "CLIENT",
      "execute_tool read": "INTERNAL",
      "hook finishTurn": "INTERNAL",
      turn: "INTERNAL",
      invoke_agent: "INTERNAL",
    });
  });
});

describe("R110: context, content, metrics, cost", () => {
  it("R110: the app's active context at agentLoop() is the run span's parent", async () => {
    useContextManager();
    const { tracer, spans } = memoryTracer();
    const app = tracer.startSpan("app request");
    await context.with(trace.setSpan(context.active(), app), () =>
      runAgentLoop([user("go")], { messages: [], tools: [tool("read")] }, baseConfig(), () => {}, undefined, scriptedStreamFn([{ content: [toolCall("read")] }, { content: [text("done")] }]), {
        inspect: otelObserver({ tracer }),
      }),
    );
    app.end();
    expect(spanTree(spans())).toEqual([
      "app request",
      "  invoke_agent",
      "    turn",
      "      chat scripted",
      "      execute_tool read",
      "    turn",
      "      chat scripted",
    ]);
  });

  it("R110: an Agent's runs carry its session id as gen_ai.conversation.id, each a child of the context prompt() was called in", async () => {
    useContextManager();
    const { tracer, spans } = memoryTracer();
    const agent = new Agent({ initialState: { model: scriptedModel }, streamFn: scriptedStreamFn([{ content: [text("one")] }, { content: [text("two")] }]), sessionId: "conv-7", inspect: otelObserver({ tracer }) });
    for (const name of ["first", "second"]) {
      const app = tracer.startSpan(name);
      await context.with(trace.setSpan(context.active(), app), () => agent.prompt(name));
      app.end();
    }
    // The Agent's queues are its steering and follow-up hooks. R3's poll is deferred to the first
    // job (the steering queue was empty as the run started, and nothing came): no span; R9's poll
    // after the turn is one; R10's follow-up poll is skipped: R9's reply said that queue was empty.
    const run = ["  invoke_agent", "    turn", "      chat scripted", "    hook getSteeringMessages"];
    expect(spanTree(spans())).toEqual(["first", ...run, "second", ...run]);
    const runs = spans().filter((span) => span.name === "invoke_agent");
    expect(runs.map((span) => [span.attributes["gen_ai.conversation.id"], span.attributes["xstate_agent_loop.end_reason"]])).toEqual([
      ["conv-7", "completed"],
      ["conv-7", "completed"],
    ]);
    expect(spans().find((span) => span.name === "chat scripted")!.attributes["gen_ai.conversation.id"]).toBe("conv-7");
  });

  const secretRun = async (inspect: InspectOption) => {
    const login = tool("login", async () => ok("logged in as ada"), { parameters: { type: "object", properties: { user: { type: "string" }, password: { type: "string" }, note: { type: "string" } } } });
    const stream = scriptedStreamFn([
      { content: [toolCall("login", { user: "ada", password: "hunter2-secret", note: "key sk-ant-api03-abcdefghijklmnop" }, "c1")] },
      { content: [text("welcome back")] },
    ]);
    await runAgentLoop([user("please log me in")], { messages: [], tools: [login] }, baseConfig(), () => {}, undefined, stream, { inspect });
  };
  const everyValue = (spans: readonly ReadableSpan[]) => JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events, span.status]));

  it("R110: no message, argument or result text is recorded by default; a secret in a tool argument never appears", async () => {
    const { tracer, spans } = memoryTracer();
    await secretRun(otelObserver({ tracer }));
    const all = everyValue(spans());
    for (const text of ["please log me in", "welcome back", "ada", "hunter2-secret", "sk-ant-api03", "logged in"]) expect(all).not.toContain(text);
    expect(spans().some((span) => Object.keys(span.attributes).some((key) => key.startsWith("gen_ai.input") || key.startsWith("gen_ai.output") || key.startsWith("gen_ai.tool.call.a") || key.startsWith("gen_ai.tool.call.r")))).toBe(false);
  });

  it("R110: captureContent records messages, arguments and results, redacted by the secret rules and bounded", async () => {
    const { tracer, spans } = memoryTracer();
    await secretRun(otelObserver({ tracer, captureContent: true, maxContentChars: 2_000 }));
    const all = everyValue(spans());
    expect(all).not.toContain("hunter2-secret");
    expect(all).not.toContain("sk-ant-api03-abcdefghijklmnop");
    const call = spans().find((span) => span.name === "execute_tool login")!;
    expect(JSON.parse(call.attributes["gen_ai.tool.call.arguments"] as string)).toEqual({ user: "ada", password: "[redacted]", note: "key [redacted]" });
    expect(JSON.parse(call.attributes["gen_ai.tool.call.result"] as string)).toEqual({ content: [{ type: "text", text: "logged in as ada" }] });
    const [first, second] = spans().filter((span) => span.name === "chat scripted");
    expect(first.attributes["gen_ai.input.messages"]).toContain("please log me in");
    expect(JSON.parse(second.attributes["gen_ai.output.messages"] as string)[0].content).toEqual([{ type: "text", text: "welcome back" }]);
    for (const span of spans()) for (const value of Object.values(span.attributes)) if (typeof value === "string") expect(value.length).toBeLessThanOrEqual(2_000);
  });

  it("R110: the app's `secrets` are redacted from failure messages in span statuses too, content captured or not", async () => {
    const secret = "corp-db-pass-7f3a";
    const statuses = [];
    for (const captureContent of [false, true]) {
      const { tracer, spans } = memoryTracer();
      const agent = new Agent({
        initialState: { model: scriptedModel },
        streamFn: scriptedStreamFn([{ content: [text("never")] }]),
        transformContext: async () => {
          throw new Error(`transform failed: ${secret}`);
        },
        inspect: otelObserver({ tracer, captureContent, secrets: [secret] }),
      });
      await agent.prompt("hi");
      expect(everyValue(spans())).not.toContain(secret);
      statuses.push(spans().filter((span) => span.name === "hook transformContext" || span.name === "invoke_agent").map((span) => [span.name, span.status.message]));
    }
    const redacted = expect.stringContaining("transform failed: [redacted]");
    expect(statuses).toEqual([
      [["hook transformContext", redacted], ["invoke_agent", redacted]],
      [["hook transformContext", redacted], ["invoke_agent", redacted]],
    ]);
  });

  it("R110, R70: a streamed turn whose call outlives the response has one request span (the call running is no new attempt)", async () => {
    const { tracer, spans } = memoryTracer();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const read = tool("read", async () => {
      await gate;
      return ok("read");
    });
    const sink = (event: { type: string; message?: { role: string } }) => {
      if (event.type === "message_end" && event.message?.role === "assistant") release();
    };
    await runAgentLoop([user("go")], { messages: [], tools: [read] }, baseConfig({ streamingToolExecution: true }), sink, undefined, scriptedStreamFn([{ content: [toolCall("read", {}, "c1")] }, { content: [text("done")] }]), {
      inspect: otelObserver({ tracer }),
    });
    expect(spanTree(spans(), (span) => String(span.attributes["xstate_agent_loop.request.attempt"] ?? ""))).toEqual([
      "invoke_agent",
      "  turn",
      "    chat scripted 1",
      "    execute_tool read",
      "  turn",
      "    chat scripted 1",
    ]);
  });

  it("R110: metrics: token usage and duration per request, tool-call durations, run end reasons", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    await runAgentLoop([user("go")], { messages: [], tools: [tool("read")] }, baseConfig(), () => {}, undefined, scriptedStreamFn([{ content: [toolCall("read")], usage: { input: 10, output: 5 } }, { content: [text("done")], usage: { input: 20, output: 7 } }]), {
      inspect: otelObserver({ meter: provider.getMeter("test") }),
    });
    await reader.forceFlush();
    const metrics = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    const points = (name: string) => metrics.find((metric) => metric.descriptor.name === name)!.dataPoints as { attributes: Record<string, unknown>; value: { count?: number; sum?: number } | number }[];
    const histogram = (name: string) => points(name).map((point) => [point.attributes["gen_ai.operation.name"], point.attributes["gen_ai.token.type"] ?? point.attributes["gen_ai.tool.name"] ?? null, (point.value as { count: number }).count, name.endsWith("usage") ? (point.value as { sum: number }).sum : "s"]);
    expect(histogram("gen_ai.client.token.usage")).toEqual([
      ["chat", "input", 2, 30],
      ["chat", "output", 2, 12],
    ]);
    expect(histogram("gen_ai.client.operation.duration")).toEqual([
      ["chat", null, 2, "s"],
      ["execute_tool", "read", 1, "s"],
    ]);
    expect(points("xstate_agent_loop.runs").map((point) => [point.attributes["xstate_agent_loop.end_reason"], point.value])).toEqual([["completed", 1]]);
  });

  it("R110: failures: a request that reported no usage adds no token count; a call that never ran is not_executed on its span and in its metric; an unclassified HTTP failure's error.type is its status", async () => {
    const { tracer, spans } = memoryTracer();
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const stream = scriptedStreamFn([
      { content: [toolCall("missing", {}, "c1"), toolCall("read", {}, "c2")], usage: { input: 10, output: 5 } },
      { stopReason: "error", errorMessage: "Anthropic API error 401 authentication_error: invalid x-api-key" },
    ]);
    await runAgentLoop([user("go")], { messages: [], tools: [tool("read")] }, baseConfig(), () => {}, undefined, stream, { inspect: otelObserver({ tracer, meter: provider.getMeter("test") }) });
    await reader.forceFlush();
    const metrics = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    const points = (name: string) => metrics.find((metric) => metric.descriptor.name === name)!.dataPoints as { attributes: Record<string, unknown>; value: { count: number; sum: number } }[];
    expect(points("gen_ai.client.token.usage").map((point) => [point.attributes["gen_ai.token.type"], point.value.count, point.value.sum])).toEqual([
      ["input", 1, 10],
      ["output", 1, 5],
    ]);
    const errorTypes = (name: string) => points(name).map((point) => [point.attributes["gen_ai.tool.name"] ?? point.attributes["gen_ai.operation.name"], point.attributes["error.type"] ?? null]);
    expect(errorTypes("gen_ai.client.operation.duration")).toEqual([
      ["chat", null],
      ["missing", "not_executed"],
      ["read", null],
      ["chat", "401"],
    ]);
    expect(spans().filter((span) => span.attributes["error.type"] !== undefined).map((span) => [span.name, span.attributes["error.type"], span.status.message])).toEqual([
      ["execute_tool missing", "not_executed", undefined],
      ["chat scripted", "401", "401"],
    ]);
  });

  it("R110: with no tracer provider, a non-recording tracer or an unsampled trace, nothing is attached to the run", async () => {
    const { provider } = memoryTracer();
    const unsampled = new (await import("@opentelemetry/sdk-trace-base")).BasicTracerProvider({ sampler: new (await import("@opentelemetry/sdk-trace-base")).AlwaysOffSampler() });
    for (const observer of [otelObserver(), otelObserver({ tracer: trace.getTracer("noop") }), otelObserver({ tracer: unsampled.getTracer("off") })]) {
      expect(observer.attach({ kind: "run" })).toBeUndefined();
    }
    expect(otelObserver({ tracer: provider.getTracer("on") }).attach({ kind: "run" })).toEqual(expect.any(Function));
    // An Agent's session is attached once, before any run: without a tracer and with no provider registered, not at all.
    expect(otelObserver().attach({ kind: "session" })).toBeUndefined();
  });
});

describe("R110: an invoked run", () => {
  it("R110, R14: a run invoked in the app's own actor (createActor with the observer, composed) is traced the same way", async () => {
    const { tracer, spans } = memoryTracer();
    const logic = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [toolCall("read", {}, "c1")] }, { content: [text("done")] }]), tools: [tool("read")], config: baseConfig() });
    const seen: string[] = [];
    const actor = createActor(logic, { input: { prompts: [user("go")], messages: [] }, inspect: composeObservers(otelObserver({ tracer, conversationId: "app-1" }), (event) => void seen.push(event.type)) });
    actor.start();
    await toPromise(actor);
    expect(spanTree(spans())).toEqual(["invoke_agent", "  turn", "    chat scripted", "    execute_tool read", "  turn", "    chat scripted"]);
    expect(spans().every((span) => span.attributes["gen_ai.conversation.id"] === "app-1")).toBe(true);
    expect(seen.length).toBeGreaterThan(10);
  });
});
