/**
 * R56 for stream functions that break the StreamFn contract in shape rather than by throwing:
 * the run still ends with a failure message, balanced events and every message of the run.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, type AgentEvent, type AssistantMessageEventStream, type StreamFn } from "../../src/index.js";
import { assistantMessage, baseConfig, structureProblems, user } from "./helpers.js";

const streamOf = (events: unknown[], final?: unknown): AssistantMessageEventStream => ({
  async *[Symbol.asyncIterator]() {
    for (const event of events) yield event as never;
  },
  result: async () => final as never,
});

async function run(streamFn: StreamFn) {
  const events: AgentEvent[] = [];
  const messages = await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), (e) => void events.push(e), undefined, streamFn);
  const failure = messages.at(-1) as { role: string; stopReason: string; errorMessage: string };
  return { events, messages, failure };
}

describe("R56: malformed provider streams end the run cleanly", () => {
  const cases: [string, StreamFn, RegExp][] = [
    ["returns null", () => null as never, /not iterable|Cannot read|null/i],
    ["returns a non-iterable object", () => ({ result: async () => undefined }) as never, /not (async )?iterable|is not a function/i],
    ["yields a null event", () => streamOf([null]), /Cannot read|null/i],
    ["ends with `done` but no message", () => streamOf([{ type: "done", reason: "stop" }]), /malformed message/],
    ["ends without a terminal event and result() gives nothing", () => streamOf([]), /malformed message/],
    ["ends with a message that is not an assistant message", () => streamOf([{ type: "done", reason: "stop", message: user("x") }]), /malformed message/],
  ];
  for (const [name, streamFn, error] of cases) {
    it(`R56: a stream that ${name}`, async () => {
      const { events, messages, failure } = await run(streamFn);
      expect(structureProblems(events)).toEqual([]);
      expect(events.map((e) => e.type).slice(-4)).toEqual(["message_start", "message_end", "turn_end", "agent_end"]);
      expect(failure).toMatchObject({ role: "assistant", stopReason: "error" });
      expect(failure.errorMessage).toMatch(error);
      expect((events.at(-1) as { messages: unknown[] }).messages).toEqual(messages);
    });
  }

  it("R56: a partial closed by a malformed terminal event stays in the run", async () => {
    const partial = assistantMessage([{ type: "text", text: "Hel" }], "stop");
    const { events, messages } = await run(() =>
      streamOf([{ type: "start", partial }, { type: "text_delta", contentIndex: 0, delta: "Hel", partial }, { type: "done", reason: "stop" }]),
    );
    expect(structureProblems(events)).toEqual([]);
    expect(messages.map((m) => (m as { role: string }).role)).toEqual(["user", "assistant", "assistant"]);
  });
});
