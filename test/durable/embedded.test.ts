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
});
