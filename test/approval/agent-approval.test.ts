/**
 * SPEC R82: per-call approval through the Agent: a call whose tool says `needsApproval` (or whose
 * `beforeToolCall` asks for approval) waits after `beforeToolCall` until `approve`/`reject`, in
 * parallel and sequential batches. Whole event sequences, the loop's own events included
 * (`approval?` requested, `approval✓`/`approval✗` resolved, `exec:` the tools' executions).
 */
import { describe, expect, it } from "vitest";
import { text, toolCall } from "../../src/index.js";
import { ApprovalError } from "../../src/agent/index.js";
import { approvalScenario, resultsOf } from "./helpers.js";
import { manualClock } from "../support/manual-clock.js";

const batch = [toolCall("read", { path: "a" }, "c0"), toolCall("write", { path: "b", text: "hi" }, "c1"), toolCall("read", { path: "c" }, "c2")];
const script = [{ content: batch }, { content: [text("done")] }];

const opening = ["agent_start", "turn_start", "message_start:user(…)", "message_end:user(…)", "message_start:assistant", "message_end:assistant(toolUse)"];
const closing = ["turn_start", "message_start:assistant", "message_end:assistant(stop)", "turn_end:assistant(stop)+0", "agent_end:6"];
const parallelStart = [...opening, "tool_start:read", "tool_start:write", "tool_start:read", "approval?:write:approval-1-1:Tool write requires approval", 'exec:read:{"path":"a"}', 'exec:read:{"path":"c"}', "tool_end:read", "tool_end:read"];
const resultMessages = (write = "write") => [
  "message_start:toolResult(read)",
  "message_end:toolResult(read)",
  `message_start:toolResult(${write})`,
  `message_end:toolResult(${write})`,
  "message_start:toolResult(read)",
  "message_end:toolResult(read)",
  "turn_end:assistant(toolUse)+3",
];

/** The error an Agent method threw, as `code: message`. */
function refusal(action: () => void): string {
  try {
    action();
  } catch (error) {
    if (error instanceof ApprovalError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "no error";
}

describe("R82: a call that needs approval, in a batch", () => {
  it("R82: parallel: the other calls execute and the result messages wait for the approval; approve runs the call once", async () => {
    const { agent, log, tools } = approvalScenario(script);
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    await log.toolEnds("read", 2);
    expect(log.log).toEqual(parallelStart);
    expect(agent.pendingApprovals).toEqual([{ approvalId: "approval-1-1", toolCallId: "c1", toolName: "write", args: { path: "b", text: "hi" }, reason: "Tool write requires approval" }]);
    expect(agent.state.pendingToolCalls).toEqual(new Set(["c1"]));
    agent.approve(request.approvalId);
    await run;
    expect(log.log).toEqual([...parallelStart, "approval✓:approval-1-1", 'exec:write:{"path":"b","text":"hi"}', "tool_end:write", ...resultMessages(), ...closing]);
    expect(resultsOf(agent.state.messages)).toEqual(["read:read ok", "write:write ok", "read:read ok"]);
    expect(tools.executed).toHaveLength(3);
    expect(agent.pendingApprovals).toEqual([]);
  });

  it("R82: sequential: the later calls wait until the waiting call is decided and its result message is out", async () => {
    const { agent, log } = approvalScenario(script, { toolExecution: "sequential" });
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    const before = [...opening, "tool_start:read", 'exec:read:{"path":"a"}', "tool_end:read", "message_start:toolResult(read)", "message_end:toolResult(read)", "tool_start:write", "approval?:write:approval-1-1:Tool write requires approval"];
    expect(log.log).toEqual(before);
    agent.approve(request.approvalId);
    await run;
    expect(log.log).toEqual([
      ...before,
      "approval✓:approval-1-1",
      'exec:write:{"path":"b","text":"hi"}',
      "tool_end:write",
      "message_start:toolResult(write)",
      "message_end:toolResult(write)",
      "tool_start:read",
      'exec:read:{"path":"c"}',
      "tool_end:read",
      "message_start:toolResult(read)",
      "message_end:toolResult(read)",
      "turn_end:assistant(toolUse)+3",
      ...closing,
    ]);
  });

  it("R82: approve with new arguments: they are validated again and executed; no second tool_execution_start", async () => {
    const { agent, log } = approvalScenario(script);
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    await log.toolEnds("read", 2);
    // A number where the schema says string: R21's coercions apply to the replacement too.
    agent.approve(request.approvalId, { args: { path: "b2", text: 42 } });
    await run;
    expect(log.log).toEqual([...parallelStart, 'approval✓:approval-1-1:{"path":"b2","text":42}', 'exec:write:{"path":"b2","text":"42"}', "tool_end:write", ...resultMessages(), ...closing]);
    // The transcript keeps what the model sent.
    const assistant = agent.state.messages.find((m) => m.role === "assistant")!;
    expect((assistant as { content: { arguments?: unknown }[] }).content[1].arguments).toEqual({ path: "b", text: "hi" });
  });

  it("R82: approve with invalid new arguments: the call's result is the validation error; the tool does not run", async () => {
    const { agent, log, tools } = approvalScenario(script);
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    await log.toolEnds("read", 2);
    agent.approve(request.approvalId, { args: { text: "no path" } });
    await run;
    expect(log.log).toEqual([...parallelStart, 'approval✓:approval-1-1:{"text":"no path"}', "tool_end:write!", ...resultMessages("write!"), ...closing]);
    expect(resultsOf(agent.state.messages)[1]).toMatch(/^write:Validation failed for tool "write":\n {2}- path: .*\n\nReceived arguments:\n/);
    expect(tools.executed.filter((line) => line.startsWith("exec:write"))).toEqual([]);
  });

  it("R82: reject gives an error result carrying the reason; the tool does not run", async () => {
    const { agent, log, tools } = approvalScenario(script);
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    await log.toolEnds("read", 2);
    agent.reject(request.approvalId, "The user declined: not that file.");
    await run;
    expect(log.log).toEqual([...parallelStart, "approval✗:approval-1-1:The user declined: not that file.", "tool_end:write!", ...resultMessages("write!"), ...closing]);
    expect(resultsOf(agent.state.messages)).toEqual(["read:read ok", "write:The user declined: not that file.", "read:read ok"]);
    expect(tools.executed.some((line) => line.startsWith("exec:write"))).toBe(false);
  });

  it("R82, R29: an abort settles a waiting call at once with Operation aborted; the run ends aborted", async () => {
    const { agent, log } = approvalScenario(script);
    const run = agent.prompt("go");
    await log.approvalRequest();
    await log.toolEnds("read", 2);
    agent.abort();
    await run;
    expect(log.log).toEqual([
      ...parallelStart,
      "approval✗:approval-1-1:Operation aborted",
      "tool_end:write!",
      ...resultMessages("write!"),
      // R29: the next request is made with the aborted signal, and R6 ends the run.
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:6",
    ]);
    expect(resultsOf(agent.state.messages)[1]).toBe("write:Operation aborted");
    expect(agent.lastEndReason).toBe("aborted");
  });

  it("R82: an unknown or settled approval id is a typed error, and loses nothing", async () => {
    const { agent, log } = approvalScenario([{ content: batch }, { content: [text("done")] }, { content: [toolCall("write", { path: "x" }, "c1")] }, { content: [text("again")] }]);
    expect(refusal(() => agent.approve("approval-1-1"))).toBe("unknown: No tool call waits for approval approval-1-1");
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    expect(refusal(() => agent.approve("nope"))).toBe("unknown: No tool call waits for approval nope");
    expect(refusal(() => agent.reject("approval-1-2", "no"))).toBe("unknown: No tool call waits for approval approval-1-2");
    expect(refusal(() => agent.approve(request.approvalId, { always: { path: 3 } } as never))).toMatch(/^invalid: approve\("approval-1-1", options\): always must be true or \{path: string\}/);
    expect(refusal(() => agent.reject(request.approvalId, undefined as never))).toMatch(/^invalid: .*reason must be a string/);
    // Nothing was lost: the call still waits.
    expect(agent.pendingApprovals.map((p) => p.approvalId)).toEqual(["approval-1-1"]);
    agent.approve(request.approvalId);
    expect(refusal(() => agent.approve(request.approvalId))).toBe("settled: Approval approval-1-1 was already settled");
    expect(refusal(() => agent.reject(request.approvalId, "late"))).toBe("settled: Approval approval-1-1 was already settled");
    await run;
    expect(resultsOf(agent.state.messages)).toEqual(["read:read ok", "write:write ok", "read:read ok"]);
    expect(refusal(() => agent.approve(request.approvalId))).toBe("settled: Approval approval-1-1 was already settled");
    // The model's toolCallId repeats in the next run; the approval id does not.
    const next = agent.prompt("again");
    const second = await log.approvalRequest(1);
    expect([second.toolCallId, second.approvalId]).toEqual(["c1", "approval-2-1"]);
    expect(refusal(() => agent.approve("approval-1-1"))).toBe("settled: Approval approval-1-1 was already settled");
    expect(refusal(() => agent.approve("approval-2-2"))).toBe("unknown: No tool call waits for approval approval-2-2");
    agent.reject(second.approvalId, "no");
    await next;
  });
});

describe("R82, R55: a listener that throws while a call waits", () => {
  it("R82, R55: the run is stopped; every started call, the waiting one included, gets a result; no approval is left pending", async () => {
    const { agent, log } = approvalScenario(script);
    agent.subscribe(
      (event) => {
        if (event.type === "tool_approval_requested") throw new Error("listener bug");
      },
      { runtimeEvents: true },
    );
    await agent.prompt("go");
    expect(resultsOf(agent.state.messages)).toEqual(["read:Operation aborted", "write:Operation aborted", "read:Operation aborted"]);
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "listener bug" });
    expect(agent.pendingApprovals).toEqual([]);
    expect(log.log.at(-1)).toBe("agent_end:6");
  });
});

describe("R82: the wait and the clock", () => {
  it("R82, R65: a tool's timeout counts from the approval, not from when the call began to wait", async () => {
    const time = manualClock();
    let started!: () => void;
    const executing = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const write = { timeoutMs: 1_000, execute: async () => (started(), await finished, { content: [{ type: "text" as const, text: "written" }], details: {} }) };
    const { agent, log } = approvalScenario([{ content: [toolCall("write", { path: "b" }, "c1")] }, { content: [text("done")] }], { clock: time.clock }, write);
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    // The decision takes far longer than the tool may run.
    time.advance(60_000);
    agent.approve(request.approvalId);
    await executing;
    // Half the timeout after the approval: the call is still within it.
    time.advance(500);
    finish();
    await run;
    expect(resultsOf(agent.state.messages)).toEqual(["write:written"]);
  });

  it("R82: a rejected call's result message is stamped with the time of the decision (the injected clock)", async () => {
    const time = manualClock(5_000);
    const { agent, log } = approvalScenario([{ content: [toolCall("write", { path: "b" }, "c1")] }, { content: [text("done")] }], { clock: time.clock });
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    time.advance(2_500);
    agent.reject(request.approvalId, "no");
    await run;
    expect(agent.state.messages.find((m) => m.role === "toolResult")).toMatchObject({ isError: true, timestamp: 7_500 });
  });
});

describe("R82: what asks for approval", () => {
  it("R82: needsApproval as a predicate of the validated arguments: only the calls it says wait; a throw or a non-boolean is the call's error result", async () => {
    const seen: unknown[] = [];
    const { agent, log } = approvalScenario(
      [
        {
          content: [
            toolCall("write", { path: "notes/a" }, "c0"),
            toolCall("write", { path: "/etc/passwd" }, "c1"),
            toolCall("write", { path: "throw" }, "c2"),
            toolCall("write", { path: "odd" }, "c3"),
          ],
        },
        { content: [text("done")] },
      ],
      {},
      {
        needsApproval: (args: { path: string }, { toolCall: call }) => {
          seen.push([call.id, args]);
          if (args.path === "throw") throw new Error("policy unavailable");
          if (args.path === "odd") return "yes" as never;
          return args.path.startsWith("/etc/");
        },
      },
    );
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    expect(request).toMatchObject({ toolCallId: "c1", args: { path: "/etc/passwd" } });
    agent.reject(request.approvalId, "no");
    await run;
    expect(seen).toEqual([["c0", { path: "notes/a" }], ["c1", { path: "/etc/passwd" }], ["c2", { path: "throw" }], ["c3", { path: "odd" }]]);
    expect(resultsOf(agent.state.messages)).toEqual(["write:write ok", "write:no", "write:policy unavailable", 'write:needsApproval of tool write returned a string ("yes"); expected a boolean']);
    expect(log.log.filter((line) => line.startsWith("approval"))).toEqual(["approval?:write:approval-1-1:Tool write requires approval", "approval✗:approval-1-1:no"]);
  });

  it("R82: beforeToolCall returns {approval: {reason}}: the call waits with that reason; a block wins; a malformed approval is the call's error result", async () => {
    const { agent, log } = approvalScenario(
      [{ content: [toolCall("read", { path: "secret" }, "c0"), toolCall("read", { path: "blocked" }, "c1"), toolCall("read", { path: "bad" }, "c2"), toolCall("read", { path: "free" }, "c3")] }, { content: [text("done")] }],
      {
        beforeToolCall: async ({ args }) => {
          const path = (args as { path: string }).path;
          if (path === "secret") return { approval: { reason: "Reads of secret files are audited" } };
          if (path === "blocked") return { block: true, reason: "Blocked by policy", approval: {} };
          if (path === "bad") return { approval: "yes" } as never;
          return undefined;
        },
      },
    );
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    expect(request).toMatchObject({ toolName: "read", toolCallId: "c0", reason: "Reads of secret files are audited" });
    // The blocked, the malformed and the free call end first.
    await log.toolEnds("read", 3);
    agent.approve(request.approvalId);
    await run;
    expect(resultsOf(agent.state.messages)).toEqual([
      "read:read ok",
      "read:Blocked by policy",
      "read:beforeToolCall returned an invalid result: approval must be an object {reason?}, got a string (\"yes\")",
      "read:read ok",
    ]);
    expect(log.log.filter((line) => line.startsWith("approval") || line.startsWith("exec"))).toEqual([
      "approval?:read:approval-1-1:Reads of secret files are audited",
      'exec:read:{"path":"free"}',
      "approval✓:approval-1-1",
      'exec:read:{"path":"secret"}',
    ]);
  });

  it("R66: a run in which nothing needs approval emits no approval event", async () => {
    const { agent, log } = approvalScenario([{ content: [toolCall("read", { path: "a" }, "c0")] }, { content: [text("done")] }]);
    await agent.prompt("go");
    expect(log.log.filter((line) => line.startsWith("approval"))).toEqual([]);
  });
});

describe("R82: always allow, for the rest of the session", () => {
  it("R82: approve(id, {always: true}) also approves the batch's other waiting calls of that tool and later calls skip the wait; the rule is in the session's snapshot", async () => {
    const { agent, log, tools } = approvalScenario([
      { content: [toolCall("write", { path: "a" }, "c0"), toolCall("write", { path: "b" }, "c1")] },
      { content: [toolCall("write", { path: "c" }, "c2")] },
      { content: [text("done")] },
      { content: [toolCall("write", { path: "d" }, "c3")] },
      { content: [text("done again")] },
    ]);
    const run = agent.prompt("go");
    const second = await log.approvalRequest(1);
    expect(second.approvalId).toBe("approval-1-2");
    agent.approve("approval-1-1", { always: true });
    await run;
    expect(log.log.filter((line) => line.startsWith("approval") || line.startsWith("exec"))).toEqual([
      "approval?:write:approval-1-1:Tool write requires approval",
      "approval?:write:approval-1-2:Tool write requires approval",
      "approval✓:approval-1-1",
      "approval✓:approval-1-2",
      'exec:write:{"path":"a"}',
      'exec:write:{"path":"b"}',
      // The next turn's call, and the next run's, do not wait.
      'exec:write:{"path":"c"}',
    ]);
    expect(agent.approvalRules).toEqual([{ toolName: "write" }]);
    const saved = JSON.parse(JSON.stringify(agent.getPersistedSnapshot())) as { context: { approval: unknown } };
    expect(saved.context.approval).toEqual({ runs: 1, rules: [{ toolName: "write" }] });
    await agent.prompt("more");
    expect(tools.executed.at(-1)).toBe('exec:write:{"path":"d"}');
    expect(log.log.filter((line) => line.startsWith("approval?"))).toHaveLength(2);
    agent.clearApprovalRules();
    expect(agent.approvalRules).toEqual([]);
  });

  it("R82: approve(id, {always: {path}}) allows that path (or what lies under a path ending in /), never through ..", async () => {
    const { agent, log } = approvalScenario([
      { content: [toolCall("write", { path: "src/a.ts" }, "c0")] },
      { content: [toolCall("write", { path: "src/b.ts" }, "c1"), toolCall("write", { path: "src/../etc/x" }, "c2"), toolCall("write", { path: "docs/c.md" }, "c3")] },
      { content: [text("done")] },
    ]);
    const run = agent.prompt("go");
    const first = await log.approvalRequest();
    agent.approve(first.approvalId, { always: { path: "src/" } });
    const climbing = await log.approvalRequest(1);
    const elsewhere = await log.approvalRequest(2);
    expect([climbing.args, elsewhere.args]).toEqual([{ path: "src/../etc/x" }, { path: "docs/c.md" }]);
    agent.reject(climbing.approvalId, "no");
    agent.reject(elsewhere.approvalId, "no");
    await run;
    expect(resultsOf(agent.state.messages)).toEqual(["write:write ok", "write:write ok", "write:no", "write:no"]);
    expect(agent.approvalRules).toEqual([{ toolName: "write", path: "src/" }]);
  });
});

describe("R82 with tools that start while the model streams (R70)", () => {
  it("R82, R70: a streamed write waits for approval while the batch's reads run; approved, it runs once; results in source order", async () => {
    const { agent, log, tools } = approvalScenario(script, { streamingToolExecution: true });
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    expect(request).toMatchObject({ toolCallId: "c1", toolName: "write", reason: "Tool write requires approval" });
    expect(agent.pendingApprovals.map((pending) => pending.toolCallId)).toEqual(["c1"]);
    agent.approve(request.approvalId);
    await run;
    expect(log.log).toContain("approval✓:" + request.approvalId);
    expect(tools.executed.filter((line) => line.startsWith("exec:write"))).toHaveLength(1);
    expect(resultsOf(agent.state.messages)).toEqual(["read:read ok", "write:write ok", "read:read ok"]);
    expect(agent.pendingApprovals).toEqual([]);
  });

  it("R82, R70, R29: aborted while a streamed write waits: it settles at once with Operation aborted, resolved as rejected", async () => {
    const { agent, log, tools } = approvalScenario(script, { streamingToolExecution: true });
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    agent.abort();
    await run;
    // As in a batch that is not streamed: the approval is resolved before the call's tool_execution_end.
    const resolved = log.log.indexOf(`approval✗:${request.approvalId}:Operation aborted`);
    expect(resolved).toBeGreaterThanOrEqual(0);
    expect(log.log[resolved + 1]).toBe("tool_end:write!");
    expect(tools.executed.filter((line) => line.startsWith("exec:write"))).toHaveLength(0);
    expect(resultsOf(agent.state.messages).find((line) => line.startsWith("write:"))).toBe("write:Operation aborted");
    expect(agent.pendingApprovals).toEqual([]);
  });
});
