/**
 * The follow page's event log (examples/web-chat/src/session-log.ts): a retraction
 * (`message_discarded`, reason `interrupted`, R81) takes back every provisional event from its
 * `fromSeq` on, the firm ones in between stay; the page draws again from what is kept.
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/index.js";
import { SessionLog } from "../../examples/web-chat/src/session-log.js";

const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] }) as never;
const ev = (event: object) => event as AgentEvent;

describe("web chat follow view: retractions (R81)", () => {
  it("R81: a retraction pointing back at a partial response drops its provisional events from fromSeq on, keeps firm tool events, and draws the re-requested answer alone", () => {
    const log = new SessionLog<AgentEvent>();
    const feed: [number, AgentEvent, boolean][] = [
      [36, ev({ type: "turn_start" }), false],
      [37, ev({ type: "message_start", message: assistant("") }), true],
      [38, ev({ type: "message_update", message: assistant("Turn 1.") }), true],
      [39, ev({ type: "tool_execution_start", toolCallId: "t1", toolName: "read", args: {} }), false],
      [40, ev({ type: "message_update", message: assistant("Turn 1. more") }), true],
      [41, ev({ type: "tool_execution_end", toolCallId: "t1", toolName: "read", result: {}, isError: false }), false],
    ];
    const outcomes = feed.map(([id, event, provisional]) => log.add({ id, event, provisional }));
    expect(log.add({ id: 42, event: ev({ type: "message_discarded", reason: "interrupted", fromSeq: 37 }), provisional: false })).toBe("retracted");
    log.add({ id: 43, event: ev({ type: "message_start", message: assistant("") }), provisional: true });
    log.add({ id: 44, event: ev({ type: "message_end", message: assistant("(asked again) Turn 1.") }), provisional: false });
    expect(outcomes).toEqual(Array(6).fill("appended"));
    expect(log.events.map(({ id, event }) => `${id} ${event.type}`)).toEqual(["36 turn_start", "39 tool_execution_start", "41 tool_execution_end", "43 message_start", "44 message_end"]);
  });

  it("R81: a retraction drops only provisional events from its fromSeq on (none here: nothing firm before it goes); a message_discarded without fromSeq is an ordinary event", () => {
    const log = new SessionLog<AgentEvent>();
    log.add({ id: 1, event: ev({ type: "message_start", message: assistant("") }), provisional: true });
    log.add({ id: 2, event: ev({ type: "message_discarded", reason: "output_limit" }), provisional: false });
    expect(log.add({ id: 3, event: ev({ type: "message_discarded", reason: "interrupted", fromSeq: 3 }), provisional: false })).toBe("retracted");
    expect(log.events.map(({ id, event }) => `${id} ${event.type}`)).toEqual(["1 message_start", "2 message_discarded"]);
  });
});
