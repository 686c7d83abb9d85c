/**
 * Tool declaration (SPEC R30): the transcript's system messages declare what the model may call;
 * before every injection the loop announces the difference to `context.tools`, so replaying the
 * transcript always yields the tools that can execute.
 */
import { describe, expect, it } from "vitest";
import { replayTranscript, text, toolCall, type AgentMessage, type AgentTool, type AgentTurnContext } from "../../src/index.js";
import { recorder, runScenario, summary, system, tool, user } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
/** The tools a transcript declares, by replaying its system messages. */
const declared = (messages: AgentMessage[]) => [...replayTranscript(messages).tools.values()];
const decl = (t: AgentTool) => ({ name: t.name, description: t.description, parameters: t.parameters });

const read = tool("read");
const grep = tool("grep");
const write = tool("write");

describe("tool declaration", () => {
  it("R30: tools the transcript does not declare are announced in a system message before the first prompt", async () => {
    const run = await runScenario({ tools: [read, grep], script: [answer("ok")] });
    expect(run.messages[0]).toEqual({ role: "system", content: "", toolsAdded: [decl(read), decl(grep)], timestamp: expect.any(Number) });
    expect(run.messages.map(summary)).toEqual(["system( +read,grep)", "user(hi)", "assistant(stop)[ok]"]);
    expect(run.stream.calls[0].context.messages[0]).toEqual(run.messages[0]);
  });

  it("R30: nothing is injected when the transcript already declares exactly context.tools", async () => {
    const prior = [system("You help.", { toolsAdded: [decl(read)] }), user("old", 0)];
    const run = await runScenario({ messages: prior, tools: [read], script: [answer("ok")] });
    expect(run.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[ok]"]);
    expect(run.log.slice(0, 4)).toEqual(["agent_start", "turn_start", "message_start:user(hi)", "message_end:user(hi)"]);
  });

  it("R30: a changed definition is a removal plus an addition; a dropped tool is a removal", async () => {
    const oldRead = { ...decl(read), description: "Reads a file (v1)" };
    const prior = [system("You help.", { toolsAdded: [oldRead, decl(grep)] })];
    const run = await runScenario({ messages: prior, tools: [read], script: [answer("ok")] });
    expect(run.messages[0]).toEqual({
      role: "system",
      content: "",
      toolsAdded: [decl(read)],
      toolsRemoved: [{ name: "read" }, { name: "grep" }],
      timestamp: expect.any(Number),
    });
  });

  it("R30: a pending system message carries the delta itself; the caller's object is not changed", async () => {
    const prompt = system("Be brief.");
    const run = await runScenario({ prompts: [prompt, user("hi")], tools: [read], script: [answer("ok")] });
    expect(run.messages.slice(0, 2)).toEqual([{ role: "system", content: "Be brief.", timestamp: 1, toolsAdded: [decl(read)] }, user("hi")]);
    expect(prompt).toEqual({ role: "system", content: "Be brief.", timestamp: 1 });
    expect(run.log.slice(0, 6)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
    ]);
  });

  it("R30: a pending system message is kept as is when there is no delta and it declares nothing", async () => {
    const prompt = system("Be brief.");
    const run = await runScenario({
      messages: [system("You help.", { toolsAdded: [decl(read)] })],
      prompts: [prompt, user("hi")],
      tools: [read],
      script: [answer("ok")],
    });
    expect(run.messages[0]).toBe(prompt);
  });

  it("R30: a pending system message's own tool fields are replaced by exactly the delta", async () => {
    const prompt = system("Use ghost.", { toolsAdded: [{ name: "ghost", description: "not executable", parameters: { type: "object" } }] });
    const run = await runScenario({
      messages: [system("You help.", { toolsAdded: [decl(read)] })],
      prompts: [prompt, user("hi")],
      tools: [read, grep],
      script: [answer("ok")],
    });
    expect(run.messages[0]).toEqual({ role: "system", content: "Use ghost.", timestamp: 1, toolsAdded: [decl(grep)] });
  });

  it("R30: a tool added by prepareNextTurn's context is declared before the next request", async () => {
    const rec = recorder();
    let n = 0;
    const run = await runScenario(
      {
        tools: [read],
        script: [{ content: [toolCall("read")] }, { content: [toolCall("write")] }, answer("done")],
        config: {
          prepareNextTurn: async (turn: AgentTurnContext) =>
            n++ === 0 ? { context: { messages: turn.context.messages, tools: [read, write] } } : undefined,
        },
      },
      rec,
    );
    const second = run.log.indexOf("turn_end:assistant(toolUse)+1");
    expect(run.log.slice(second, second + 5)).toEqual([
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "request",
    ]);
    expect(run.stream.calls[1].context.messages.map(summary)).toEqual([
      "system( +read)",
      "user(hi)",
      "assistant(toolUse)[call read]",
      "toolResult(read):read done",
      "system( +write)",
    ]);
    // The new tool can execute, and the transcript replays to the tools that can.
    expect(run.messages.map(summary)).toContain("toolResult(write):write done");
    expect(declared(run.messages)).toEqual([decl(read), decl(write)]);
  });

  it("R30: a tool removed by prepareNextTurn's context is announced as removed", async () => {
    let n = 0;
    const run = await runScenario({
      tools: [read, grep],
      script: [{ content: [toolCall("read")] }, answer("done")],
      config: {
        prepareNextTurn: async (turn: AgentTurnContext) => (n++ === 0 ? { context: { messages: turn.context.messages, tools: [read] } } : undefined),
      },
    });
    expect(run.stream.calls[1].context.messages.map(summary).slice(-1)).toEqual(["system( -grep)"]);
    expect(declared(run.messages)).toEqual([decl(read)]);
  });

  it("R30: agentLoopContinue announces undeclared tools with nothing else pending", async () => {
    const run = await runScenario({ prompts: null, messages: [user("q")], tools: [read], script: [answer("ok")] });
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:2",
    ]);
    expect(run.stream.calls[0].context.messages.map(summary)).toEqual(["user(q)", "system( +read)"]);
  });

  it("R30: agentLoopContinue declares tools together with the start-of-run steering messages (a steering system message carries the delta)", async () => {
    const rec = recorder();
    const steering = [system("Switch to terse mode."), user("steer")];
    let polled = false;
    const run = await runScenario(
      {
        prompts: null,
        messages: [user("q")],
        tools: [read],
        script: [answer("ok")],
        config: { getSteeringMessages: async () => (rec.note("hook:getSteeringMessages"), polled ? [] : ((polled = true), steering)) },
      },
      rec,
    );
    expect(run.messages).toEqual([
      { role: "system", content: "Switch to terse mode.", timestamp: 1, toolsAdded: [decl(read)] },
      user("steer"),
      expect.objectContaining({ role: "assistant", stopReason: "stop" }),
    ]);
    expect(run.log.slice(0, 8)).toEqual([
      "agent_start",
      "turn_start",
      "hook:getSteeringMessages",
      "message_start:system",
      "message_end:system",
      "message_start:user(steer)",
      "message_end:user(steer)",
      "request",
    ]);
  });

  it("R30: replaying the transcript yields context.tools after every run", async () => {
    const first = await runScenario({ tools: [read, grep], script: [answer("one")] });
    const transcript: AgentMessage[] = [...first.messages];
    const second = await runScenario({ messages: transcript, tools: [grep, write], script: [answer("two")] });
    expect(declared([...transcript, ...second.messages])).toEqual([decl(grep), decl(write)]);
    expect(second.messages.map(summary)[0]).toBe("system( -read +write)");
  });
});
