/**
 * R80, R81: a durable Agent's queue arrivals are journaled where the Agent takes them, so a crash
 * loses no steered or follow-up message and a resumed session takes none twice. Crashes are
 * simulated by a fresh store holding a prefix of the journal (a crash right after that record).
 */
import { describe, expect, it } from "vitest";
import type { AgentMessage, AgentTool } from "../../src/index.js";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import type { Json } from "../../src/store/run-store.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { SessionLockedError } from "../../src/store/errors.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { fixedClock } from "./crash-scenario.js";

const steered: AgentMessage = { role: "user", content: [{ type: "text", text: "also check b" }], timestamp: 5 };
const userTexts = (messages: readonly AgentMessage[]) =>
  messages.flatMap((message) => (message.role === "user" ? [typeof message.content === "string" ? message.content : message.content.map((block) => (block.type === "text" ? block.text : "")).join("")] : []));

/** First a `wait` call, then an answer naming every user message heard: any Agent continues it the same way. */
const streamFn = () =>
  scriptedStreamFn((request) =>
    request.context.messages.some((message) => message.role === "toolResult")
      ? { content: [text(`heard ${userTexts(request.context.messages as AgentMessage[]).join(" + ")}`)] }
      : { content: [toolCall("wait", {}, "w1")] },
  );

function durableAgent(store: ReturnType<typeof memoryRunStore>, wait: AgentTool["execute"] = async () => ({ content: [{ type: "text", text: "waited" }], details: {} })) {
  const tool: AgentTool = { name: "wait", label: "wait", description: "waits", parameters: { type: "object", properties: {} } as never, execute: wait };
  return new Agent({ streamFn: streamFn(), initialState: { model: scriptedModel, tools: [tool] }, clock: fixedClock, durable: { store, sessionId: "q" } });
}

describe("R80: a durable Agent's queue arrivals", () => {
  it("R80, R81: a message steered while a tool runs survives a crash at every record; it reaches the model exactly once", async () => {
    const store = memoryRunStore();
    let agent!: Agent;
    agent = durableAgent(store, async () => {
      // The Agent is mid-run: the steered message waits for the run's next poll.
      agent.steer(steered);
      return { content: [{ type: "text", text: "waited" }], details: {} };
    });
    await agent.prompt("check a");
    expect(userTexts(agent.state.messages)).toEqual(["check a", "also check b"]);
    const records = store.readSession("q").records().map((entry) => entry.record);
    const pushedAt = records.findIndex((record) => (record as { k: string }).k === "queue");
    expect(records[pushedAt]).toEqual({ k: "queue", op: "push", queue: "steering", message: steered as unknown as Json });
    const endAt = records.findIndex((record) => (record as { k: string }).k === "end");
    expect(pushedAt).toBeGreaterThan(0);
    for (let n = 1; n < endAt + 1; n++) {
      const crashed = memoryRunStore();
      const writer = crashed.openSession("q");
      records.slice(0, n).forEach((record: Json) => writer.append(record));
      writer.release();
      const resumed = durableAgent(crashed);
      expect(await resumed.resume(), `crash after record ${n}`).toBe(true);
      const heard = userTexts(resumed.state.messages);
      // Queued before the crash: taken once, by the poll that took it or by the one that ran again.
      if (n > pushedAt) expect(heard, `crash after record ${n}`).toEqual(["check a", "also check b"]);
      else expect(heard, `crash after record ${n}`).toEqual(["check a"]);
      expect(resumed.hasQueuedMessages(), `crash after record ${n}`).toBe(false);
    }
  });

  it("R80, R81: a follow-up queued while the Agent is idle is journaled on its own; a new process finds it queued", async () => {
    const store = memoryRunStore();
    const first = durableAgent(store);
    await first.prompt("check a");
    first.followUp(steered);
    first.clearSteeringQueue();
    const records = store.readSession("q").records().map((entry) => entry.record);
    expect(records.slice(-2)).toEqual([
      { k: "queue", op: "push", queue: "followUp", message: steered as unknown as Json },
      { k: "queue", op: "clear", queue: "steering" },
    ]);
    // R84: the first Agent holds the session until it gives it up (a process that exits does).
    first.release();
    const second = durableAgent(store);
    expect(await second.resume()).toBe(false);
    expect(second.peekQueuedMessages()).toEqual([steered]);
    // The next run takes it where a follow-up goes, and the queue is empty after.
    await second.continue();
    expect(userTexts(second.state.messages)).toEqual(["check a", "also check b"]);
    expect(second.hasQueuedMessages()).toBe(false);
    second.release();
    const third = durableAgent(store);
    expect(await third.resume()).toBe(false);
    expect(third.hasQueuedMessages()).toBe(false);
  });

  it("R84, R80: while another writer holds the session, steer() throws SessionLockedError and queues nothing", () => {
    const store = createMemoryStore();
    const holder = store.openSession("q");
    const agent = new Agent({ streamFn: streamFn(), initialState: { model: scriptedModel }, durable: { store, sessionId: "q" } });
    expect(() => agent.steer(steered)).toThrow(SessionLockedError);
    expect(agent.hasQueuedMessages()).toBe(false);
    holder.release();
    agent.steer(steered);
    expect(agent.peekQueuedMessages()).toEqual([steered]);
  });
});
