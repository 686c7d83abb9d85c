/**
 * Real runs for the root transitions no model path takes, because their events do not come from
 * a step the model feeds: `run.abort` (the run's signal aborted, R29) and `step.reissue` (sent by
 * a restored step worker to the run and to each tool call, R13). Each run is checked for a
 * well-formed event sequence and for what the rule says, and records the coverage of every run and
 * tool-call actor it had.
 */
import type { AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { eventProblems } from "../property/invariants.js";
import { approveToolCall, rejectToolCall } from "../../src/agent/index.js";
import type { RunActor } from "../../src/index.js";
import { Coverage, liveActorProblems, memo, restoredRun, runLoop } from "./harness.js";
import { streamingDirectedRuns } from "./streaming-directed-runs.js";
import { ownQueuePolls } from "../../src/actors/own-queues.js";

export interface DirectedResult {
  problems: string[];
  coverage: Coverage;
}

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });
const ok = (value: string): AgentToolResult => ({ content: [{ type: "text", text: value }], details: {} });
const base: AgentLoopConfig = { model: scriptedModel, convertToLlm: (messages) => messages as never };

/** A promise that never settles: the first process's step is still in flight when it is persisted. */
const never = <T>() => new Promise<T>(() => {});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

type Directed = (coverage: Coverage) => Promise<string[]>;

export const directedRuns: Record<string, Directed> = {
  // R3 deferred: an Agent's own queues, empty as the run starts, so the initial steering poll is
  // the first job's check; a listener steers at agent_start, so the first job does not begin
  // (`step.steeringQueued`) and the initial poll takes the message before the first request.
  async "step.steeringQueued: steering queued while the run's first events were delivered"(coverage) {
    const steering: AgentMessage[] = [];
    const polls = ownQueuePolls(
      { followUpsEmpty: () => true, steeringEmpty: () => steering.length === 0 },
      async () => steering.splice(0),
      async () => [],
    );
    const run = await runLoop({
      prompts: [user("hi")],
      context: { messages: [], tools: [] },
      config: { ...base, ...polls },
      streamFn: scriptedStreamFn([{ content: [text("answered")] }]),
      onEvent: (event) => {
        if (event.type === "agent_start") steering.push(user("steer"));
      },
      coverage,
    });
    const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
    if (!run.trace.run.some((step) => step.event === "step.steeringQueued")) problems.push("the run never received step.steeringQueued");
    const roles = run.messages.map((m) => (m.role === "user" ? (m as { content: string }).content : m.role));
    if (JSON.stringify(roles) !== JSON.stringify(["hi", "steer", "assistant"])) problems.push(`R3: the run added ${JSON.stringify(roles)}`);
    return problems;
  },

  // R29: the signal is aborted while the response streams; the run takes `run.abort` and the
  // request ends `aborted`, which ends the run (R6).
  async "run.abort: aborted while streaming"(coverage) {
    const controller = new AbortController();
    const run = await runLoop({
      prompts: [user("hi")],
      context: { messages: [], tools: [] },
      config: base,
      streamFn: scriptedStreamFn([{ content: [text("a long answer that keeps on going")], chunkSize: 2 }]),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "message_update") controller.abort();
      },
      coverage,
    });
    const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
    if (!run.trace.run.some((step) => step.event === "run.abort")) problems.push("the run never received run.abort");
    const last = run.messages.at(-1) as { stopReason?: string } | undefined;
    if (last?.stopReason !== "aborted") problems.push(`R29: the run ended with ${last?.stopReason}, not aborted`);
    return problems;
  },

  // R60, R29: aborted while a retry backs off: the wait ends at once and the request ends aborted
  // (the withheld failure never shows); with and without finishTurn (R6: called, decision ignored).
  ...Object.fromEntries(
    ([false, true] as const).map((withFinishTurn) => [
      `run.abort: aborted while a retry backs off${withFinishTurn ? " (finishTurn)" : ""}`,
      (async (coverage) => {
        const controller = new AbortController();
        const run = await runLoop({
          prompts: [user("hi")],
          context: { messages: [], tools: [] },
          config: {
            ...base,
            retry: { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000 },
            onRuntimeEvent: (event) => {
              if (event.type === "retry_scheduled") controller.abort();
            },
            ...(withFinishTurn ? { finishTurn: async () => ({ action: "continue" as const }) } : {}),
          },
          streamFn: scriptedStreamFn([{ setupError: "Anthropic API error 529 overloaded_error: Overloaded" }, { content: [text("never")] }]),
          signal: controller.signal,
          coverage,
        });
        const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
        const types = run.events.map((event) => event.type).join();
        const expected = "agent_start,turn_start,message_start,message_end,retry_scheduled,message_start,message_end,turn_end,agent_end";
        if (types !== expected) problems.push(`events ${types}`);
        const last = run.messages.at(-1) as { stopReason?: string; errorMessage?: string } | undefined;
        if (last?.stopReason !== "aborted" || last.errorMessage !== "Operation aborted") problems.push(`R29: the run ended with ${JSON.stringify(last)}`);
        if (run.requests !== 1) problems.push(`${run.requests} requests, expected 1`);
        const end = run.events.at(-1) as { reason?: string };
        if (end.reason !== "aborted") problems.push(`agent_end.reason ${end.reason}`);
        return problems;
      }) satisfies Directed,
    ]),
  ),
  // R67: after the abort, the grace (0 ms on the system clock: its timer is the next macrotask)
  // runs out while one call's beforeToolCall never settles: `step.failed` carries the
  // abandonment, `failing` answers the started calls (R55) and ends the run aborted.
  async "step.failed (R67): a beforeToolCall abandoned after the abort grace"(coverage) {
    const controller = new AbortController();
    const tools: AgentTool[] = ["a", "b"].map((name) => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute: async () => ok(name) }));
    const run = await runLoop({
      prompts: [user("hi")],
      context: { messages: [], tools },
      config: {
        ...base,
        abortGraceMs: 0,
        beforeToolCall: ({ toolCall: call }) => (call.name === "b" ? (controller.abort(), never()) : Promise.resolve(undefined)),
      },
      streamFn: scriptedStreamFn([{ content: [toolCall("a", {}, "a1"), toolCall("b", {}, "b1")] }, { content: [text("never")] }]),
      signal: controller.signal,
      coverage,
    });
    const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
    if (!run.trace.run.some((step) => step.event === "step.failed")) problems.push("the run never received step.failed");
    const end = run.events.at(-1) as { type: string; reason?: string };
    if (end.reason !== "aborted") problems.push(`R67: agent_end.reason ${end.reason}, not aborted`);
    const results = run.messages.filter((m) => m.role === "toolResult");
    if (results.length !== 2) problems.push(`R55: ${results.length} results for the two started calls`);
    const last = run.messages.at(-1) as { stopReason?: string; errorMessage?: string };
    if (last.stopReason !== "aborted" || !/beforeToolCall did not stop within 0 ms/.test(last.errorMessage ?? "")) problems.push(`R67: last message ${JSON.stringify(last)}`);
    return problems;
  },

  // R73: a call whose tool cancels on error fails: the parallel batch's running calls are
  // cancelled (from executing, and from finalizing while afterToolCall runs), the sequential
  // batch's later calls are not run (with and without finishTurn).
  ...Object.fromEntries(
    (
      [
        ["parallel, a sibling executing", "parallel", false],
        ["parallel, a sibling in afterToolCall", "parallel", true],
        ["sequential", "sequential", false],
        ["sequential (finishTurn)", "sequential", true],
      ] as const
    ).map(([label, toolExecution, hook]) => [
      `R73: a failed call cancels its siblings (${label})`,
      (async (coverage) => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const mk = (name: string, execute: AgentTool["execute"], extra: Partial<AgentTool> = {}): AgentTool => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute, ...extra });
        const tools = [
          mk("waits", (_id, _args, signal) => (toolExecution === "parallel" && !hook ? (release(), new Promise(() => signal?.addEventListener("abort", () => {}))) : Promise.resolve(ok("done")))),
          mk(
            "fails",
            async () => {
              if (toolExecution === "parallel") await gate;
              throw new Error("failed");
            },
            { cancelSiblingsOnError: true },
          ),
          mk("later", async () => ok("never")),
        ];
        const calls = toolExecution === "parallel" ? ["waits", "fails"] : ["fails", "later"];
        const run = await runLoop({
          prompts: [user("hi")],
          context: { messages: [], tools },
          config: {
            ...base,
            toolExecution,
            ...(hook && toolExecution === "parallel"
              ? {
                  afterToolCall: async ({ toolCall: call }) => {
                    if (call.name !== "waits") return undefined;
                    release();
                    return new Promise<undefined>(() => {});
                  },
                }
              : {}),
            ...(hook && toolExecution === "sequential" ? { finishTurn: async () => undefined } : {}),
          },
          streamFn: scriptedStreamFn([{ content: calls.map((name, i) => toolCall(name, {}, `k${i}`)) }, { content: [text("after")] }]),
          coverage,
        });
        const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
        const results = run.messages.filter((m) => m.role === "toolResult").map((m) => (m as { content: { text: string }[] }).content[0].text);
        const expected = toolExecution === "parallel" ? ["Cancelled: sibling tool call fails failed", "failed"] : ["failed", "Cancelled: sibling tool call fails failed"];
        if (JSON.stringify(results) !== JSON.stringify(expected)) problems.push(`R73: results ${JSON.stringify(results)}`);
        return problems;
      }) satisfies Directed,
    ]),
  ),

  // R82: a call of a parallel batch waits for approval while its sibling executes; the run takes
  // the decision (`approval.approve` / `approval.reject` on `executingTools`) and forwards it.
  ...Object.fromEntries(
    (["approve", "reject"] as const).map((decision) => [
      `R82: a waiting call is ${decision === "approve" ? "approved" : "rejected"}`,
      (async (coverage) => {
        const executed: string[] = [];
        const mk = (name: string, needsApproval: boolean): AgentTool => ({
          name,
          label: name,
          description: name,
          parameters: { type: "object", properties: {} },
          needsApproval,
          execute: async () => (executed.push(name), ok(name)),
        });
        let actor: RunActor | undefined;
        const run = await runLoop({
          prompts: [user("hi")],
          context: { messages: [], tools: [mk("guarded", true), mk("free", false)] },
          config: base,
          streamFn: scriptedStreamFn([{ content: [toolCall("guarded", {}, "g1"), toolCall("free", {}, "f1")] }, { content: [text("after")] }]),
          onActor: (a) => (actor = a),
          onEvent: (event) => {
            if (event.type !== "tool_approval_requested") return;
            queueMicrotask(() => (decision === "approve" ? approveToolCall(actor!, event.approvalId) : rejectToolCall(actor!, event.approvalId, "no")));
          },
          coverage,
        });
        const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
        const results = run.messages.filter((m) => m.role === "toolResult").map((m) => (m as { content: { text: string }[] }).content[0].text);
        const expected = decision === "approve" ? ["guarded", "free"] : ["no", "free"];
        if (JSON.stringify(results) !== JSON.stringify(expected)) problems.push(`R82: results ${JSON.stringify(results)}`);
        if (executed.join() !== (decision === "approve" ? "free,guarded" : "free")) problems.push(`R82: executed ${executed.join()}`);
        return problems;
      }) satisfies Directed,
    ]),
  ),

  // R13: persisted while finishTurn is in flight; the restored worker re-issues it, the new
  // process's finishTurn answers, and the run ends as it would have.
  async "step.reissue: restored while the run waits in finishTurn"(coverage) {
    const reached = deferred();
    let secondCalls = 0;
    const restored = await restoredRun(
      (process) => ({
        streamFn: scriptedStreamFn([{ content: [text("answer")] }]),
        config: {
          ...base,
          finishTurn: async () => {
            if (process === "first") {
              reached.resolve();
              return never();
            }
            secondCalls++;
            return undefined;
          },
        },
      }),
      reached.promise,
      (event) => coverage.record(event),
    );
    const problems = [...eventProblems(restored.events, restored.output), ...liveActorProblems(restored.actor as never)];
    if (restored.persistedAt !== "turn.finishingTurn") problems.push(`persisted in ${restored.persistedAt}, not turn.finishingTurn`);
    if (secondCalls !== 1) problems.push(`R13: the restored run called finishTurn ${secondCalls} times, not once`);
    if (restored.output.map((m) => m.role).join() !== "user,assistant") problems.push(`unexpected output ${restored.output.map((m) => m.role).join()}`);
    return problems;
  },

  // R13: persisted while a call executes; the restored worker re-issues the execution, and the
  // call follows its tool's replay rule: a replay-safe tool runs again, any other gets the
  // interrupted result without running twice. Exactly one result either way (R26).
  ...Object.fromEntries(
    (["safe", "never"] as const).map((replay) => [
      `step.reissue: restored while a ${replay === "safe" ? "replay-safe" : "non-replayable"} call executes`,
      (async (coverage) => {
        const reached = deferred();
        const executions: string[] = [];
        const restored = await restoredRun(
          (process) => {
            const work: AgentTool = {
              name: "work",
              label: "work",
              description: "work",
              parameters: { type: "object", properties: {} },
              replay,
              execute: async () => {
                executions.push(process);
                if (process === "first") {
                  reached.resolve();
                  return never();
                }
                return ok("done");
              },
            };
            return {
              tools: [work],
              streamFn: scriptedStreamFn((call) =>
                call.context.messages.some((m) => m.role === "toolResult") ? { content: [text("finished")] } : { content: [toolCall("work", {}, "w1")] },
              ),
              config: { ...base, toolExecution: "sequential" },
            };
          },
          reached.promise,
          (event) => coverage.record(event),
        );
        const problems = [...eventProblems(restored.events, restored.output), ...liveActorProblems(restored.actor as never)];
        if (restored.persistedAt !== "turn.executingTools.runningSequentially") problems.push(`persisted in ${restored.persistedAt}`);
        const expected = replay === "safe" ? ["first", "second"] : ["first"];
        if (executions.join() !== expected.join()) problems.push(`R13: execute ran in ${executions.join() || "no process"}, expected ${expected.join()}`);
        const results = restored.output.filter((m) => m.role === "toolResult") as { isError: boolean; content: { text?: string }[] }[];
        if (results.length !== 1) problems.push(`R26: ${results.length} results for the call`);
        else if (results[0].isError !== (replay === "never")) problems.push(`R13: result ${JSON.stringify(results[0].content)}`);
        return problems;
      }) satisfies Directed,
    ]),
  ),
  // R70–R73: streaming mode (streaming-directed-runs.ts).
  ...streamingDirectedRuns,

  // R100: a text answer gets a reminder (askingForAnswer, then one more request); the valid answer ends the run.
  async "R100: a reminder, then a valid final answer"(coverage) {
    const run = await runLoop({
      prompts: [user("hi")],
      context: { messages: [], tools: [] },
      config: { ...base, output: { schema: answerSchema } },
      streamFn: scriptedStreamFn([{ content: [text("42")] }, { content: [toolCall("final_answer", { answer: 42 })] }]),
      coverage,
    });
    const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
    const end = run.events.at(-1) as { reason?: string; output?: unknown };
    if (end.reason !== "completed" || JSON.stringify(end.output) !== '{"answer":42}') problems.push(`R100: ended ${end.reason} with ${JSON.stringify(end.output)}`);
    return problems;
  },

  // R100: follow-ups polled first; text answers until the attempts run out (from askingForAnswer),
  // then invalid answers until they run out (from the turn's end).
  ...Object.fromEntries(
    (["text", "invalid"] as const).map((kind) => [
      `R100: ${kind} answers until output_invalid`,
      (async (coverage) => {
        const run = await runLoop({
          prompts: [user("hi")],
          context: { messages: [], tools: [] },
          config: { ...base, output: { schema: answerSchema, maxAttempts: 2 }, getFollowUpMessages: async () => [] },
          streamFn: scriptedStreamFn((_, i) => ({ content: [kind === "text" ? text("42") : toolCall("final_answer", { answer: "many" }, `a${i}`)] })),
          coverage,
        });
        const problems = [...eventProblems(run.events, run.messages), ...liveActorProblems(run.actor)];
        const end = run.events.at(-1) as { reason?: string; output?: unknown };
        if (end.reason !== "output_invalid" || "output" in end) problems.push(`R100: ended ${end.reason} with ${JSON.stringify(end.output)}`);
        if (run.requests !== 2) problems.push(`R100: ${run.requests} requests, expected 2`);
        return problems;
      }) satisfies Directed,
    ]),
  ),
};

const answerSchema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] };

/** Each directed run, played once (with its own coverage of both machines). */
export const playDirected = memo(async (name: string): Promise<DirectedResult> => {
  const coverage = new Coverage([runMachine, toolCallMachine]);
  const problems = await directedRuns[name](coverage);
  return { problems, coverage };
});
