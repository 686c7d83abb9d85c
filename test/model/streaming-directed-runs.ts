/**
 * Directed runs of streaming mode (SPEC R70–R73): real runs, one per situation, that take the
 * states and transitions of `turn.requesting.streamingWithTools`, `runningStreamedCalls` and the
 * tool-call machine's streamed entry (`checking` → `waitingToStart` → `preflighting`), which the
 * model's synthetic paths (pi's mode) do not enter. Each hand-driven stream waits on the tools'
 * own progress (promises, no timers), so each run takes its transitions deterministically; each is
 * checked for a well-formed event sequence and for what the rule says.
 */
import { createActor, toPromise, type AnyActorRef } from "xstate";
import type { AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, AnyAgentEvent, AssistantMessage, StreamFn, ToolCall } from "../../src/index.js";
import { agentEvents, createAgentRunLogic, createRequestLimiter, emptyUsage, PushAssistantStream, scriptedModel, scriptedStreamFn, text } from "../../src/index.js";
import { eventProblems } from "../property/invariants.js";
import { FAULTY_TOOLS, liveActorProblems, restoredRun, runLoop, tracer, type Coverage, type RunTrace } from "./harness.js";

type Directed = (coverage: Coverage) => Promise<string[]>;

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });
const ok = (value: string): AgentToolResult => ({ content: [{ type: "text", text: value }], details: {} });
const base: AgentLoopConfig = { model: scriptedModel, convertToLlm: (messages) => messages as never, streamingToolExecution: true };
const never = <T>() => new Promise<T>(() => {});

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const mk = (name: string, execute: AgentTool["execute"], extra: Partial<AgentTool> = {}): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: {} },
  execute,
  ...extra,
});
const safe = { isConcurrencySafe: () => true };

const call = (id: string, name: string): ToolCall => ({ type: "toolCall", id, name, arguments: {} });
function message(content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"] = "toolUse", extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return { role: "assistant", content, api: "scripted", provider: "scripted", model: "scripted", usage: emptyUsage(), stopReason, timestamp: 1, ...extra };
}

/**
 * One response played by hand: `start`, then per step either a call (its toolcall_start/end) or a
 * wait on a promise, then the terminal event for `end` (calls listed in `final` go into the final
 * message even when they were never reported, as a provider without per-block events does).
 */
interface HandResponse {
  steps: ({ call: ToolCall } | { wait: Promise<unknown> })[];
  final?: ToolCall[];
  /** The final message's whole content instead (a provider whose final message drops calls it reported). */
  finalContent?: AssistantMessage["content"];
  stopReason?: AssistantMessage["stopReason"];
  extra?: Partial<AssistantMessage>;
}
function handStream(responses: (HandResponse | "answer")[]): StreamFn {
  let request = 0;
  const answer = scriptedStreamFn([{ content: [text("answered")] }]);
  return (model, context, options) => {
    const response = responses[request++] ?? "answer";
    if (response === "answer") return answer(model, context, options);
    const stream = new PushAssistantStream();
    void (async () => {
      const content: AssistantMessage["content"] = [];
      stream.push({ type: "start", partial: message(content.slice()) });
      for (const step of response.steps) {
        if ("wait" in step) {
          await step.wait;
          continue;
        }
        content.push(step.call);
        const index = content.length - 1;
        stream.push({ type: "toolcall_start", contentIndex: index, partial: message(content.slice()) });
        stream.push({ type: "toolcall_end", contentIndex: index, toolCall: step.call, partial: message(content.slice()) });
        // Each call's report reaches the run before the next event.
        await Promise.resolve();
      }
      const final = message(response.finalContent ?? [...content, ...(response.final ?? [])], response.stopReason ?? "toolUse", response.extra);
      if (final.stopReason === "error" || final.stopReason === "aborted") stream.push({ type: "error", reason: final.stopReason, error: { ...final, errorMessage: "scripted failure" } });
      else stream.push({ type: "done", reason: final.stopReason as "toolUse" | "stop" | "length", message: final });
    })();
    return stream;
  };
}

/** The result text of the call `id` in the run's messages. */
function resultOf(messages: AgentMessage[], id: string): string | undefined {
  const found = messages.find((m) => m.role === "toolResult" && m.toolCallId === id) as { content: { text: string }[] } | undefined;
  return found?.content[0]?.text;
}

/** A run whose one response reports a call `s` of a tool that never settles, then ends as `ending` says (once the call started). */
function runningSlowCall(config: AgentLoopConfig, ending: Omit<HandResponse, "steps">): Parameters<typeof runLoop>[0] {
  const started = deferred();
  return {
    prompts: [user("hi")],
    context: { messages: [], tools: [mk("slow", () => (started.resolve(), never()), safe)] },
    config,
    streamFn: handStream([{ steps: [{ call: call("s", "slow") }, { wait: started.promise }], ...ending }]),
  };
}

/**
 * R72's outcome for a call that was running when its response ended without it: its
 * tool_execution_end says "Operation aborted" and no result message follows (`why` names the case).
 */
function runningCallAborted(run: Awaited<ReturnType<typeof runLoop>>, why: string): string[] {
  const end = run.events.find((event) => event.type === "tool_execution_end") as { result?: { content: { text: string }[] } } | undefined;
  const problems = end?.result?.content[0]?.text === "Operation aborted" ? [] : [`R72: end ${JSON.stringify(end)}`];
  if (run.messages.some((m) => m.role === "toolResult")) problems.push(`R72: a result message ${why}`);
  return problems;
}

/** The run's invariant problems (but those `waived` matches: an invariant the scenario breaks on purpose) and what `expect` finds. */
async function checked(coverage: Coverage, args: Parameters<typeof runLoop>[0], expect: (run: Awaited<ReturnType<typeof runLoop>>) => string[], waived?: RegExp): Promise<string[]> {
  const run = await runLoop({ ...args, coverage });
  const invariants = eventProblems(run.events, run.messages, { streamingTools: true }).filter((problem) => !waived?.test(problem));
  return [...invariants, ...liveActorProblems(run.actor), ...expect(run)];
}

export const streamingDirectedRuns: Record<string, Directed> = {
  // R82, R70: a streamed call that needs approval waits while the response still streams; the
  // decision reaches it there (approved: it runs; rejected: the reason is its result).
  ...Object.fromEntries(
    (["approve", "reject"] as const).map((decision) => [
      `R82: a streamed call waits for approval during the stream (${decision})`,
      (async (coverage) => {
        const decided = deferred();
        let actor: AnyActorRef | undefined;
        const tools = [mk("write", async () => ok("written"), { needsApproval: true })];
        const streamFn = handStream([{ steps: [{ call: call("w", "write") }, { wait: decided.promise }] }]);
        return checked(
          coverage,
          {
            prompts: [user("hi")],
            context: { messages: [], tools },
            config: base,
            streamFn,
            onActor: (a) => (actor = a),
            onEvent: (event) => {
              if (event.type === "tool_approval_requested") {
                const approvalId = event.approvalId;
                queueMicrotask(() =>
                  actor!.send(decision === "approve" ? { type: "approval.approve", approvalId } : { type: "approval.reject", approvalId, reason: "not now" }),
                );
              }
              if (event.type === "tool_approval_resolved") decided.resolve();
            },
          },
          (run) => {
            const want = decision === "approve" ? "written" : "not now";
            return resultOf(run.messages, "w") === want ? [] : [`R82: the call's result is ${resultOf(run.messages, "w")}, not ${want}`];
          },
        );
      }) satisfies Directed,
    ]),
  ),

  // R70, R71: a safe call runs and ends during the stream; an unsafe one, an unknown tool and a
  // call the provider reports only in its final message run after it; results in source order.
  ...Object.fromEntries(
    ([false, true] as const).map((withFinishTurn) => [
      `R70: calls during and after the stream${withFinishTurn ? " (finishTurn)" : ""}`,
      (async (coverage) => {
        const readDone = deferred();
        const streamEnded = deferred();
        const tools = [
          mk("read", async () => (readDone.resolve(), ok("read")), safe),
          mk("write", async () => (await streamEnded.promise, ok("written"))),
          mk("late", async () => ok("late")),
        ];
        const streamFn = handStream([
          { steps: [{ call: call("r", "read") }, { wait: readDone.promise }, { call: call("m", "missing") }, { call: call("w", "write") }], final: [call("l", "late")] },
        ]);
        return checked(
          coverage,
          {
            prompts: [user("hi")],
            context: { messages: [], tools },
            config: { ...base, ...(withFinishTurn ? { finishTurn: async () => undefined } : {}) },
            streamFn,
            onEvent: (event) => void (event.type === "message_end" && event.message.role === "assistant" && streamEnded.resolve()),
          },
          (run) => {
            const ids = run.messages.filter((m) => m.role === "toolResult").map((m) => (m as { toolCallId: string }).toolCallId);
            const problems = ids.join() === "r,m,w,l" ? [] : [`R71: results in the order ${ids.join()}`];
            if (resultOf(run.messages, "m") !== "Tool missing not found") problems.push(`R21: ${resultOf(run.messages, "m")}`);
            return problems;
          },
        );
      }) satisfies Directed,
    ]),
  ),

  // R72: an error response while a call runs: it ends Operation aborted, no result message (with and without finishTurn).
  ...Object.fromEntries(
    ([false, true] as const).map((withFinishTurn) => [
      `R72: an error response while a call runs${withFinishTurn ? " (finishTurn)" : ""}`,
      (async (coverage) =>
        checked(
          coverage,
          runningSlowCall({ ...base, ...(withFinishTurn ? { finishTurn: async () => undefined } : {}) }, { stopReason: "error" }),
          (run) => runningCallAborted(run, "after an error response"),
        )) satisfies Directed,
    ]),
  ),

  // R72 (a provider's inconsistency): a final answer without the call it reported while streaming
  // is not answered with that call: the running call is aborted as after an error response, no
  // result message, and the run ends with the answer.
  async "R72: a final answer that drops a call it reported while streaming"(coverage) {
    return checked(
      coverage,
      runningSlowCall(base, { finalContent: [{ type: "text", text: "done after all" }], stopReason: "stop" }),
      (run) => {
        const problems = runningCallAborted(run, "for a call the answer dropped");
        const last = run.messages.at(-1);
        if (last?.role !== "assistant" || last.stopReason !== "stop") problems.push(`the run did not end with the answer: ${JSON.stringify(last)}`);
        return problems;
      },
      // R70's "the calls started are the response's calls": this provider's final message no
      // longer lists the call it reported and the run started.
      /tool starts \["s"\] are not (calls of|every call) \[\]/,
    );
  },

  // R72 (a provider's inconsistency): a final message whose calls replace one it reported while
  // streaming (matched by id, never by place): the replaced call, still running, is aborted as
  // after an error response (no result message); the new call runs after the response ended.
  async "R72: a final message that replaces a call it reported while streaming"(coverage) {
    const slow = runningSlowCall(base, { finalContent: [call("x", "late")] });
    const tools = [...slow.context.tools!, mk("late", async () => ok("late"))];
    return checked(
      coverage,
      { ...slow, context: { ...slow.context, tools } },
      (run) => {
        const problems = runningCallAborted({ ...run, messages: run.messages.filter((m) => m.role !== "toolResult" || m.toolCallId !== "x") }, "for a call the final message replaced");
        if (resultOf(run.messages, "x") !== "late") problems.push(`R70: the new call's result is ${resultOf(run.messages, "x")}`);
        return problems;
      },
      // R70's "the calls started are the response's calls": s was reported and started, then replaced.
      /tool starts \["s","x"\] are not (calls of|every call) \["x"\]/,
    );
  },

  // R71 (a provider's inconsistency): a final message that lists the streamed calls in another
  // order: each keeps its one execution (matched by id); results in the final message's order.
  async "R71: a final message that reorders the calls it reported while streaming"(coverage) {
    const tools = [mk("read", async () => ok("read"), safe), mk("grep", async () => ok("grep"), safe)];
    return checked(
      coverage,
      {
        prompts: [user("hi")],
        context: { messages: [], tools },
        config: base,
        streamFn: handStream([{ steps: [{ call: call("a", "read") }, { call: call("b", "grep") }], finalContent: [call("b", "grep"), call("a", "read")] }]),
      },
      (run) => {
        const starts = run.events.filter((event) => event.type === "tool_execution_start").map((event) => event.toolCallId);
        const results = run.messages.filter((m) => m.role === "toolResult").map((m) => `${(m as { toolCallId: string }).toolCallId}:${resultOf(run.messages, (m as { toolCallId: string }).toolCallId)}`);
        return starts.join() === "a,b" && results.join() === "b:grep,a:read" ? [] : [`R71: starts ${starts.join()}, results ${results.join()}`];
      },
      // R70's "calls start in source order": they started in the streamed order, which the final message changed.
      /tool starts \["a","b"\] are not (calls of \["b","a"\] in source order|every call \["b","a"\])/,
    );
  },

  // R72, R29: aborted while the response streams: the running call settles `Operation aborted`
  // (and cancels nothing), a call reported afterwards is checked but never starts.
  async "R72: the run is aborted while the response streams"(coverage) {
    const started = deferred();
    const firstEnded = deferred();
    let actor: AnyActorRef | undefined;
    const tools = [
      mk("slow", (_id, _args, signal) => {
        started.resolve();
        // Aborted once it executes (the abort reaches it through its signal, R29).
        queueMicrotask(() => actor!.send({ type: "run.abort" }));
        return new Promise<AgentToolResult>((resolve) => signal?.addEventListener("abort", () => resolve(ok("stopped"))));
      }, {
        ...safe,
        cancelSiblingsOnError: true,
      }),
    ];
    return checked(
      coverage,
      {
        prompts: [user("hi")],
        context: { messages: [], tools },
        config: base,
        onActor: (a) => (actor = a),
        onEvent: (event) => {
          if (event.type === "tool_execution_end" && event.toolCallId === "s1") firstEnded.resolve();
        },
        streamFn: handStream([{ steps: [{ call: call("s1", "slow") }, { wait: started.promise }, { wait: firstEnded.promise }, { call: call("s2", "slow") }], stopReason: "aborted" }]),
      },
      (run) => {
        const ends = run.events.filter((event) => event.type === "tool_execution_end").map((event) => `${event.toolCallId}:${(event.result as AgentToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("")}`);
        const starts = run.events.filter((event) => event.type === "tool_execution_start").map((event) => event.toolCallId);
        const problems = ends.join() === "s1:Operation aborted" && starts.join() === "s1" ? [] : [`R72: starts ${starts.join()}, ends ${ends.join()}`];
        if (run.messages.some((m) => m.role === "toolResult")) problems.push("R72: a result message after an aborted response");
        return problems;
      },
    );
  },

  // R72: a length response with a started call: its end and result carry R28's text.
  async "R72: a length response while a call runs"(coverage) {
    const started = deferred();
    const tools = [mk("slow", () => (started.resolve(), never()), safe)];
    return checked(
      coverage,
      { prompts: [user("hi")], context: { messages: [], tools }, config: base, streamFn: handStream([{ steps: [{ call: call("s", "slow") }, { wait: started.promise }], stopReason: "length" }]) },
      (run) => (/output token limit/.test(resultOf(run.messages, "s") ?? "") ? [] : [`R72: ${resultOf(run.messages, "s")}`]),
    );
  },

  // R73 during the stream: the failing call cancels a sibling still in its beforeToolCall (preflighting) and a later one.
  async "R73: a sibling fails during the stream"(coverage) {
    const inGate = deferred();
    const failedEnded = deferred();
    const tools = [mk("fails", async () => (await inGate.promise, Promise.reject(new Error("failed"))), { ...safe, cancelSiblingsOnError: true }), mk("slow", async () => ok("never"), safe)];
    return checked(
      coverage,
      {
        prompts: [user("hi")],
        context: { messages: [], tools },
        config: { ...base, beforeToolCall: ({ toolCall: c }) => (c.name === "slow" ? (inGate.resolve(), never()) : Promise.resolve(undefined)) },
        // The response goes on until the failure was reported: it happens mid-stream.
        streamFn: handStream([{ steps: [{ call: call("f", "fails") }, { call: call("s", "slow") }, { wait: failedEnded.promise }], final: [call("x", "slow")] }]),
        onEvent: (event) => void (event.type === "tool_execution_end" && event.toolCallId === "f" && failedEnded.resolve()),
      },
      (run) => {
        const cancelled = "Cancelled: sibling tool call fails failed";
        return resultOf(run.messages, "s") === cancelled && resultOf(run.messages, "x") === cancelled ? [] : [`R73: ${resultOf(run.messages, "s")} / ${resultOf(run.messages, "x")}`];
      },
    );
  },

  // R73 after the stream: the failing call's unsafe sibling had not started; it is not run.
  async "R73: a sibling fails after the stream"(coverage) {
    const tools = [mk("fails", async () => Promise.reject(new Error("failed")), { ...safe, cancelSiblingsOnError: true }), mk("write", async () => ok("never"))];
    return checked(
      coverage,
      { prompts: [user("hi")], context: { messages: [], tools }, config: base, streamFn: handStream([{ steps: [], final: [call("f", "fails"), call("w", "write")] }]) },
      (run) => (resultOf(run.messages, "w") === "Cancelled: sibling tool call fails failed" ? [] : [`R73: ${resultOf(run.messages, "w")}`]),
    );
  },

  // A runtime defect: a streamed call's actor crashes, during the stream and after it (still one result each, R26).
  async "R26: a streamed call's actor crashes during and after the stream"(coverage) {
    const first = deferred();
    const tools = [mk(FAULTY_TOOLS.crash, async () => (first.resolve(), ok("x")), safe)];
    return checked(
      coverage,
      {
        prompts: [user("hi")],
        context: { messages: [], tools },
        config: base,
        faulty: true,
        streamFn: handStream([{ steps: [{ call: call("c1", FAULTY_TOOLS.crash) }, { wait: first.promise }, { wait: new Promise((resolve) => setTimeout(resolve, 0)) }], final: [call("c2", FAULTY_TOOLS.crash)] }]),
      },
      (run) => (run.messages.filter((m) => m.role === "toolResult").length === 2 ? [] : ["R26: not one result per call"]),
    );
  },

  // R60, R62, R61 in streaming mode: each way a response is asked for again leads back to the streaming state.
  async "R60: a withheld overload is retried into streaming mode"(coverage) {
    return checked(
      coverage,
      {
        prompts: [user("hi")],
        context: { messages: [], tools: [] },
        config: { ...base, retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 } },
        streamFn: scriptedStreamFn([{ failure: "overloaded" }, { content: [text("answered")] }]),
      },
      () => [],
    );
  },
  async "R62: an overflow is compacted, then asked again in streaming mode"(coverage) {
    return checked(
      coverage,
      {
        prompts: [user("hi")],
        context: { messages: [], tools: [] },
        config: { ...base, compact: { compactor: async (request) => [...request.messages.slice(0, 1)] } },
        streamFn: scriptedStreamFn([{ failure: "prompt_too_long" }, { content: [text("answered")] }]),
      },
      () => [],
    );
  },
  ...Object.fromEntries(
    (["plain", "getApiKey", "requestLimiter"] as const).map((via) => [
      `R61: an escalation asks again in streaming mode (${via})`,
      (async (coverage) => {
        const extra: Partial<AgentLoopConfig> =
          via === "getApiKey" ? { getApiKey: () => "key" } : via === "requestLimiter" ? { requestLimiter: createRequestLimiter({ maxConcurrent: 1 }) } : {};
        return checked(
          coverage,
          {
            prompts: [user("hi")],
            context: { messages: [], tools: [] },
            config: { ...base, ...extra, maxTokens: 100, outputLimit: { escalatedMaxTokens: 1000 } },
            streamFn: scriptedStreamFn([{ content: [text("cut")], stopReason: "length" }, { content: [text("answered")] }]),
          },
          (run) => (run.requests === 2 ? [] : [`R61: ${run.requests} requests`]),
        );
      }) satisfies Directed,
    ]),
  ),

  // R13, R70: persisted while a streamed call waits behind an unsafe one that executes: the
  // restored waiting call reports its check again, the run tells its started call again.
  async "R13: restored while a streamed call waits to start"(coverage) {
    const trace: RunTrace = { run: [], toolCalls: [] };
    const inspect = tracer(trace, coverage);
    const executing = deferred();
    const options = (process: "first" | "second") => ({
      // (The restored run asks only for the answer to the results.)
      streamFn: handStream(process === "first" ? [{ steps: [], final: [call("w1", "write"), call("w2", "write")] }] : []),
      tools: [mk("write", process === "first" ? () => (executing.resolve(), never()) : async () => ok("written"), { replay: "safe" })],
      config: base,
    });
    const { events, output, persistedChildren } = await restoredRun(options, executing.promise, inspect);
    const waiting = persistedChildren["tool:1"];
    const problems = [...eventProblems(events, undefined, { streamingTools: true })];
    if (waiting !== "waitingToStart") problems.push(`persisted with tool:1 in ${JSON.stringify(waiting)}`);
    if (resultOf(output, "w1") !== "written" || resultOf(output, "w2") !== "written") problems.push(`results ${resultOf(output, "w1")} / ${resultOf(output, "w2")}`);
    return problems;
  },

  // R13, R82, R70: persisted while a streamed call waits for approval: the restored call reports
  // its wait again, the run keeps the id it issued (no second request), and approving runs it once.
  async "R13: restored while a streamed call waits for approval"(coverage) {
    const trace: RunTrace = { run: [], toolCalls: [] };
    const inspect = tracer(trace, coverage);
    const requested = deferred<string>();
    let executed = 0;
    const options = (process: "first" | "second") => ({
      streamFn: handStream(process === "first" ? [{ steps: [{ call: call("w", "write") }] }] : []),
      tools: [mk("write", async () => (executed++, ok("written")), { needsApproval: true })],
      config: { ...base, onRuntimeEvent: (event: AnyAgentEvent) => void (event.type === "tool_approval_requested" && requested.resolve(event.approvalId)) },
    });
    const input = { prompts: [user("hi")], messages: [] };
    const first = createActor(createAgentRunLogic(options("first")), { input, inspect });
    const events: AnyAgentEvent[] = [];
    agentEvents(first).subscribe((event) => events.push(event));
    first.start();
    const approvalId = await requested.promise;
    const snapshot = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const second = createActor(createAgentRunLogic(options("second")), { snapshot, input, inspect });
    agentEvents(second).subscribe((event) => events.push(event));
    second.start();
    // The restored call reported its wait again; the run kept the id it had issued.
    await Promise.resolve();
    second.send({ type: "approval.approve", approvalId });
    const output = (await toPromise(second)) as AgentMessage[];
    const problems = [...eventProblems(events, undefined, { streamingTools: true })];
    const requests = events.filter((event) => event.type === "tool_approval_requested").length;
    if (requests !== 1) problems.push(`R82: ${requests} approval requests (one expected: the restored call keeps its id)`);
    if (resultOf(output, "w") !== "written" || executed !== 1) problems.push(`R82: result ${resultOf(output, "w")}, executed ${executed} times`);
    return problems;
  },
};
