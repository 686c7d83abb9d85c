/**
 * Tool batch (SPEC R20–R29): how the calls of one assistant message are started, prepared,
 * executed and finalized, in which order their events and result messages appear, and how a
 * batch ends (termination, truncation, abort).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { text, toolCall, type AgentEvent, type AgentTool, type AgentToolResult, type ToolResultMessage } from "../../src/index.js";
import {
  deferred,
  logged,
  ok,
  recorder,
  resultText,
  runScenario,
  summary,
  tool,
  toolResultsOf,
  untilAborted,
  wait,
  type Scenario,
} from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
const calls = (...names: string[]) => ({ content: names.map((name) => toolCall(name)) });

/** A tool that writes `exec:NAME` to the log when it runs. */
const loggedTool = (note: (entry: string) => void, name: string, extra: Partial<AgentTool> = {}, result?: () => Promise<AgentToolResult>) =>
  tool(
    name,
    async () => {
      note(`exec:${name}`);
      return result ? result() : ok(`${name} done`);
    },
    extra,
  );

/** One batch followed by a final answer; the log from the assistant's message_end to turn_end. */
async function batch(scenario: Omit<Scenario, "script"> & { script?: Scenario["script"] }, rec = recorder()) {
  const run = await runScenario({ script: [calls("a", "b"), answer("done")], ...scenario }, rec);
  const from = run.log.indexOf("message_end:assistant(toolUse)") + 1;
  const to = run.log.findIndex((entry, i) => i >= from && entry.startsWith("turn_end"));
  return { ...run, batchLog: run.log.slice(from, to + 1), results: toolResultsOf(run.messages) };
}

const endEvents = (events: AgentEvent[]) =>
  events.filter((e): e is Extract<AgentEvent, { type: "tool_execution_end" }> => e.type === "tool_execution_end");

afterEach(() => vi.restoreAllMocks());

describe("tool batch", () => {
  it("R20: batches run in parallel by default: every call starts before any ends", async () => {
    const rec = recorder();
    const { batchLog } = await batch({ tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b")] }, rec);
    expect(batchLog).toEqual([
      "tool_start:a",
      "tool_start:b",
      "exec:a",
      "exec:b",
      "tool_end:a",
      "tool_end:b",
      "message_start:toolResult(a)",
      "message_end:toolResult(a)",
      "message_start:toolResult(b)",
      "message_end:toolResult(b)",
      "turn_end:assistant(toolUse)+2",
    ]);
  });

  const sequentialLog = [
    "tool_start:a",
    "exec:a",
    "tool_end:a",
    "message_start:toolResult(a)",
    "message_end:toolResult(a)",
    "tool_start:b",
    "exec:b",
    "tool_end:b",
    "message_start:toolResult(b)",
    "message_end:toolResult(b)",
    "turn_end:assistant(toolUse)+2",
  ];

  it('R20: config.toolExecution "sequential" runs the batch sequentially', async () => {
    const rec = recorder();
    const { batchLog } = await batch(
      { tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b")], config: { toolExecution: "sequential" } },
      rec,
    );
    expect(batchLog).toEqual(sequentialLog);
  });

  it('R20: one call to a tool with executionMode "sequential" makes the whole batch sequential', async () => {
    const rec = recorder();
    const { batchLog } = await batch(
      { tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b", { executionMode: "sequential" })], config: { toolExecution: "parallel" } },
      rec,
    );
    expect(batchLog).toEqual(sequentialLog);
  });

  it("R20: a sequential tool that the batch does not call leaves the batch parallel", async () => {
    const rec = recorder();
    const { batchLog } = await batch(
      { tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b"), loggedTool(rec.note, "slow", { executionMode: "sequential" })] },
      rec,
    );
    expect(batchLog.slice(0, 4)).toEqual(["tool_start:a", "tool_start:b", "exec:a", "exec:b"]);
  });

  it("R21: tool_execution_start carries the model's raw arguments; execute gets a validated copy; the transcript keeps the original", async () => {
    const received: unknown[] = [];
    const counter = tool("count", async (_id, params) => (received.push(params), ok("counted")), {
      parameters: { type: "object", properties: { n: { type: "integer" }, tags: { type: "array", items: { type: "string" } } }, required: ["n"] },
    });
    const run = await runScenario({ tools: [counter], script: [{ content: [toolCall("count", { n: "5", tags: "x" })] }, answer("done")] });
    const start = run.events.find((e) => e.type === "tool_execution_start");
    expect(start).toEqual({ type: "tool_execution_start", toolCallId: "call_0_count", toolName: "count", args: { n: "5", tags: "x" } });
    expect(received).toEqual([{ n: 5, tags: ["x"] }]);
    const assistant = run.messages.find((m) => m.role === "assistant")!;
    expect(assistant.role === "assistant" && assistant.content).toEqual([
      { type: "toolCall", id: "call_0_count", name: "count", arguments: { n: "5", tags: "x" } },
    ]);
  });

  it("R21: a call to an unknown tool gets `Tool NAME not found`, without executing anything", async () => {
    const rec = recorder();
    const { batchLog, results } = await batch({ tools: [loggedTool(rec.note, "a")], script: [calls("nope"), answer("done")] }, rec);
    expect(batchLog).toEqual([
      "tool_start:nope",
      "tool_end:nope!",
      "message_start:toolResult(nope!)",
      "message_end:toolResult(nope!)",
      "turn_end:assistant(toolUse)+1",
    ]);
    expect(results.map(summary)).toEqual(["toolResult(nope!):Tool nope not found"]);
  });

  it("R21: prepareArguments reshapes the raw arguments before validation", async () => {
    const received: unknown[] = [];
    const read = tool("read", async (_id, params) => (received.push(params), ok("read")), {
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      prepareArguments: (raw) => {
        const { file, ...rest } = raw as { file?: string };
        return file === undefined ? rest : { ...rest, path: file };
      },
    });
    const run = await runScenario({ tools: [read], script: [{ content: [toolCall("read", { file: "a.txt" })] }, answer("done")] });
    expect(received).toEqual([{ path: "a.txt" }]);
    expect(toolResultsOf(run.messages).map(summary)).toEqual(["toolResult(read):read"]);
  });

  it("R21: arguments that fail validation yield the exact validation message, and the tool does not run", async () => {
    const rec = recorder();
    const read = loggedTool(rec.note, "read", {
      parameters: { type: "object", properties: { path: { type: "string" }, count: { type: "integer" } }, required: ["path"] },
    });
    const { batchLog, results } = await batch({ tools: [read], script: [{ content: [toolCall("read", { count: "abc" })] }, answer("done")] }, rec);
    expect(batchLog).toEqual([
      "tool_start:read",
      "tool_end:read!",
      "message_start:toolResult(read!)",
      "message_end:toolResult(read!)",
      "turn_end:assistant(toolUse)+1",
    ]);
    expect(resultText(results[0])).toBe(
      'Validation failed for tool "read":\n  - path: missing\n  - count: expected integer, got string\n\nReceived arguments:\n{\n  "count": "abc"\n}',
    );
  });

  it("R21: a call whose argument text was not a JSON object gets `Invalid arguments for tool`", async () => {
    const rec = recorder();
    const { results } = await batch(
      {
        tools: [loggedTool(rec.note, "read")],
        script: [{ content: [{ type: "toolCall", name: "read", argumentsError: "Unexpected end of JSON input" }] }, answer("done")],
      },
      rec,
    );
    expect(results.map(summary)).toEqual(['toolResult(read!):Invalid arguments for tool "read": Unexpected end of JSON input']);
    expect(rec.log).not.toContain("exec:read");
  });

  it("R21: beforeToolCall sees the validated arguments and may block with a reason, or with the default text", async () => {
    const rec = recorder();
    const seen: unknown[] = [];
    const { batchLog, results, events } = await batch(
      {
        tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b"), loggedTool(rec.note, "c"), loggedTool(rec.note, "d")],
        script: [calls("a", "b", "c", "d"), answer("done")],
        config: {
          beforeToolCall: async ({ toolCall: call, args, assistantMessage }) => {
            seen.push([call.name, args, assistantMessage.stopReason]);
            if (call.name === "a") return { block: true, reason: "not allowed here" };
            if (call.name === "b") return { block: true };
            if (call.name === "c") return { block: true, reason: "", terminate: true };
            return undefined;
          },
        },
      },
      rec,
    );
    expect(seen).toEqual([
      ["a", {}, "toolUse"],
      ["b", {}, "toolUse"],
      ["c", {}, "toolUse"],
      ["d", {}, "toolUse"],
    ]);
    expect(batchLog).toEqual([
      "tool_start:a",
      "tool_end:a!",
      "tool_start:b",
      "tool_end:b!",
      "tool_start:c",
      "tool_end:c!",
      "tool_start:d",
      "exec:d",
      "tool_end:d",
      "message_start:toolResult(a!)",
      "message_end:toolResult(a!)",
      "message_start:toolResult(b!)",
      "message_end:toolResult(b!)",
      "message_start:toolResult(c!)",
      "message_end:toolResult(c!)",
      "message_start:toolResult(d)",
      "message_end:toolResult(d)",
      "turn_end:assistant(toolUse)+4",
    ]);
    expect(results.map(summary)).toEqual([
      "toolResult(a!):not allowed here",
      "toolResult(b!):Tool execution was blocked",
      "toolResult(c!):Tool execution was blocked",
      "toolResult(d):d done",
    ]);
    // A block carries `terminate` when the hook set it.
    expect(endEvents(events).map((e) => [e.toolName, e.result.terminate])).toEqual([
      ["a", undefined],
      ["b", undefined],
      ["c", true],
      ["d", undefined],
    ]);
  });

  it("R22: onUpdate emits tool_execution_update; updates after execute settled are dropped", async () => {
    let late: ((partial: AgentToolResult) => void) | undefined;
    const progress = tool("progress", async (_id, _params, _signal, onUpdate) => {
      onUpdate?.(ok("25%"));
      onUpdate?.(ok("75%"));
      late = onUpdate;
      return ok("100%");
    });
    const { batchLog, events } = await batch({
      tools: [progress],
      script: [{ content: [toolCall("progress", { step: 1 })] }, answer("done")],
      // afterToolCall runs after execute settled: an update from there is late.
      config: {
        afterToolCall: async () => {
          late?.(ok("late from afterToolCall"));
          return undefined;
        },
      },
    });
    late?.(ok("late after the run"));
    expect(batchLog).toEqual([
      "tool_start:progress",
      "tool_update:progress",
      "tool_update:progress",
      "tool_end:progress",
      "message_start:toolResult(progress)",
      "message_end:toolResult(progress)",
      "turn_end:assistant(toolUse)+1",
    ]);
    expect(events.filter((e) => e.type === "tool_execution_update")).toEqual([
      { type: "tool_execution_update", toolCallId: "call_0_progress", toolName: "progress", args: { step: 1 }, partialResult: ok("25%") },
      { type: "tool_execution_update", toolCallId: "call_0_progress", toolName: "progress", args: { step: 1 }, partialResult: ok("75%") },
    ]);
  });

  it("R22: durationMs is present and >= 0 for executed calls, absent for immediate results", async () => {
    const { events, results } = await batch({
      tools: [tool("a", async () => (await wait(5), ok("a"))), tool("blocked")],
      script: [calls("a", "missing", "blocked"), answer("done")],
      config: { beforeToolCall: async ({ toolCall: call }) => (call.name === "blocked" ? { block: true } : undefined) },
    });
    const ends = endEvents(events);
    expect(ends.map((e) => e.toolName)).toEqual(["missing", "blocked", "a"]);
    const executed = ends.find((e) => e.toolName === "a")!;
    expect(executed.durationMs).toBeGreaterThanOrEqual(0);
    expect(results[0].durationMs).toBe(executed.durationMs);
    for (const immediate of ends.filter((e) => e.toolName !== "a")) expect("durationMs" in immediate).toBe(false);
    expect(results.map((r) => "durationMs" in r)).toEqual([true, false, false]);
  });

  it("R22: durationMs is measured on a monotonic clock (a wall clock jumping back does not make it negative)", async () => {
    const realNow = Date.now.bind(Date);
    const jumpy = tool("jumpy", async () => {
      vi.spyOn(Date, "now").mockImplementation(() => realNow() - 3_600_000);
      await wait(2);
      return ok("done");
    });
    const { events } = await batch({ tools: [jumpy], script: [calls("jumpy"), answer("done")] });
    const end = endEvents(events)[0];
    expect(end.durationMs).toBeGreaterThanOrEqual(0);
    expect(end.durationMs).toBeLessThan(60_000);
  });

  it("R23: afterToolCall overrides field by field; content alone drops the old structuredContent; details are replaced, not merged", async () => {
    const seen: unknown[] = [];
    const rich = tool("rich", async () => ({ content: [{ type: "text", text: "raw" }], details: { a: 1, b: 2 }, structuredContent: { x: 1 } }));
    const { events, results } = await batch({
      tools: [rich, tool("flag"), tool("keep")],
      script: [calls("rich", "flag", "keep"), answer("done")],
      config: {
        afterToolCall: async ({ toolCall: call, result, isError }) => {
          seen.push([call.name, resultText(result), isError]);
          if (call.name === "rich") return { content: [{ type: "text", text: "rewritten" }] };
          if (call.name === "flag") return { isError: true, details: { why: "policy" } };
          return undefined;
        },
      },
    });
    expect(seen).toEqual([
      ["rich", "raw", false],
      ["flag", "flag done", false],
      ["keep", "keep done", false],
    ]);
    const byName = Object.fromEntries(endEvents(events).map((e) => [e.toolName, e]));
    expect(byName.rich.result).toEqual({ content: [{ type: "text", text: "rewritten" }], details: { a: 1, b: 2 } });
    expect(byName.rich.isError).toBe(false);
    // The flag is the call's (the event's, the message's); the result keeps what the tool returned, as in pi.
    expect(byName.flag.result).toEqual({ content: [{ type: "text", text: "flag done" }], details: { why: "policy" } });
    expect(byName.flag.isError).toBe(true);
    expect(byName.keep.result).toEqual(ok("keep done"));
    expect(results.map(summary)).toEqual(["toolResult(rich):rewritten", "toolResult(flag!):flag done", "toolResult(keep):keep done"]);
    expect(results[1].details).toEqual({ why: "policy" });
  });

  it("R23: content together with structuredContent replaces both", async () => {
    const rich = tool("rich", async () => ({ content: [{ type: "text", text: "raw" }], details: {}, structuredContent: { x: 1 } }));
    const { events } = await batch({
      tools: [rich],
      script: [calls("rich"), answer("done")],
      config: { afterToolCall: async () => ({ content: [{ type: "text", text: "new" }], structuredContent: { y: 2 } }) },
    });
    expect(endEvents(events)[0].result).toEqual({ content: [{ type: "text", text: "new" }], details: {}, structuredContent: { y: 2 } });
  });

  it("R23: afterToolCall runs only for calls that executed, never for immediate results", async () => {
    const rec = recorder();
    const read = loggedTool(rec.note, "read", { parameters: { type: "object", properties: { n: { type: "integer" } } } });
    await batch(
      {
        tools: [read, loggedTool(rec.note, "blocked")],
        script: [{ content: [toolCall("read"), toolCall("missing"), toolCall("blocked"), toolCall("read", { n: "x" })] }, answer("done")],
        config: {
          beforeToolCall: async ({ toolCall: call }) => (call.name === "blocked" ? { block: true } : undefined),
          afterToolCall: async ({ toolCall: call }) => (rec.note(`hook:afterToolCall:${call.id}`), undefined),
        },
      },
      rec,
    );
    expect(rec.log.filter((e) => e.startsWith("hook:") || e.startsWith("exec:"))).toEqual(["exec:read", "hook:afterToolCall:call_0_read"]);
  });

  it("R24: sequentially, each call is started, gated, executed, finalized, ended and appended before the next starts", async () => {
    const rec = recorder();
    const { batchLog } = await batch(
      {
        tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b")],
        config: {
          toolExecution: "sequential",
          beforeToolCall: async ({ toolCall: call }) => (rec.note(`hook:beforeToolCall:${call.name}`), undefined),
          afterToolCall: async ({ toolCall: call }) => (rec.note(`hook:afterToolCall:${call.name}`), undefined),
        },
      },
      rec,
    );
    expect(batchLog).toEqual([
      "tool_start:a",
      "hook:beforeToolCall:a",
      "exec:a",
      "hook:afterToolCall:a",
      "tool_end:a",
      "message_start:toolResult(a)",
      "message_end:toolResult(a)",
      "tool_start:b",
      "hook:beforeToolCall:b",
      "exec:b",
      "hook:afterToolCall:b",
      "tool_end:b",
      "message_start:toolResult(b)",
      "message_end:toolResult(b)",
      "turn_end:assistant(toolUse)+2",
    ]);
  });

  it("R25: parallel calls are prepared one by one in source order; immediate results end at once; the rest run together", async () => {
    const rec = recorder();
    const gate = async ({ toolCall: call }: { toolCall: { name: string } }) => {
      rec.note(`gate:${call.name}:begin`);
      await new Promise((resolve) => setImmediate(resolve));
      rec.note(`gate:${call.name}:end`);
      return undefined;
    };
    const { batchLog } = await batch(
      {
        tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b")],
        script: [calls("a", "missing", "b"), answer("done")],
        config: { beforeToolCall: gate },
      },
      rec,
    );
    expect(batchLog.slice(0, 10)).toEqual([
      "tool_start:a",
      "gate:a:begin",
      "gate:a:end",
      "tool_start:missing",
      "tool_end:missing!",
      "tool_start:b",
      "gate:b:begin",
      "gate:b:end",
      "exec:a",
      "exec:b",
    ]);
  });

  it("R25: without beforeToolCall every call is started (immediate results ended) before any executes, even with a synchronous sink", async () => {
    const rec = recorder();
    const { batchLog } = await batch(
      {
        tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b")],
        script: [calls("a", "missing", "b"), answer("done")],
      },
      rec,
    );
    expect(batchLog.slice(0, 6)).toEqual(["tool_start:a", "tool_start:missing", "tool_end:missing!", "tool_start:b", "exec:a", "exec:b"]);
  });

  it("R25: parallel tool_execution_end follows completion order; result messages follow source order, after all finished", async () => {
    // The completion order is chosen, not timed: once both run, "fast" finishes; "slow" finishes
    // only after fast's tool_execution_end was emitted.
    const base = recorder();
    const fastGo = deferred();
    const slowGo = deferred();
    const running = new Set<string>();
    const note = (entry: string) => {
      base.note(entry);
      if (entry.startsWith("exec:")) running.add(entry);
      if (running.size === 2) fastGo.resolve();
    };
    const rec = {
      ...base,
      note,
      sink: (event: AgentEvent) => {
        base.sink(event);
        if (event.type === "tool_execution_end" && event.toolName === "fast") slowGo.resolve();
      },
    };
    const slow = loggedTool(note, "slow", {}, async () => (await slowGo.promise, ok("slow done")));
    const fast = loggedTool(note, "fast", {}, async () => (await fastGo.promise, ok("fast done")));
    const { batchLog, results, events } = await batch({ tools: [slow, fast], script: [calls("slow", "missing", "fast"), answer("done")] }, rec);
    expect(batchLog).toEqual([
      "tool_start:slow",
      "tool_start:missing",
      "tool_end:missing!",
      "tool_start:fast",
      "exec:slow",
      "exec:fast",
      "tool_end:fast",
      "tool_end:slow",
      "message_start:toolResult(slow)",
      "message_end:toolResult(slow)",
      "message_start:toolResult(missing!)",
      "message_end:toolResult(missing!)",
      "message_start:toolResult(fast)",
      "message_end:toolResult(fast)",
      "turn_end:assistant(toolUse)+3",
    ]);
    expect(results.map(summary)).toEqual(["toolResult(slow):slow done", "toolResult(missing!):Tool missing not found", "toolResult(fast):fast done"]);
    const turnEnd = events.find((e) => e.type === "turn_end");
    expect(turnEnd?.type === "turn_end" && turnEnd.toolResults.map(summary)).toEqual(results.map(summary));
  });

  it("R26: every call yields exactly one result message and the run goes on, whatever the tools do", async () => {
    const tools = [
      tool("throws", async () => {
        throw new Error("disk on fire");
      }),
      tool("rejectsString", () => Promise.reject("plain string")),
      tool("malformed", async () => undefined as unknown as AgentToolResult),
      tool("reportsError", async () => ok("soft failure", { isError: true })),
      tool("fine"),
    ];
    const run = await runScenario({
      tools,
      script: [calls("throws", "rejectsString", "malformed", "reportsError", "missing", "fine"), answer("done")],
    });
    const results = toolResultsOf(run.messages);
    expect(results.map((r: ToolResultMessage) => [r.toolName, r.isError])).toEqual([
      ["throws", true],
      ["rejectsString", true],
      ["malformed", true],
      ["reportsError", true],
      ["missing", true],
      ["fine", false],
    ]);
    expect(results.slice(0, 2).map(resultText)).toEqual(["disk on fire", "plain string"]);
    expect(summary(run.messages[run.messages.length - 1])).toBe("assistant(stop)[done]");
    expect(run.events.filter((e) => e.type === "tool_execution_end")).toHaveLength(6);
  });

  it("R27: when every result of the batch terminates, the batch asks for no further request", async () => {
    const rec = recorder();
    const done = (name: string) => tool(name, async () => ok(`${name} done`, { terminate: true }));
    const run = await runScenario(
      {
        tools: [done("a"), done("b")],
        script: [calls("a", "b"), answer("never")],
        config: {
          getSteeringMessages: logged(rec.note, "getSteeringMessages", async () => []),
          getFollowUpMessages: logged(rec.note, "getFollowUpMessages", async () => []),
        },
      },
      rec,
    );
    expect(run.log.slice(run.log.indexOf("turn_end:assistant(toolUse)+2"))).toEqual([
      "turn_end:assistant(toolUse)+2",
      "hook:getSteeringMessages",
      "hook:getFollowUpMessages",
      "agent_end:5",
    ]);
    expect(run.stream.calls).toHaveLength(1);
  });

  it("R27: termination counts blocks and afterToolCall overrides too", async () => {
    const run = await runScenario({
      tools: [tool("a"), tool("b")],
      script: [calls("a", "b"), answer("never")],
      config: {
        beforeToolCall: async ({ toolCall: call }) => (call.name === "a" ? { block: true, reason: "stop here", terminate: true } : undefined),
        afterToolCall: async () => ({ terminate: true }),
      },
    });
    expect(run.stream.calls).toHaveLength(1);
    expect(run.log.slice(-6)).toEqual([
      "message_start:toolResult(a!)",
      "message_end:toolResult(a!)",
      "message_start:toolResult(b)",
      "message_end:toolResult(b)",
      "turn_end:assistant(toolUse)+2",
      "agent_end:5",
    ]);
    expect(toolResultsOf(run.messages).map(summary)).toEqual(["toolResult(a!):stop here", "toolResult(b):b done"]);
  });

  it("R27: a mixed batch is answered as usual", async () => {
    const run = await runScenario({
      tools: [tool("a", async () => ok("a", { terminate: true })), tool("b")],
      script: [calls("a", "b"), answer("done")],
    });
    expect(run.stream.calls).toHaveLength(2);
    expect(run.messages.map(summary)).toEqual([
      "system( +a,b)",
      "user(hi)",
      "assistant(toolUse)[call a|call b]",
      "toolResult(a):a",
      "toolResult(b):b done",
      "assistant(stop)[done]",
    ]);
  });

  it("R27: a terminating batch still continues for steering, follow-ups or a continue decision", async () => {
    const terminating = () => [tool("a", async () => ok("a", { terminate: true }))];
    const steered = await runScenario({
      tools: terminating(),
      script: [calls("a"), answer("steered")],
      config: { getSteeringMessages: (() => { let n = 0; return async () => (n++ === 1 ? [{ role: "user" as const, content: "steer", timestamp: 3 }] : []); })() },
    });
    expect(steered.messages.map(summary).slice(-2)).toEqual(["user(steer)", "assistant(stop)[steered]"]);

    let f = 0;
    const followed = await runScenario({
      tools: terminating(),
      script: [calls("a"), answer("followed")],
      config: { getFollowUpMessages: async () => (f++ === 0 ? [{ role: "user" as const, content: "more", timestamp: 3 }] : []) },
    });
    expect(followed.messages.map(summary).slice(-2)).toEqual(["user(more)", "assistant(stop)[followed]"]);

    let c = 0;
    const continued = await runScenario({
      tools: terminating(),
      script: [calls("a"), answer("continued"), answer("never")],
      config: { finishTurn: async () => (c++ === 0 ? { action: "continue" as const } : undefined) },
    });
    expect(continued.stream.calls).toHaveLength(2);
    expect(continued.messages.map(summary).slice(-2)).toEqual(["toolResult(a):a", "assistant(stop)[continued]"]);
  });

  it("R28: a truncated response's calls are not executed; each gets start, an error result, end and its message", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        tools: [loggedTool(rec.note, "read")],
        script: [{ content: [text("partial"), toolCall("read", { path: "a" }), toolCall("read", { pa: 1 }, "second")], stopReason: "length" }, answer("done")],
        config: {
          beforeToolCall: logged(rec.note, "beforeToolCall", async () => undefined),
          afterToolCall: logged(rec.note, "afterToolCall", async () => undefined),
        },
      },
      rec,
    );
    expect(run.log.slice(run.log.indexOf("message_end:assistant(length)"))).toEqual([
      "message_end:assistant(length)",
      "tool_start:read",
      "tool_end:read!",
      "message_start:toolResult(read!)",
      "message_end:toolResult(read!)",
      "tool_start:read",
      "tool_end:read!",
      "message_start:toolResult(read!)",
      "message_end:toolResult(read!)",
      "turn_end:assistant(length)+2",
      // R9: the error results are answered.
      "turn_start",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:6",
    ]);
    const results = toolResultsOf(run.messages);
    expect(results.map((r) => [r.toolCallId, r.isError, "durationMs" in r])).toEqual([
      ["call_1_read", true, false],
      ["second", true, false],
    ]);
    for (const result of results) {
      expect(resultText(result)).toMatch(/^Tool call "read" was not executed: .*output token limit.*Re-issue/);
    }
  });

  it("R29: an abort during parallel preflight: calls not yet executing or prepared get `Operation aborted`; the run makes one more request that answers aborted", async () => {
    const rec = recorder();
    const controller = new AbortController();
    const run = await runScenario(
      {
        tools: [loggedTool(rec.note, "a"), loggedTool(rec.note, "b"), loggedTool(rec.note, "c")],
        script: [calls("a", "b", "c"), answer("never")],
        signal: controller.signal,
        config: {
          beforeToolCall: async ({ toolCall: call }) => {
            rec.note(`hook:beforeToolCall:${call.name}`);
            if (call.name === "b") controller.abort();
            return undefined;
          },
          finishTurn: logged(rec.note, "finishTurn", async () => undefined),
          getSteeringMessages: logged(rec.note, "getSteeringMessages", async () => []),
          prepareNextTurn: logged(rec.note, "prepareNextTurn", async () => undefined),
        },
      },
      rec,
    );
    expect(run.log.slice(run.log.indexOf("message_end:assistant(toolUse)"))).toEqual([
      "message_end:assistant(toolUse)",
      "tool_start:a",
      "hook:beforeToolCall:a",
      "tool_start:b",
      "hook:beforeToolCall:b",
      "tool_end:b!", // aborted while beforeToolCall ran
      "tool_start:c",
      "tool_end:c!", // not yet prepared
      "tool_end:a!", // prepared, not yet executing
      "message_start:toolResult(a!)",
      "message_end:toolResult(a!)",
      "message_start:toolResult(b!)",
      "message_end:toolResult(b!)",
      "message_start:toolResult(c!)",
      "message_end:toolResult(c!)",
      "hook:finishTurn",
      "turn_end:assistant(toolUse)+3",
      "hook:getSteeringMessages",
      "hook:prepareNextTurn",
      "hook:getSteeringMessages",
      "turn_start",
      "request",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "hook:finishTurn",
      "turn_end:assistant(aborted)+0",
      "agent_end:7",
    ]);
    expect(toolResultsOf(run.messages).map(summary)).toEqual([
      "toolResult(a!):Operation aborted",
      "toolResult(b!):Operation aborted",
      "toolResult(c!):Operation aborted",
    ]);
    expect(toolResultsOf(run.messages).some((r) => "durationMs" in r)).toBe(false);
  });

  it("R29: a running tool receives the aborted signal and its outcome is recorded as usual; later sequential calls get `Operation aborted`", async () => {
    const controller = new AbortController();
    const rec = recorder();
    const record = rec.sink;
    rec.sink = (event) => {
      record(event);
      if (event.type === "tool_execution_update") controller.abort();
    };
    const watcher = tool("watch", async (_id, _params, signal, onUpdate) => {
      rec.note("exec:watch");
      onUpdate?.(ok("started"));
      await untilAborted(signal);
      rec.note(`watch saw aborted=${signal?.aborted}`);
      return ok("stopped cleanly");
    });
    const run = await runScenario(
      {
        tools: [watcher, loggedTool(rec.note, "next")],
        script: [calls("watch", "next"), answer("never")],
        signal: controller.signal,
        config: { toolExecution: "sequential" },
      },
      rec,
    );
    expect(run.log.slice(run.log.indexOf("message_end:assistant(toolUse)"))).toEqual([
      "message_end:assistant(toolUse)",
      "tool_start:watch",
      "exec:watch",
      "tool_update:watch",
      "watch saw aborted=true",
      "tool_end:watch",
      "message_start:toolResult(watch)",
      "message_end:toolResult(watch)",
      "tool_start:next",
      "tool_end:next!",
      "message_start:toolResult(next!)",
      "message_end:toolResult(next!)",
      "turn_end:assistant(toolUse)+2",
      "turn_start",
      "request",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:6",
    ]);
    const results = toolResultsOf(run.messages);
    expect(results.map(summary)).toEqual(["toolResult(watch):stopped cleanly", "toolResult(next!):Operation aborted"]);
    expect(results[0].durationMs).toBeGreaterThanOrEqual(0);
  });

  it("R29: a run whose signal is already aborted still makes its request, which answers aborted, and R6 ends it", async () => {
    const controller = new AbortController();
    controller.abort();
    const run = await runScenario({ tools: [tool("read")], script: [calls("read")], signal: controller.signal });
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "request",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:3",
    ]);
  });

  it("R29: running parallel tools all see the abort; each outcome is recorded", async () => {
    const controller = new AbortController();
    const started = deferred();
    const waiter = tool("waiter", async (_id, _params, signal) => {
      started.resolve();
      await untilAborted(signal);
      return ok(`waiter saw aborted=${signal?.aborted}`);
    });
    const aborter = tool("aborter", async () => {
      await started.promise;
      controller.abort();
      return ok("aborter done");
    });
    const run = await runScenario({ tools: [waiter, aborter], script: [calls("waiter", "aborter"), answer("never")], signal: controller.signal });
    expect(toolResultsOf(run.messages).map(summary)).toEqual(["toolResult(waiter):waiter saw aborted=true", "toolResult(aborter):aborter done"]);
    expect(summary(run.messages[run.messages.length - 1])).toBe("assistant(aborted)[]:Request was aborted");
  });
});
