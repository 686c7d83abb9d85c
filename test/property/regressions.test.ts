/**
 * Regressions the property suite found, each named after the invariant it broke, reduced to the
 * smallest deterministic scenario.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import {
  agentEvents,
  createAgentRunLogic,
  defaultConvertToLlm,
  runAgentLoop,
  scriptedModel,
  scriptedStreamFn,
  text,
  toolCall,
  PushAssistantStream,
  emptyUsage,
  type AgentEvent,
  type AgentRunOptions,
  type AssistantMessage,
  type AgentTool,
} from "../../src/index.js";

const hi = { prompts: [{ role: "user" as const, content: "hi", timestamp: 1 }], messages: [] };
const okTool = (name: string, execute?: AgentTool["execute"]): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: {} },
  execute: execute ?? (async () => ({ content: [{ type: "text", text: name }], details: {} })),
});
/** Two calls (parallel unless `sequential`), then an answer once the results are in. */
const twoCalls = (tools: AgentTool[], sequential = false): AgentRunOptions => ({
  tools,
  streamFn: scriptedStreamFn(({ context }) =>
    context.messages.some((m) => m.role === "toolResult") ? { content: [text("done")] } : { content: [toolCall("a", {}, "A"), toolCall("b", {}, "B")] },
  ),
  config: { model: scriptedModel, convertToLlm: defaultConvertToLlm, ...(sequential ? { toolExecution: "sequential" as const } : {}) },
});

describe("regressions", () => {
  // Found by the property suite (sink "macrotask", a parallel batch of two calls, the first one
  // reporting an update at once). Expected: the step worker waits for the sink before every job
  // (steps-worker.ts: "wait until the sink is idle, not just past the delivery pending now";
  // SPEC "Entry points": emit is awaited). Actual (then): both execute jobs awaited the
  // same pending delivery (call B's tool_execution_start); when it settled, A's job started and
  // emitted its update, and B's job started without waiting for it.
  it("emit is awaited: a parallel call does not start executing while another call's update is still being delivered", async () => {
    const log: string[] = [];
    const label = (event: AgentEvent) => `${event.type}${"toolCallId" in event ? ` ${event.toolCallId}` : ""}`;
    // A sink that takes a macrotask per event, as an async UI listener would.
    const sink = (event: AgentEvent) => {
      log.push(`sink got ${label(event)}`);
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          log.push(`sink done ${label(event)}`);
          resolve();
        }),
      );
    };
    const tool = (name: string): AgentTool => ({
      name,
      label: name,
      description: name,
      parameters: { type: "object", properties: {} },
      execute: async (id, _params, _signal, onUpdate) => {
        log.push(`execute ${id}`);
        onUpdate?.({ content: [{ type: "text", text: "progress" }], details: {} });
        return { content: [{ type: "text", text: "ok" }], details: {} };
      },
    });

    await runAgentLoop(
      [{ role: "user", content: "hi", timestamp: 1 }],
      { messages: [], tools: [tool("a"), tool("b")] },
      { model: scriptedModel, convertToLlm: defaultConvertToLlm },
      sink,
      undefined,
      scriptedStreamFn([{ content: [toolCall("a", {}, "A"), toolCall("b", {}, "B")] }, { content: [text("done")] }]),
    );

    const executeB = log.indexOf("execute B");
    const updateA = log.indexOf("sink done tool_execution_update A");
    expect(log.slice(log.indexOf("execute A"), log.indexOf("execute A") + 3)).toEqual([
      "execute A",
      "sink got tool_execution_update A",
      "sink done tool_execution_update A",
    ]);
    expect(updateA).toBeLessThan(executeB);
  });

  // Found by the restore property (restore.property.test.ts). R13: a run persisted at any snapshot
  // it reports finishes. Found when a parallel batch's calls waited for `tool.execute`: the last
  // call reported tool.ready from inside its own macrostep, the run took it at once, moved to
  // runningInParallel and sent tool.execute to every passed call, but that call was still busy, so
  // its tool.execute waited in its mailbox; the snapshot the run reported had the call in
  // awaitingExecution, and restored, nobody sent tool.execute again: the run never ended. (The
  // batch now spawns passed calls after one preflight step; this keeps the restore point.)
  it("R13: a run restored from the snapshot it reports as its parallel calls start executing finishes", async () => {
    const first = createActor(createAgentRunLogic(twoCalls([okTool("a"), okTool("b")])), { input: hi });
    let persisted: string | undefined;
    first.subscribe((snapshot) => {
      if (persisted === undefined && JSON.stringify(snapshot.value).includes("runningInParallel")) persisted = JSON.stringify(first.getPersistedSnapshot());
    });
    first.start();
    const uninterrupted = await toPromise(first);
    expect(persisted).toBeDefined();
    const second = createActor(createAgentRunLogic(twoCalls([okTool("a"), okTool("b")])), { snapshot: JSON.parse(persisted!), input: hi });
    second.start();
    const restored = await toPromise(second);
    expect(restored.map((m) => m.role)).toEqual(uninterrupted.map((m) => m.role));
  }, 2_000);

  // Found by the restore property. A run actor that is stopped (its parent left the invoking state,
  // or the app persisted it and stopped it) delivers nothing more; here a tool it was executing
  // reports an update after the stop, and the update still reaches the run's subscribers.
  it("a stopped run delivers no more events (a tool's update after the stop is dropped)", async () => {
    let reached!: () => void;
    const executing = new Promise<void>((resolve) => (reached = resolve));
    let proceed!: () => void;
    const stopped = new Promise<void>((resolve) => (proceed = resolve));
    let execution: Promise<unknown> | undefined;
    const slow = okTool("a", (id, _args, _signal, onUpdate) => {
      execution = (async () => {
        reached();
        await stopped;
        onUpdate?.({ content: [{ type: "text", text: "late" }], details: {} });
        return { content: [{ type: "text", text: id }], details: {} };
      })();
      return execution as never;
    });
    const run = createActor(createAgentRunLogic(twoCalls([slow, okTool("b")], true)), { input: hi });
    const afterStop: string[] = [];
    let isStopped = false;
    agentEvents(run).subscribe((event) => {
      if (isStopped) afterStop.push(event.type);
    });
    run.start();
    await executing;
    run.stop();
    isStopped = true;
    proceed();
    await execution;
    expect(afterStop).toEqual([]);
  });

  // Found by the restore property. As above, for the events a preflight emits itself: a run
  // stopped while its preflight waits for beforeToolCall still delivers the call's
  // tool_execution_end once the hook answers.
  it("a stopped run delivers no more events (a preflight's immediate result after the stop is dropped)", async () => {
    let reached!: () => void;
    const gating = new Promise<void>((resolve) => (reached = resolve));
    let answer!: (decision: { block: true; reason: string }) => void;
    const decided = new Promise<{ block: true; reason: string }>((resolve) => (answer = resolve));
    const options = twoCalls([okTool("a"), okTool("b")], true);
    options.config.beforeToolCall = () => {
      reached();
      return decided;
    };
    const run = createActor(createAgentRunLogic(options), { input: hi });
    const afterStop: string[] = [];
    let isStopped = false;
    agentEvents(run).subscribe((event) => {
      if (isStopped) afterStop.push(event.type);
    });
    run.start();
    await gating;
    run.stop();
    isStopped = true;
    answer({ block: true, reason: "no" });
    // What the preflight still does after the hook answered is microtasks only: one macrotask
    // turn lets all of it run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(afterStop).toEqual([]);
  });

  // Found by the restore property. As above, for the events the stream step emits itself: a run
  // stopped mid-stream still delivers the rest of the response (its message_update and
  // message_end events) as the stream function produces it.
  it("a stopped run delivers no more events (the rest of a stream after the stop is dropped)", async () => {
    const stream = new PushAssistantStream();
    let requested!: () => void;
    const streaming = new Promise<void>((resolve) => (requested = resolve));
    const partial: AssistantMessage = {
      role: "assistant",
      content: [{ type: "text", text: "" }],
      api: scriptedModel.api,
      provider: scriptedModel.provider,
      model: scriptedModel.id,
      usage: emptyUsage(),
      stopReason: "stop",
      timestamp: 1,
    };
    const options: AgentRunOptions = {
      streamFn: () => {
        stream.push({ type: "start", partial });
        requested();
        return stream;
      },
      config: { model: scriptedModel, convertToLlm: defaultConvertToLlm },
    };
    const run = createActor(createAgentRunLogic(options), { input: hi });
    const afterStop: string[] = [];
    let isStopped = false;
    agentEvents(run).subscribe((event) => {
      if (isStopped) afterStop.push(event.type);
    });
    run.start();
    await streaming;
    run.stop();
    isStopped = true;
    const text = { ...partial, content: [{ type: "text" as const, text: "late" }] };
    stream.push({ type: "text_delta", contentIndex: 0, delta: "late", partial: text });
    stream.push({ type: "done", reason: "stop", message: text });
    // What the stream step still does is microtasks only: one macrotask turn lets all of it run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(afterStop).toEqual([]);
  });
  // Found by the restore property (seed 2042074115: an async sink, an abort delivered with the
  // response's message_end, the run persisted on that abort while still in `streaming`). The reply
  // had not reached the run, so R13 re-issues the request; the first process's message_end belongs
  // to the superseded attempt. (The harness had assumed a delivered message_end meant the request
  // was done; the run was right.) Expected: the restored run ends with one aborted response.
  it("R13: a run persisted in streaming after its response's message_end was delivered re-issues the request", async () => {
    let persisted: string | undefined;
    const options = (): AgentRunOptions => ({ streamFn: scriptedStreamFn([{ content: [text("answer")] }, { content: [text("again")] }]), config: { model: scriptedModel, convertToLlm: defaultConvertToLlm } });
    const first = createActor(createAgentRunLogic(options()), { input: hi });
    const seen: AgentEvent[] = [];
    agentEvents(first).subscribe((event) => {
      seen.push(event as AgentEvent);
      // The message_end has been delivered; the stream step's reply comes only after the sink settles.
      if (event.type === "message_end" && event.message.role === "assistant" && persisted === undefined) {
        expect(JSON.stringify(first.getSnapshot().value)).toContain("streaming");
        persisted = JSON.stringify(first.getPersistedSnapshot());
        first.stop();
      }
    });
    first.start();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(persisted).toBeDefined();
    const second = createActor(createAgentRunLogic(options()), { snapshot: JSON.parse(persisted!), input: hi });
    const events: string[] = [];
    agentEvents(second).subscribe((event) => events.push(event.type));
    second.start();
    const output = await toPromise(second);
    expect(events.filter((type) => type !== "message_update")).toEqual(["message_start", "message_end", "turn_end", "agent_end"]);
    expect(output.map((message) => message.role)).toEqual(["user", "assistant"]);
  }, 2_000);
});
