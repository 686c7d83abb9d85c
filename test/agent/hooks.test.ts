import { describe, expect, it } from "vitest";
import { defaultConvertToLlm, text, toolCall, type AgentMessage, type AgentTurnContext } from "../../src/index.js";
import { ok, tool } from "../loop/helpers.js";
import { roles, says, scenario } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
const readThenAnswer = [{ content: [toolCall("read")] }, answer("done")];

describe("Agent hooks (R54 and the loop hooks)", () => {
  it("convertToLlm defaults to the four provider roles; app-defined messages stay in the transcript only", async () => {
    const note = { role: "note", text: "for the UI", timestamp: 1 } as unknown as AgentMessage;
    const { agent, stream } = scenario([answer("a")], {}, { systemPrompt: "S", messages: [note] });
    await agent.prompt("go");
    expect(roles(agent.state.messages)).toEqual(["system", "note", "user", "assistant"]);
    expect(stream.calls[0].context.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("every hook is a settable property, read when a run starts", async () => {
    const { agent, note, log, stream } = scenario(readThenAnswer, {}, { tools: [tool("read")] });
    agent.convertToLlm = (messages) => (note("convertToLlm"), defaultConvertToLlm(messages));
    agent.transformContext = async (messages) => (note("transformContext"), messages);
    agent.getApiKey = (provider) => (note(`getApiKey:${provider}`), "key");
    agent.prepareRequest = () => void note("prepareRequest");
    agent.beforeToolCall = async () => (note("beforeToolCall"), undefined);
    agent.afterToolCall = async () => (note("afterToolCall"), { content: [{ type: "text", text: "rewritten" }] });
    agent.finishTurn = () => void note("finishTurn");
    await agent.prompt("go");
    const hooks = log.filter((entry) => !entry.includes(":") || entry.startsWith("getApiKey"));
    expect(hooks).toEqual([
      "agent_start",
      "turn_start",
      "prepareRequest",
      "transformContext",
      "convertToLlm",
      "getApiKey:scripted",
      "beforeToolCall",
      "afterToolCall",
      "finishTurn",
      "turn_start",
      "prepareRequest",
      "transformContext",
      "convertToLlm",
      "getApiKey:scripted",
      "finishTurn",
    ]);
    expect(stream.calls.every((call) => call.hadApiKey)).toBe(true);
    expect(agent.state.messages.find((m) => (m as { role: string }).role === "toolResult")).toMatchObject({ content: [{ text: "rewritten" }] });
  });

  it("a hook assigned during a run applies from the next run (the reference reads them at run start)", async () => {
    const { agent } = scenario([...readThenAnswer, ...readThenAnswer], {}, { tools: [tool("read")] });
    agent.subscribe((event) => {
      if (event.type === "message_end" && (event.message as { role: string }).role === "assistant") {
        agent.beforeToolCall = async () => ({ block: true, reason: "blocked later" });
      }
    });
    await agent.prompt("one");
    await agent.prompt("two");
    const results = agent.state.messages.filter((m) => (m as { role: string }).role === "toolResult");
    expect(results.map((m) => (m as { isError: boolean }).isError)).toEqual([false, true]);
  });

  it("R54: prepareNextTurn(signal) is called before every turn but the first", async () => {
    const { agent } = scenario(readThenAnswer, {}, { tools: [tool("read")] });
    const calls: unknown[][] = [];
    agent.prepareNextTurn = (...args) => {
      calls.push(args);
      return { messages: [says("injected by prepareNextTurn")] };
    };
    await agent.prompt("go");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(1);
    expect(calls[0][0]).toBeInstanceOf(AbortSignal);
    expect(agent.state.messages.map((m) => (m as { content?: unknown }).content)).toContainEqual("injected by prepareNextTurn");
  });

  it("R54: prepareNextTurnWithContext(turn, signal) sees the completed turn and wins over prepareNextTurn", async () => {
    const { agent } = scenario(readThenAnswer, {}, { tools: [tool("read")] });
    const turns: AgentTurnContext[] = [];
    let plain = 0;
    agent.prepareNextTurn = () => void plain++;
    agent.prepareNextTurnWithContext = (turn, signal) => {
      turns.push(turn);
      expect(signal).toBeInstanceOf(AbortSignal);
      return undefined;
    };
    await agent.prompt("go");
    expect(plain).toBe(0);
    expect(turns.map((turn) => [turn.message.stopReason, turn.toolResults.length])).toEqual([["toolUse", 1]]);
  });

  it("toolExecution is a property: sequential runs each call to its result before the next starts", async () => {
    const order: string[] = [];
    const step = (name: string) =>
      tool(name, async () => {
        order.push(`${name}:start`);
        await Promise.resolve();
        order.push(`${name}:end`);
        return ok(name);
      });
    const { agent } = scenario([{ content: [toolCall("a"), toolCall("b")] }, answer("done")], {}, { tools: [step("a"), step("b")] });
    expect(agent.toolExecution).toBe("parallel");
    agent.toolExecution = "sequential";
    await agent.prompt("go");
    expect(order).toEqual(["a:start", "a:end", "b:start", "b:end"]);
  });

  it("streamFn is the streamFunction property", async () => {
    const { agent, stream } = scenario([answer("a")]);
    expect(agent.streamFunction).toBe(stream);
  });
});
