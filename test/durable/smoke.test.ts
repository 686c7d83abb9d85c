import { describe, expect, it } from "vitest";
import type { AgentTool, AnyAgentEvent } from "../../src/index.js";
import { runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { replayEvents } from "../../src/durable/replay.js";
import { memoryRunStore } from "../support/memory-run-store.js";

const tool = (name: string): AgentTool => ({
  name, label: name, description: name, parameters: { type: "object", properties: {} },
  execute: async (id) => ({ content: [{ type: "text", text: `${name} ${id}` }], details: {} }),
});

describe("smoke", () => {
  it("records and replays", async () => {
    const store = memoryRunStore();
    const live: string[] = [];
    const streamFn = scriptedStreamFn([{ content: [text("a"), toolCall("t", {}, "c1"), toolCall("u", {}, "c2")] }, { content: [text("done")] }]);
    await runAgentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [], tools: [tool("t"), tool("u")] }, { model: scriptedModel, convertToLlm: (m) => m as never }, (e: AnyAgentEvent) => void live.push(JSON.stringify(e)), undefined, streamFn, { durable: { store, sessionId: "s" } });
    const records = store.readSession("s").records();
    console.log(records.map((r) => JSON.stringify(r.record).slice(0, 160)).join("\n"));
    const replayed = (await replayEvents(records)).map((e) => JSON.stringify(e));
    expect(replayed).toEqual(live);
  });
});
