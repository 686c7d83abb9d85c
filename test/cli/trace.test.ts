import { describe, expect, it } from "vitest";
import { Agent, defaultConvertToLlm, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool } from "../../src/index.js";
import { createTraceRecorder, reduceEventForTrace } from "../../src/trace/index.js";
import { checkTrace } from "./fixture.js";

const echo = (name: string, reply = `${name} done`): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: reply }], details: { name } }),
});

function memoryRecorder(options: { secrets?: string[] } = {}) {
  let out = "";
  let clock = 1000;
  const recorder = createTraceRecorder({
    write: (line) => (out += line),
    now: () => (clock += 0.5),
    createdAt: new Date("2026-11-30T10:00:00.000Z"),
    model: { id: "scripted", provider: "scripted" },
    cwd: "/repo",
    ...options,
  });
  return { recorder, output: () => out };
}

describe("trace recorder: records", () => {
  it("starts with the header", () => {
    const { output } = memoryRecorder();
    expect(output()).toBe(
      '{"type":"trace","seq":0,"t":0,"version":1,"format":"xstate-agent-loop/trace","createdAt":"2026-11-30T10:00:00.000Z","model":{"id":"scripted","provider":"scripted"},"cwd":"/repo"}\n',
    );
  });

  it("events, with run numbers counted from agent_start, and notes", () => {
    const { recorder, output } = memoryRecorder();
    recorder.recordEvent({ type: "agent_start" });
    recorder.note("steering queued: hi");
    recorder.recordEvent({ type: "agent_end", messages: [] });
    recorder.recordEvent({ type: "agent_start" });
    const lines = output().trimEnd().split("\n").slice(1).map((line) => JSON.parse(line));
    expect(lines).toEqual([
      { type: "event", seq: 1, t: 0.5, run: 1, event: { type: "agent_start" } },
      { type: "note", seq: 2, t: 1, run: 1, text: "steering queued: hi" },
      { type: "event", seq: 3, t: 1.5, run: 1, event: { type: "agent_end", messages: [] } },
      { type: "event", seq: 4, t: 2, run: 2, event: { type: "agent_start" } },
    ]);
  });

  it("message_update loses its partial message; images lose their data; tool details stay as returned", () => {
    const partial = { role: "assistant", content: [{ type: "text", text: "Hel" }] } as never;
    expect(
      reduceEventForTrace({
        type: "message_update",
        message: partial,
        assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "lo", partial },
      }),
    ).toEqual({ type: "message_update", message: { role: "assistant", partial: true }, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "lo" } });
    const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" } as const;
    const event: AgentEvent = {
      type: "tool_execution_end",
      toolCallId: "c",
      toolName: "shot",
      result: { content: [image], details: { raw: image } },
      isError: false,
    };
    expect(reduceEventForTrace(event)).toEqual({
      type: "tool_execution_end",
      toolCallId: "c",
      toolName: "shot",
      result: { content: [{ type: "image", data: "<5 bytes>", mimeType: "image/png" }], details: { raw: image } },
      isError: false,
    });
  });

  it("never writes a secret", () => {
    const { recorder, output } = memoryRecorder({ secrets: ["hunter2-secret"] });
    recorder.note("key hunter2-secret and sk-ant-api03-abcdefghijklmnop");
    expect(output()).toContain('"text":"key [redacted] and [redacted]"');
  });
});

describe("trace recorder: state values from XState inspection", () => {
  it("records the run machine and each tool-call actor after each transition", async () => {
    const { recorder, output } = memoryRecorder();
    const streamFn = scriptedStreamFn([{ content: [toolCall("a"), toolCall("b")] }, { content: [text("done")] }]);
    await runAgentLoop(
      [{ role: "user", content: "go", timestamp: 1 }],
      { messages: [], tools: [echo("a"), echo("b")] },
      { model: scriptedModel, convertToLlm: defaultConvertToLlm },
      (event) => recorder.recordEvent(event),
      undefined,
      streamFn,
      { inspect: recorder.inspect },
    );
    const trace = checkTrace(output());
    const actors = [...new Set(trace.states.map((record) => record.actor))];
    expect(actors.sort()).toEqual(["run", "tool:0", "tool:1"]);
    const run = trace.states.filter((record) => record.actor === "run");
    expect(run[0]).toMatchObject({ run: 1, status: "active", cause: "xstate.init" });
    expect(run.at(-1)).toMatchObject({ run: 1, value: "done", status: "done" });
    // The run passes through executing its tool batch: a nested state value, as XState reports it.
    expect(run.some((record) => typeof record.value === "object" && "turn" in record.value && "executingTools" in record.value.turn)).toBe(true);
    for (const tool of ["tool:0", "tool:1"]) {
      const states = trace.states.filter((record) => record.actor === tool);
      expect(states[0].cause).toBe("xstate.init");
      expect(states.at(-1)!.status).toBe("done");
    }
    expect(trace.events.map((record) => record.event.type)).toContain("tool_execution_end");
  });

  it("numbers the runs of an Agent session; session snapshots may appear too", async () => {
    const { recorder, output } = memoryRecorder();
    const agent = new Agent({
      initialState: { model: scriptedModel, tools: [echo("a")] },
      streamFn: scriptedStreamFn([{ content: [toolCall("a")] }, { content: [text("one")] }, { content: [text("two")] }]),
      inspect: recorder.inspect,
    });
    agent.subscribe((event) => recorder.recordEvent(event));
    await agent.prompt("first");
    await agent.prompt("second");
    const trace = checkTrace(output());
    expect([...new Set(trace.events.map((record) => record.run))]).toEqual([1, 2]);
    const runStates = trace.states.filter((record) => record.actor === "run");
    expect([...new Set(runStates.map((record) => record.run))]).toEqual([1, 2]);
    expect(trace.states.filter((record) => record.actor === "tool:0").every((record) => record.run === 1)).toBe(true);
    expect(trace.states.every((record) => ["run", "session"].includes(record.actor) || /^tool:\d+$/.test(record.actor))).toBe(true);
  });
});
