/**
 * Issue 16, "setDefaultStreamFn" (SPEC "Entry points": `streamFn` omitted → the default set with
 * `setDefaultStreamFn`; none set → a clear `TypeError` at the call), side by side with the reference.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent as PiAgent } from "@earendil-works/pi-agent-core";
import {
  Agent,
  agentLoop,
  agentLoopContinue,
  defaultConvertToLlm,
  runAgentLoop,
  runAgentLoopContinue,
  setDefaultStreamFn,
  type AgentLoopConfig,
  type AgentMessage,
  type StreamFn,
} from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text } from "../../src/testing/index.js";
import { thrown } from "../support/thrown.js";

const NO_DEFAULT = "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().";
const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: defaultConvertToLlm };
const prompt: AgentMessage = { role: "user", content: "hi", timestamp: 1 };
const sink = () => {};

afterEach(() => setDefaultStreamFn(undefined));

const expectNoDefault = (call: () => unknown) => {
  const error = thrown(call);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe(NO_DEFAULT);
};

describe("issue 16: no stream function and no default", () => {
  it("new Agent() and new Agent({}) throw the reference's message, as a TypeError", () => {
    for (const make of [() => new Agent(), () => new Agent({})]) expectNoDefault(make);
    // The reference's wording, so apps matching on it keep working.
    const Reference = PiAgent as new (options?: object) => unknown; // its types require the options we omit on purpose
    expect(() => new Reference()).toThrow(NO_DEFAULT);
    expect(() => new Reference({})).toThrow(NO_DEFAULT);
  });

  it("each loop entry point refuses with the TypeError at the call, before any event: the stream ones throw, the promise ones reject", async () => {
    for (const call of [() => agentLoop([prompt], { messages: [] }, config), () => agentLoopContinue({ messages: [prompt] }, config)]) expectNoDefault(call);
    for (const call of [() => runAgentLoop([prompt], { messages: [] }, config, sink), () => runAgentLoopContinue({ messages: [prompt] }, config, sink)]) {
      let returned: Promise<unknown> | undefined;
      expect(() => (returned = call())).not.toThrow();
      await expect(returned).rejects.toThrow(NO_DEFAULT);
      await expect(returned).rejects.toBeInstanceOf(TypeError);
    }
  });

  it("setDefaultStreamFn refuses what is not a function", () => {
    expect(() => setDefaultStreamFn(42 as unknown as StreamFn)).toThrow(TypeError);
  });
});

describe("issue 16: with a default set", () => {
  it("the loop functions and the Agent use it when streamFn is omitted", async () => {
    const fallback = scriptedStreamFn(() => ({ content: [text("from the default")] }));
    setDefaultStreamFn(fallback);

    const viaStream = await agentLoop([prompt], { messages: [] }, config).result();
    const viaSink = await runAgentLoop([prompt], { messages: [] }, config, sink);
    const agent = new Agent({ initialState: { model: scriptedModel } });
    await agent.prompt("hello");

    expect(fallback.calls).toHaveLength(3);
    for (const messages of [viaStream, viaSink, agent.state.messages]) {
      expect(messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "from the default" }] });
    }
  });

  it("an explicit streamFn wins over the default", async () => {
    const fallback = scriptedStreamFn(() => ({ content: [text("default")] }));
    const own = scriptedStreamFn(() => ({ content: [text("own")] }));
    setDefaultStreamFn(fallback);
    await runAgentLoop([prompt], { messages: [] }, config, sink, undefined, own);
    await new Agent({ streamFn: own, initialState: { model: scriptedModel } }).prompt("x");
    expect([fallback.calls.length, own.calls.length]).toEqual([0, 2]);
  });

  it("an Agent keeps the default it was built with; setDefaultStreamFn(undefined) removes it for later calls", async () => {
    const fallback = scriptedStreamFn(() => ({ content: [text("kept")] }));
    setDefaultStreamFn(fallback);
    const agent = new Agent({ initialState: { model: scriptedModel } });
    setDefaultStreamFn(undefined);
    await agent.prompt("x");
    expect(fallback.calls).toHaveLength(1);
    expectNoDefault(() => new Agent());
  });
});
