/**
 * SPEC R13, R82: a run persisted while a call awaits approval, serialized to JSON and restored
 * with fresh implementations, still awaits it; approving after the restore runs that call once,
 * and no sibling runs again. Through the Agent (parallel and sequential batches) and through an
 * embedded run (`createAgentRunLogic`).
 */
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { Agent, agentEvents, createAgentRunLogic, scriptedModel, scriptedStreamFn, text, toolCall, type AgentOptions, type AnyAgentEvent, type StreamFn } from "../../src/index.js";
import { approveToolCall, pendingApprovalsOf } from "../../src/agent/index.js";
import { EventLog, resultsOf, tools, type Tools } from "./helpers.js";
import { baseConfig, user } from "../loop/helpers.js";

/** A stream function that answers from the request alone, so a fresh one continues a restored run. */
const streamFn: StreamFn = scriptedStreamFn((request) =>
  request.context.messages.some((message) => message.role === "assistant")
    ? { content: [text("All done.")] }
    : { content: [toolCall("read", { path: "a" }, "c0"), toolCall("write", { path: "b" }, "c1"), toolCall("read", { path: "c" }, "c2")] },
);

function agentOptions(toolSet: Tools, toolExecution: "parallel" | "sequential"): AgentOptions {
  return { streamFn, toolExecution, initialState: { model: scriptedModel, tools: [toolSet.read, toolSet.write] } };
}

describe("R13, R82: a waiting approval survives a restore", () => {
  it.each(["parallel", "sequential"] as const)("R13, R82: an Agent persisted while a call of a %s batch awaits approval still awaits it after restore; approving runs it once, no sibling again", async (mode) => {
    const log = new EventLog();
    const original = tools(log);
    const agent = new Agent(agentOptions(original, mode));
    agent.subscribe((event) => log.push(event), { runtimeEvents: true });
    const run = agent.prompt("go");
    const request = await log.approvalRequest();
    // Parallel: both reads have executed; sequential: the first read has, the second waits.
    await log.toolEnds("read", mode === "parallel" ? 2 : 1);
    const saved = JSON.stringify(agent.getPersistedSnapshot());
    agent.abort();
    await run;
    expect(original.executed).toEqual(mode === "parallel" ? ['exec:read:{"path":"a"}', 'exec:read:{"path":"c"}'] : ['exec:read:{"path":"a"}']);

    const snapshot: unknown = JSON.parse(saved);
    // A store reads the pending approvals from the snapshot it keeps.
    expect(pendingApprovalsOf(snapshot)).toEqual([{ approvalId: "approval-1-1", toolCallId: "c1", toolName: "write", args: { path: "b" }, reason: "Tool write requires approval" }]);
    const after = new EventLog();
    const fresh = tools(after);
    const restored = Agent.restore(snapshot, agentOptions(fresh, mode));
    restored.subscribe((event) => after.push(event), { runtimeEvents: true });
    expect(restored.state.isStreaming).toBe(true);
    expect(restored.pendingApprovals).toEqual(pendingApprovalsOf(snapshot));
    restored.approve(request.approvalId);
    await restored.waitForIdle();
    expect(fresh.executed).toEqual(mode === "parallel" ? ['exec:write:{"path":"b"}'] : ['exec:write:{"path":"b"}', 'exec:read:{"path":"c"}']);
    expect(resultsOf(restored.state.messages)).toEqual(["read:read ok", "write:write ok", "read:read ok"]);
    expect(after.log.filter((line) => line.startsWith("approval") || line.startsWith("tool_start"))).toEqual(
      mode === "parallel" ? ["approval✓:approval-1-1"] : ["approval✓:approval-1-1", "tool_start:read"],
    );
    expect(restored.pendingApprovals).toEqual([]);
  });

  it("R13, R82: an embedded run persisted while a call awaits approval restores with fresh implementations and runs the call once after approval", async () => {
    const log = new EventLog();
    const original = tools(log);
    const logic = (toolSet: Tools) => createAgentRunLogic({ streamFn, tools: [toolSet.read, toolSet.write], config: baseConfig() });
    const run = createActor(logic(original), { input: { messages: [], prompts: [user("go")] } });
    agentEvents(run).subscribe((event: AnyAgentEvent) => log.push(event));
    run.start();
    const request = await log.approvalRequest();
    await log.toolEnds("read", 2);
    const saved = JSON.stringify(run.getPersistedSnapshot());
    run.stop();

    const after = new EventLog();
    const fresh = tools(after);
    const again = createActor(logic(fresh), { snapshot: JSON.parse(saved), input: { messages: [] } });
    agentEvents(again).subscribe((event: AnyAgentEvent) => after.push(event));
    again.start();
    expect(pendingApprovalsOf(again.getSnapshot()).map((pending) => pending.approvalId)).toEqual([request.approvalId]);
    const output = new Promise((resolve) => again.subscribe({ complete: () => resolve(again.getSnapshot().output) }));
    approveToolCall(again, request.approvalId);
    const messages = (await output) as unknown[];
    expect(fresh.executed).toEqual(['exec:write:{"path":"b"}']);
    expect(original.executed).toEqual(['exec:read:{"path":"a"}', 'exec:read:{"path":"c"}']);
    expect(resultsOf(messages)).toEqual(["read:read ok", "write:write ok", "read:read ok"]);
  });
});

describe("R13, R82: restore at every snapshot of a run with an approval", () => {
  it("R13, R82: persisted after any macrostep of the run or its calls and restored, each call gets one result and the write runs at most once in all", async () => {
    const logic = (toolSet: Tools) => createAgentRunLogic({ streamFn, tools: [{ ...toolSet.read, replay: "safe" }, toolSet.write], config: baseConfig() });
    /** Approves whatever waits in `run`, now or when it asks. */
    const approving = (run: ReturnType<typeof createActor<ReturnType<typeof logic>>>) => {
      agentEvents(run).subscribe((event: AnyAgentEvent) => {
        if (event.type === "tool_approval_requested") queueMicrotask(() => approveToolCall(run, event.approvalId));
      });
    };
    const log = new EventLog();
    const original = tools(log);
    const points: { snapshot: string; writes: number }[] = [];
    const run = createActor(logic(original), {
      input: { messages: [], prompts: [user("go")] },
      inspect: (event) => {
        if (event.type !== "@xstate.snapshot") return;
        queueMicrotask(() => {
          if (run.getSnapshot().status === "active") points.push({ snapshot: JSON.stringify(run.getPersistedSnapshot()), writes: original.executed.filter((line) => line.startsWith("exec:write")).length });
        });
      },
    });
    approving(run);
    const done = new Promise<unknown[]>((resolve) => run.subscribe({ complete: () => resolve(run.getSnapshot().output as unknown[]) }));
    run.start();
    expect(resultsOf(await done)).toEqual(["read:read ok", "write:write ok", "read:read ok"]);
    expect(points.length).toBeGreaterThan(10);
    let waiting = 0;
    for (const [i, point] of points.entries()) {
      const fresh = tools(new EventLog());
      const again = createActor(logic(fresh), { snapshot: JSON.parse(point.snapshot), input: { messages: [] } });
      approving(again);
      const output = new Promise<unknown[]>((resolve) => again.subscribe({ complete: () => resolve(again.getSnapshot().output as unknown[]) }));
      again.start();
      const pending = pendingApprovalsOf(again.getSnapshot());
      if (pending.length > 0) waiting++;
      for (const request of pending) approveToolCall(again, request.approvalId);
      const messages = (await output) as { role: string; toolCallId?: string }[];
      const calls = messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
      expect(calls, `point ${i}`).toEqual(["c0", "c1", "c2"]);
      const writes = point.writes + fresh.executed.filter((line) => line.startsWith("exec:write")).length;
      expect(writes, `point ${i}`).toBeLessThanOrEqual(1);
    }
    // Some points were taken while the write waited for its approval.
    expect(waiting).toBeGreaterThan(0);
    console.log(`R13, R82: ${points.length} restore points, ${waiting} of them while the write awaited approval`);
  });
});
