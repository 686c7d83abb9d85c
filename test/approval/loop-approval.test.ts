/**
 * SPEC R82 at the loop level: a run driven by `runAgentLoop` (its actor from `RunOptions.onActor`)
 * accepts `approval.approve` / `approval.reject` events; `approveToolCall` / `rejectToolCall` check
 * the id first and throw a typed error. R66: the approval events reach `onRuntimeEvent`, never
 * pi's sink. Also: R73 while a call waits, and `runToolCall`, which has nobody to ask.
 */
import { describe, expect, it } from "vitest";
import { agentEvents, createAgentRunLogic, runAgentLoop, runToolCall, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool, type RunActor } from "../../src/index.js";
import { createActor, toPromise } from "xstate";
import { ApprovalError, approveToolCall, rejectToolCall } from "../../src/agent/index.js";
import { assistantMessage, baseConfig, ok, tool, user } from "../loop/helpers.js";
import { EventLog, pathParams, resultsOf } from "./helpers.js";

const write = (executed: string[]): AgentTool =>
  tool("write", async (_id, args) => (executed.push(JSON.stringify(args)), ok("written")), { parameters: pathParams, needsApproval: true });

/** A loop run whose sink and runtime events go to one log; the actor arrives before the first event. */
function loopRun(calls: ReturnType<typeof toolCall>[][], tools: AgentTool[], overrides: Parameters<typeof baseConfig>[0] = {}, signal?: AbortSignal) {
  const log = new EventLog();
  const piEvents: AgentEvent[] = [];
  let actor!: RunActor;
  const stream = scriptedStreamFn([...calls.map((content) => ({ content })), { content: [text("done")] }]);
  const done = runAgentLoop(
    [user("go")],
    { messages: [], tools },
    baseConfig({ ...overrides, onRuntimeEvent: (event) => log.push(event) }),
    (event) => (piEvents.push(event), log.push(event)),
    signal,
    stream,
    { onActor: (a) => (actor = a) },
  );
  return { log, piEvents, done, actor: () => actor };
}

const refusal = (action: () => void) => {
  try {
    action();
    return "no error";
  } catch (error) {
    return error instanceof ApprovalError ? `${error.code}: ${error.message}` : `other: ${String(error)}`;
  }
};

describe("R82: approval at the loop level", () => {
  it("R82, R66: approveToolCall runs the waiting call; the approval events reach onRuntimeEvent only; a loop run numbers its own ids", async () => {
    const executed: string[] = [];
    const { log, piEvents, done, actor } = loopRun([[toolCall("write", { path: "a" }, "c0")], [toolCall("write", { path: "b" }, "c0")]], [write(executed)]);
    const first = await log.approvalRequest();
    expect(first.approvalId).toBe("approval-1");
    approveToolCall(actor(), first.approvalId, { args: { path: "a2" } });
    const second = await log.approvalRequest(1);
    expect([second.approvalId, second.toolCallId]).toEqual(["approval-2", "c0"]);
    expect(refusal(() => approveToolCall(actor(), "approval-1"))).toBe("settled: Approval approval-1 was already settled");
    rejectToolCall(actor(), second.approvalId, "no thanks");
    const messages = await done;
    expect(executed).toEqual(['{"path":"a2"}']);
    expect(resultsOf(messages)).toEqual(["write:written", "write:no thanks"]);
    expect(log.log.filter((line) => line.startsWith("approval"))).toEqual([
      "approval?:write:approval-1:Tool write requires approval",
      'approval✓:approval-1:{"path":"a2"}',
      "approval?:write:approval-2:Tool write requires approval",
      "approval✗:approval-2:no thanks",
    ]);
    expect(piEvents.map((event) => event.type).filter((type) => type.startsWith("tool_approval"))).toEqual([]);
  });

  it("R82: an unknown id is refused by approveToolCall, and a raw approval.approve event for it is ignored; the call still waits", async () => {
    const executed: string[] = [];
    const { log, done, actor } = loopRun([[toolCall("write", { path: "a" }, "c0")]], [write(executed)]);
    const request = await log.approvalRequest();
    expect(refusal(() => approveToolCall(actor(), "approval-7"))).toBe("unknown: No tool call waits for approval approval-7");
    expect(refusal(() => rejectToolCall(actor(), "approval-0", "no"))).toBe("unknown: No tool call waits for approval approval-0");
    actor().send({ type: "approval.approve", approvalId: "approval-7" });
    actor().send({ type: "approval.reject", approvalId: "c0", reason: "no" });
    expect(actor().getSnapshot().context.approval.pending.map((p) => p.approvalId)).toEqual([request.approvalId]);
    expect(executed).toEqual([]);
    // The documented raw event works as well as the helper.
    actor().send({ type: "approval.approve", approvalId: request.approvalId });
    await done;
    expect(executed).toEqual(['{"path":"a"}']);
  });

  it("R82, R29: the run's signal aborted while a call waits settles it at once", async () => {
    const controller = new AbortController();
    const { log, done } = loopRun([[toolCall("write", { path: "a" }, "c0")]], [write([])], {}, controller.signal);
    await log.approvalRequest();
    controller.abort();
    const messages = await done;
    expect(resultsOf(messages)).toEqual(["write:Operation aborted"]);
    expect(log.log.filter((line) => line.startsWith("approval") || line.startsWith("tool_"))).toEqual([
      "tool_start:write",
      "approval?:write:approval-1:Tool write requires approval",
      "approval✗:approval-1:Operation aborted",
      "tool_end:write!",
    ]);
  });

  it("R82, R73: a sibling whose tool cancels on error cancels the waiting call too", async () => {
    const deploy = tool("deploy", async () => {
      throw new Error("deploy failed");
    }, { cancelSiblingsOnError: true });
    const { log, done } = loopRun([[toolCall("write", { path: "a" }, "c0"), toolCall("deploy", {}, "c1")]], [write([]), deploy]);
    const messages = await done;
    expect(resultsOf(messages)).toEqual(["write:Cancelled: sibling tool call deploy failed", "deploy:deploy failed"]);
    expect(log.log.filter((line) => line.startsWith("approval"))).toEqual([
      "approval?:write:approval-1:Tool write requires approval",
      "approval✗:approval-1:Cancelled: sibling tool call deploy failed",
    ]);
  });

  it("R82: always: true in a loop run allows the tool for the rest of that run", async () => {
    const executed: string[] = [];
    const { log, done, actor } = loopRun([[toolCall("write", { path: "a" }, "c0")], [toolCall("write", { path: "b" }, "c1")]], [write(executed)]);
    approveToolCall(actor(), (await log.approvalRequest()).approvalId, { always: true });
    await done;
    expect(executed).toEqual(['{"path":"a"}', '{"path":"b"}']);
    expect(log.log.filter((line) => line.startsWith("approval?"))).toHaveLength(1);
    expect(actor().getSnapshot().context.approval.rules).toEqual([{ toolName: "write" }]);
  });

  it("R82: runToolCall has nobody to ask: a call that needs approval is its error result, and the tool does not run", async () => {
    const executed: string[] = [];
    const outcome = await runToolCall(
      { type: "toolCall", id: "c1", name: "write", arguments: { path: "a" } },
      { tools: [write(executed)], assistantMessage: assistantMessage([], "toolUse"), context: { messages: [] } },
    );
    expect([outcome.isError, outcome.result.content]).toEqual([true, [{ type: "text", text: "Tool write requires approval, which this caller cannot give (runToolCall)" }]]);
    expect(executed).toEqual([]);
  });
});

describe("R82: an embedded run given its session's approval state", () => {
  const embedded = (executed: string[]) =>
    createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [toolCall("write", { path: "a" }, "c0"), toolCall("write", { path: "b" }, "c1")] }, { content: [text("done")] }]), tools: [write(executed)], config: baseConfig() });

  it("R82: `input.approval` numbers the run's ids under its prefix and applies the session's rules so far", async () => {
    const executed: string[] = [];
    const actor = createActor(embedded(executed), { input: { prompts: [user("go")], messages: [], approval: { idPrefix: "approval-7-", rules: [{ toolName: "write", path: "a" }] } } });
    const requests: string[] = [];
    agentEvents(actor).subscribe((event) => {
      if (event.type !== "tool_approval_requested") return;
      requests.push(`${event.approvalId}:${JSON.stringify(event.args)}`);
      approveToolCall(actor, event.approvalId, { always: true });
    });
    const done = toPromise(actor);
    actor.start();
    await done;
    // Path "a" was allowed by the session's rule; "b" asked, under this run's prefix.
    expect(requests).toEqual(['approval-7-1:{"path":"b"}']);
    expect(executed.sort()).toEqual(['{"path":"a"}', '{"path":"b"}']);
    // The rule the decision added is in the run's final snapshot, for the session's next run.
    expect((actor.getSnapshot().context as { approval: { rules: unknown[] } }).approval.rules).toEqual([{ toolName: "write", path: "a" }, { toolName: "write" }]);
  });

  it("R82: a malformed `input.approval` errors the actor with an AgentInputError naming the field", () => {
    const logic = embedded([]);
    // (As any invalid input: XState turns what getInitialSnapshot throws into the actor's error.)
    const errorOf = (approval: unknown) => createActor(logic, { input: { prompts: [user("go")], messages: [], approval: approval as never } }).getSnapshot().error;
    expect(errorOf({ idPrefix: 3 })).toMatchObject({ name: "AgentInputError", field: "input.approval.idPrefix" });
    expect(errorOf({ rules: [{ path: "a" }] })).toMatchObject({ name: "AgentInputError", field: "input.approval.rules" });
    expect(errorOf("yes")).toMatchObject({ name: "AgentInputError", field: "input.approval" });
  });
});
