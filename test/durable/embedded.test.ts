/**
 * R80 for an embedded run (`createAgentRunLogic({ ..., durable })`, R14): its journal replays to the
 * events `agentEvents` delivered, and a crash mid-run resumes with `resumeAgentLoop`.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import type { AgentMessage, AnyAgentEvent } from "../../src/index.js";
import { agentEvents, createAgentRunLogic } from "../../src/index.js";
import { replayRun } from "../../src/durable/replay.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { crashSession, fixedClock, prompt } from "./crash-scenario.js";
import { approveToolCall, scriptedModel, scriptedStreamFn, toolCall, type AgentTool } from "../../src/index.js";
import { EventLog, tools as approvalTools } from "../approval/helpers.js";

const timeless = (value: unknown) => JSON.stringify(value, (key, v) => (key === "timestamp" || key === "durationMs" ? 0 : v));

describe("R80: an embedded run's journal", () => {
  it("R80, R83, R81: an embedded durable run replays to its events; cut short, it resumes to the same transcript", async () => {
    const store = memoryRunStore();
    const session = crashSession(() => {}, { fast: true });
    const logic = createAgentRunLogic({ streamFn: session.streamFn, tools: session.tools, config: session.config, clock: fixedClock, durable: { store, sessionId: "e" } });
    const actor = createActor(logic, { input: { prompts: [prompt], messages: [] } });
    const delivered: string[] = [];
    agentEvents(actor).subscribe((event: AnyAgentEvent) => void delivered.push(JSON.stringify(event)));
    const done = toPromise(actor) as Promise<AgentMessage[]>;
    actor.start();
    const messages = await done;
    const records = store.readSession("e").records();
    expect(records.at(-1)?.record).toMatchObject({ k: "end" });
    const [replayed] = await replayRun(records);
    expect(replayed.events.map((event) => JSON.stringify(event))).toEqual(delivered);

    const crashed = memoryRunStore();
    const writer = crashed.openSession("e");
    for (const { record } of records.slice(0, Math.floor(records.length / 2))) writer.append(record);
    writer.release();
    const resumed = await resumeAgentLoop({ store: crashed, sessionId: "e" }, { config: session.config, tools: session.tools, streamFn: session.streamFn, sink: () => {}, clock: fixedClock });
    expect(timeless(resumed.messages.filter((m) => !JSON.stringify(m).includes("was interrupted")))).toBe(
      timeless(messages.filter((m) => !resumed.messages.some((r) => JSON.stringify(r).includes("was interrupted") && (r as { toolCallId?: string }).toolCallId === (m as { toolCallId?: string }).toolCallId))),
    );
  });

  it("R80, R82, R83: an app's approval of an embedded run's call is journaled where the run takes it; the journal replays and resumes past it", async () => {
    const store = memoryRunStore();
    const log = new EventLog();
    const { read, write, executed } = approvalTools(log);
    const script = [{ content: [toolCall("read", { path: "a" }, "c0"), toolCall("write", { path: "b" }, "c1")] }, { content: [{ type: "text" as const, text: "done" }] }];
    const options = { streamFn: scriptedStreamFn(script as never), tools: [read, write] as AgentTool[], config: { model: scriptedModel, convertToLlm: (m: AgentMessage[]) => m as never }, clock: fixedClock };
    const actor = createActor(createAgentRunLogic({ ...options, durable: { store, sessionId: "a" } }), { input: { prompts: [prompt], messages: [] } });
    const delivered: string[] = [];
    agentEvents(actor).subscribe((event: AnyAgentEvent) => {
      delivered.push(JSON.stringify(event));
      log.push(event);
    });
    const done = toPromise(actor) as Promise<AgentMessage[]>;
    actor.start();
    const request = await log.approvalRequest();
    approveToolCall(actor, request.approvalId, { at: 5 });
    await done;
    expect(executed).toEqual(['exec:read:{"path":"a"}', 'exec:write:{"path":"b"}']);

    const records = store.readSession("a").records();
    const decisionAt = records.findIndex(({ record }) => (record as { input?: string }).input === "decision");
    expect(records[decisionAt]?.record).toEqual({ k: "input", input: "decision", event: { type: "approval.approve", approvalId: request.approvalId, at: 5 } });
    // Journaled before the approved call asked for anything.
    expect(records.slice(decisionAt + 1).some(({ record }) => (record as { k: string; path?: string }).k === "intent")).toBe(true);
    const [replayed] = await replayRun(records);
    expect(replayed.events.map((event) => JSON.stringify(event))).toEqual(delivered);

    // Cut right after the decision: a resumed run does not wait for approval again.
    const crashed = memoryRunStore();
    const writer = crashed.openSession("a");
    for (const { record } of records.slice(0, decisionAt + 1)) writer.append(record);
    writer.release();
    const resumedEvents: AnyAgentEvent[] = [];
    // (The first response comes from the journal: the model is asked only for the second.)
    const streamFn = scriptedStreamFn([script[1]] as never);
    const resumed = await resumeAgentLoop({ store: crashed, sessionId: "a" }, { ...options, streamFn, sink: (event) => void resumedEvents.push(event) });
    expect(streamFn.calls).toHaveLength(1);
    expect(resumedEvents.some((event) => event.type === "tool_approval_requested")).toBe(false);
    expect(JSON.stringify(resumed.messages.at(-1))).toContain("done");
  });
});
