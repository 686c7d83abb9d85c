/**
 * Failures (SPEC R56, and R21–R23 for the tool hooks): app code that throws despite its contract.
 * A throwing loop hook, `convertToLlm`, `transformContext` or stream function ends the run cleanly
 * with an assistant failure message; a throwing tool hook or tool is just an error tool result.
 */
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  runAgentLoop,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentEvent,
  type AgentLoopConfig,
  type AssistantMessage,
  type ScriptedResponse,
  type StreamFn,
} from "../../src/index.js";
import { assistantMessage, baseConfig, entries, handStream, recorder, resultText, runScenario, structureProblems, summary, tool, toolResultsOf, untilAborted, user } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
const readCall = { content: [toolCall("read")] };

/** A hook that throws `message` on its `nth` call (1-based) and otherwise returns `value`. */
function throwsOn<T>(nth: number, message: string, value: T) {
  let calls = 0;
  return () => {
    if (++calls === nth) throw new Error(message);
    return value;
  };
}

const prefix = ["agent_start", "turn_start", "message_start:system", "message_end:system", "message_start:user(hi)", "message_end:user(hi)"];
const firstTurn = [
  "request",
  "message_start:assistant",
  "message_end:assistant(toolUse)",
  "tool_start:read",
  "tool_end:read",
  "message_start:toolResult(read)",
  "message_end:toolResult(read)",
];
const failure = ["message_start:assistant", "message_end:assistant(error)", "turn_end:assistant(error)+0"];

interface Case {
  name: string;
  config?: Partial<AgentLoopConfig>;
  script?: ScriptedResponse[];
  streamFn?: StreamFn;
  log: string[];
  /** Summaries of the run's messages. */
  messages: string[];
}

/** A stream that starts, streams "half", then throws. */
function cutStream(message: string): StreamFn {
  const partial = assistantMessage([{ type: "text", text: "half" }]);
  return handStream(
    [
      { type: "start", partial: assistantMessage([]) },
      { type: "text_start", contentIndex: 0, partial },
      { type: "text_delta", contentIndex: 0, delta: "half", partial },
    ],
    partial,
    message,
  );
}

const failed = (message: string) => `assistant(error)[]:${message}`;

const cases: Case[] = [
  {
    name: "getSteeringMessages (at run start)",
    config: { getSteeringMessages: throwsOn(1, "steering broke", Promise.resolve([])) },
    log: [...prefix, ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("steering broke")],
  },
  {
    name: "prepareRequest",
    config: { prepareRequest: throwsOn(1, "prepareRequest broke", undefined) },
    log: [...prefix, ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("prepareRequest broke")],
  },
  {
    name: "transformContext",
    config: { transformContext: throwsOn(1, "transformContext broke", Promise.resolve([])) as never },
    log: [...prefix, ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("transformContext broke")],
  },
  {
    name: "convertToLlm",
    config: { convertToLlm: throwsOn(1, "convertToLlm broke", []) },
    log: [...prefix, ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("convertToLlm broke")],
  },
  {
    name: "getApiKey",
    config: { getApiKey: throwsOn(1, "keychain locked", "key") },
    log: [...prefix, ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("keychain locked")],
  },
  {
    name: "stream function (before start)",
    script: [{ throws: { message: "socket exploded" } }],
    log: [...prefix, "request", ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("socket exploded")],
  },
  {
    name: "stream function (rejected promise)",
    streamFn: async () => {
      throw new Error("DNS lookup failed");
    },
    log: [...prefix, "request", ...failure, "agent_end:3"],
    messages: ["system( +read)", "user(hi)", failed("DNS lookup failed")],
  },
  {
    name: "stream function (after start)",
    streamFn: cutStream("stream cut"),
    log: [...prefix, "request", "message_start:assistant", "message_end:assistant(error)", ...failure, "agent_end:4"],
    messages: ["system( +read)", "user(hi)", "assistant(error)[half]:stream cut", failed("stream cut")],
  },
  {
    name: "finishTurn",
    config: { finishTurn: throwsOn(1, "finishTurn broke", Promise.resolve(undefined)) },
    log: [...prefix, ...firstTurn, ...failure, "agent_end:5"],
    messages: ["system( +read)", "user(hi)", "assistant(toolUse)[call read]", "toolResult(read):read done", failed("finishTurn broke")],
  },
  {
    name: "prepareNextTurn",
    config: { prepareNextTurn: throwsOn(1, "prepareNextTurn broke", Promise.resolve(undefined)) },
    log: [...prefix, ...firstTurn, "turn_end:assistant(toolUse)+1", "turn_start", ...failure, "agent_end:5"],
    messages: ["system( +read)", "user(hi)", "assistant(toolUse)[call read]", "toolResult(read):read done", failed("prepareNextTurn broke")],
  },
  {
    name: "getSteeringMessages (after a turn)",
    config: { getSteeringMessages: throwsOn(2, "steering broke later", Promise.resolve([])) },
    log: [...prefix, ...firstTurn, "turn_end:assistant(toolUse)+1", "turn_start", ...failure, "agent_end:5"],
    messages: ["system( +read)", "user(hi)", "assistant(toolUse)[call read]", "toolResult(read):read done", failed("steering broke later")],
  },
  {
    name: "getFollowUpMessages",
    config: { getFollowUpMessages: throwsOn(1, "follow-ups broke", Promise.resolve([])) },
    script: [answer("done")],
    log: [
      ...prefix,
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "turn_start",
      ...failure,
      "agent_end:4",
    ],
    messages: ["system( +read)", "user(hi)", "assistant(stop)[done]", failed("follow-ups broke")],
  },
];

describe("failures", () => {
  it.each(cases)("R56: a throwing $name ends the run cleanly with a failure message", async (c) => {
    const run = await runScenario({ tools: [tool("read")], script: c.script ?? [readCall, answer("done")], config: c.config, streamFn: c.streamFn });
    expect(run.log).toEqual(c.log);
    expect(structureProblems(run.events)).toEqual([]);
    expect(run.messages.map(summary)).toEqual(c.messages);
    const last = run.messages[run.messages.length - 1] as AssistantMessage;
    // The reference Agent's failure message, field for field: one empty text block, no thinking level.
    expect(last).toMatchObject({ role: "assistant", content: [{ type: "text", text: "" }], stopReason: "error", api: "scripted", provider: "scripted", model: "scripted" });
    expect(last).not.toHaveProperty("thinkingLevel");
    const turnEnd = run.events[run.events.length - 2];
    expect(turnEnd).toEqual({ type: "turn_end", message: last, toolResults: [] });
  });

  it.each(["transformContext", "convertToLlm", "prepareRequest"] as const)("R29, R56: a %s that rejects once the run is aborted ends the run aborted, not as a failure", async (hook) => {
    const controller = new AbortController();
    const rejectOnAbort = async (...args: unknown[]) => {
      const signal = args.find((a): a is AbortSignal => a instanceof AbortSignal) ?? controller.signal;
      setTimeout(() => controller.abort(), 1);
      await untilAborted(signal);
      throw new Error("This operation was aborted");
    };
    const run = await runScenario({ script: [answer("never")], config: { [hook]: rejectOnAbort }, signal: controller.signal });
    expect(structureProblems(run.events)).toEqual([]);
    expect(run.messages.map(summary)).toEqual(["user(hi)", "assistant(aborted)[]:This operation was aborted"]);
    expect(run.events[run.events.length - 1]).toMatchObject({ type: "agent_end", reason: "aborted" });
  });

  it("R56: a hook that fails while the run is not aborted ends it `error`, even with an abort-like error", async () => {
    const run = await runScenario({
      script: [answer("never")],
      config: {
        transformContext: async () => {
          throw Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
        },
      },
    });
    expect(run.messages.map(summary)).toEqual(["user(hi)", failed("This operation was aborted")]);
    expect(run.events[run.events.length - 1]).toMatchObject({ type: "agent_end", reason: "error" });
  });

  it("R56: a hook that throws a non-Error still ends the run, with its text as errorMessage", async () => {
    const run = await runScenario({
      script: [answer("never")],
      config: {
        prepareRequest: () => {
          throw "plain string";
        },
      },
    });
    expect(run.messages.map(summary)).toEqual(["user(hi)", failed("plain string")]);
    expect(structureProblems(run.events)).toEqual([]);
  });

  it("R56: agentLoop's stream completes after a failure, and result() resolves with every message", async () => {
    const events: AgentEvent[] = [];
    const loop = agentLoop([user("hi")], { messages: [] }, baseConfig({ finishTurn: async () => undefined }), undefined, cutStream("stream cut"));
    for await (const event of loop) events.push(event);
    expect(structureProblems(events)).toEqual([]);
    expect(entries(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "message_start:assistant",
      "message_end:assistant(error)",
      ...failure,
      "agent_end:3",
    ]);
    expect((await loop.result()).map(summary)).toEqual(["user(hi)", "assistant(error)[half]:stream cut", failed("stream cut")]);
  });

  it("R56: the scripted model's throws.afterEvents breaks the stream after start (the seam these tests rely on)", { timeout: 3_000 }, async () => {
    const stream = scriptedStreamFn([{ content: [text("one two three four")], throws: { message: "connection reset", afterEvents: 4 } }]);
    const rec = recorder();
    const messages = await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), rec.sink, undefined, stream);
    expect(structureProblems(rec.events)).toEqual([]);
    expect(messages.map(summary)).toEqual(["user(hi)", "assistant(error)[one two ]:connection reset", failed("connection reset")]);
  });

  it("R21: a throwing prepareArguments yields an error result with the thrown message, not a run failure", async () => {
    const read = tool("read", undefined, {
      prepareArguments: () => {
        throw new Error("cannot reshape arguments");
      },
    });
    const run = await runScenario({ tools: [read], script: [readCall, answer("done")] });
    expect(toolResultsOf(run.messages).map(summary)).toEqual(["toolResult(read!):cannot reshape arguments"]);
    expect(summary(run.messages[run.messages.length - 1])).toBe("assistant(stop)[done]");
  });

  it("R21: a throwing beforeToolCall yields an error result with the thrown message, not a run failure", async () => {
    let executed = false;
    const read = tool("read", async () => ((executed = true), { content: [], details: {} }));
    const run = await runScenario({
      tools: [read],
      script: [readCall, answer("done")],
      config: {
        beforeToolCall: async () => {
          throw new Error("policy service down");
        },
      },
    });
    expect(toolResultsOf(run.messages).map(summary)).toEqual(["toolResult(read!):policy service down"]);
    expect(executed).toBe(false);
    expect(summary(run.messages[run.messages.length - 1])).toBe("assistant(stop)[done]");
  });

  it("R22: a throwing execute yields an error result with the thrown message, not a run failure", async () => {
    const read = tool("read", async () => {
      throw new Error("ENOENT: no such file");
    });
    const run = await runScenario({ tools: [read], script: [readCall, answer("done")] });
    const [result] = toolResultsOf(run.messages);
    expect(resultText(result)).toBe("ENOENT: no such file");
    expect(result.isError).toBe(true);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(summary(run.messages[run.messages.length - 1])).toBe("assistant(stop)[done]");
  });

  it("R23: a throwing afterToolCall yields an error result with the thrown message, not a run failure", async () => {
    const run = await runScenario({
      tools: [tool("read")],
      script: [readCall, answer("done")],
      config: {
        afterToolCall: async () => {
          throw new Error("audit log unavailable");
        },
      },
    });
    const events = run.events.filter((e) => e.type === "tool_execution_end");
    expect(events).toEqual([
      expect.objectContaining({ type: "tool_execution_end", toolName: "read", isError: true, result: expect.objectContaining({ content: [{ type: "text", text: "audit log unavailable" }] }) }),
    ]);
    expect(toolResultsOf(run.messages).map(summary)).toEqual(["toolResult(read!):audit log unavailable"]);
    expect(summary(run.messages[run.messages.length - 1])).toBe("assistant(stop)[done]");
  });
});
