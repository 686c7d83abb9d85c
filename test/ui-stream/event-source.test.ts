import { describe, expect, it } from "vitest";
import { Agent } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text } from "../../src/testing/index.js";
import { runEventBuffer, type SequencedEvent } from "../../src/ui-stream/index.js";

const deltas = (events: SequencedEvent[]) =>
  events.map(({ event }) => (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta" ? event.assistantMessageEvent.delta : "")).join("");

describe("runEventBuffer: the in-process source a reconnect re-attaches to", () => {
  it("a subscriber that joins mid-run from runStartAfter gets the run from agent_start, each event once, in seq order", async () => {
    const reply = "The quick brown fox jumps over the lazy dog.";
    const agent = new Agent({ streamFn: scriptedStreamFn([{ content: [text("First.")] }, { content: [text(reply)], chunkSize: 3 }]), initialState: { model: scriptedModel } });
    const buffer = runEventBuffer(agent);
    await agent.prompt("one");
    const late: SequencedEvent[] = [];
    let joined = false;
    // Join the second run at its 5th text delta.
    const first: SequencedEvent[] = [];
    buffer.subscribe((entry) => {
      first.push(entry);
      if (!joined && first.filter((e) => e.event.type === "message_update").length === 5) {
        joined = true;
        buffer.subscribe((e) => late.push(e), { after: buffer.runStartAfter });
      }
    }, { after: buffer.lastSeq });
    await agent.prompt("two");
    expect(late[0]!.event.type).toBe("agent_start");
    expect(late.map((e) => e.seq)).toEqual(first.map((e) => e.seq));
    expect(late.map((e) => e.seq)).toEqual(late.map((_, i) => late[0]!.seq + i));
    expect(deltas(late)).toBe(reply);
    // `after` a point: only what follows it.
    const tail: SequencedEvent[] = [];
    buffer.subscribe((e) => tail.push(e), { after: late.at(-3)!.seq })();
    expect(tail.map((e) => e.event.type)).toEqual(late.slice(-2).map((e) => e.event.type));
    buffer.close();
  });
});
