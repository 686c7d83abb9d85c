/**
 * Issue 15 items 8, 9, 12, 13: bad arguments are typed errors at the call, and the run never
 * crashes the host (unhandled rejections and uncaught exceptions are recorded and must be none).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  Agent,
  AgentInputError,
  agentLoop,
  agentLoopContinue,
  defineTool,
  runAgentLoop,
  runToolCall,
  scriptedModel,
  scriptedStreamFn,
  text,
  toolCall,
  validateToolArguments,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
} from "../../src/index.js";
import { baseConfig, tool, user } from "../loop/helpers.js";
import { watchCrashes, type CrashWatch } from "./crash-watch.js";

let crashes: CrashWatch;
beforeEach(() => void (crashes = watchCrashes()));
afterEach(async () => {
  const seen = await crashes.settle();
  crashes.stop();
  expect(seen, "unhandled rejections / uncaught exceptions").toEqual([]);
});

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

/** The error a call refused with: thrown at the call (the stream entry points) or its promise's rejection (the promise ones). */
async function refused(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a refusal");
}

const assistantOf = (messages: AgentMessage[]) => messages.filter((m): m is AssistantMessage => m.role === "assistant");

describe("issue 15 item 9: duck-typed signals are refused at the call", () => {
  const signals: [string, unknown][] = [
    ["{aborted: true}", { aborted: true }],
    ["{aborted: false}", { aborted: false }],
    ["a string", "abort"],
  ];
  it.each(signals)("agentLoop, runAgentLoop, agentLoopContinue and runToolCall refuse %s", async (_name, signal) => {
    const stream = scriptedStreamFn([{ content: [text("hi")] }]);
    const calls = [
      () => agentLoop([user("hi")], { messages: [] }, baseConfig(), signal as AbortSignal, stream),
      () => runAgentLoop([user("hi")], { messages: [] }, baseConfig(), () => {}, signal as AbortSignal, stream),
      () => agentLoopContinue({ messages: [user("hi")] }, baseConfig(), signal as AbortSignal, stream),
      () =>
        runToolCall(
          { type: "toolCall", id: "1", name: "t", arguments: {} },
          { tools: [tool("t")], assistantMessage: {} as AssistantMessage, context: { messages: [] }, signal: signal as AbortSignal },
        ),
    ];
    for (const call of calls) {
      const error = await refused(call);
      expect(error).toBeInstanceOf(AgentInputError);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as AgentInputError).field).toMatch(/signal$/);
      expect(error.message).toMatch(/signal must be an AbortSignal/);
    }
    expect(stream.calls).toHaveLength(0);
  });
  it("a real signal still works (aborted before the start ends the run aborted)", async () => {
    const messages = await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), () => {}, AbortSignal.abort(), scriptedStreamFn([{ content: [text("hi")] }]));
    expect(assistantOf(messages).at(-1)?.stopReason).toBe("aborted");
  });
});

describe("issue 15 item 13: garbage arguments are typed errors at the call", () => {
  it("agent.prompt(5) rejects, followUp(5) and steer(5) throw; nothing is queued or run", async () => {
    const stream = scriptedStreamFn([{ content: [text("hi")] }]);
    const agent = new Agent({ streamFn: stream, initialState: { model: scriptedModel } });
    await expect(agent.prompt(5 as never)).rejects.toMatchObject({ name: "AgentInputError", field: "prompt" });
    await expect(agent.prompt([user("ok"), "abc"] as never)).rejects.toMatchObject({ name: "AgentInputError", field: "prompt[1]" });
    await expect(agent.prompt("hi", [{ type: "text", text: "not an image" }] as never)).rejects.toMatchObject({ field: "images[0].type" });
    expect(thrown(() => agent.followUp(5 as never))).toMatchObject({ name: "AgentInputError", field: "followUp(message)" });
    expect(thrown(() => agent.steer(5 as never))).toMatchObject({ name: "AgentInputError", field: "steer(message)" });
    expect(agent.hasQueuedMessages()).toBe(false);
    expect(stream.calls).toHaveLength(0);
    expect(agent.state.messages).toEqual([]);
  });
  it("context.tools = \"x\" is refused by agentLoop and runAgentLoop; agent.state.tools = \"x\" by the setter", async () => {
    const stream = scriptedStreamFn([{ content: [text("hi")] }]);
    for (const call of [
      () => agentLoop([user("hi")], { messages: [], tools: "x" as never }, baseConfig(), undefined, stream),
      () => runAgentLoop([user("hi")], { messages: [], tools: "x" as never }, baseConfig(), () => {}, undefined, stream),
    ]) {
      expect(await refused(call)).toMatchObject({ name: "AgentInputError", field: "context.tools", message: 'context.tools must be an array of tools, got a string ("x")' });
    }
    const agent = new Agent({ streamFn: stream });
    expect(thrown(() => (agent.state.tools = "x" as never))).toMatchObject({ name: "AgentInputError", field: "state.tools" });
    expect(agent.state.tools).toEqual([]);
  });
  it("prompts and transcript messages are checked at the call", () => {
    const stream = scriptedStreamFn([{ content: [text("hi")] }]);
    expect(thrown(() => agentLoop([5 as never], { messages: [] }, baseConfig(), undefined, stream))).toMatchObject({ field: "prompts[0]" });
    expect(thrown(() => agentLoop([user("hi")], { messages: ["abc" as never] }, baseConfig(), undefined, stream))).toMatchObject({ field: "context.messages[0]" });
  });
  it("defineTool with a cyclic JSON Schema throws at defineTool, naming the field", () => {
    const schema: Record<string, unknown> = { type: "object", properties: {} };
    (schema.properties as Record<string, unknown>).next = schema;
    const error = thrown(() => defineTool({ name: "loop", description: "", parameters: schema, execute: async () => ({ content: [], details: {} }) }));
    expect(error).toBeInstanceOf(AgentInputError);
    expect(error).toMatchObject({ field: 'defineTool("loop").parameters.properties.next' });
  });
});

describe("issue 15 item 8: the scripted model with a bad model descriptor", () => {
  it("agentLoop refuses a descriptor without cost at the call", () => {
    const { cost: _cost, ...noCost } = scriptedModel;
    const error = thrown(() => agentLoop([user("hi")], { messages: [] }, baseConfig({ model: noCost as never }), undefined, scriptedStreamFn([])));
    expect(error).toMatchObject({ name: "AgentInputError", field: "config.model.cost" });
  });
  it("agent.state.model = null throws at the setter; the model is unchanged", () => {
    const agent = new Agent({ streamFn: scriptedStreamFn([]), initialState: { model: scriptedModel } });
    expect(thrown(() => (agent.state.model = null as never))).toMatchObject({ name: "AgentInputError", field: "state.model" });
    expect(agent.state.model).toBe(scriptedModel);
  });
  it("a hook returning {model: \"gpt\"}: the run ends with an error message and agent_end, no unhandled rejection", async () => {
    const events: AgentEvent[] = [];
    const messages = await runAgentLoop(
      [user("hi")],
      { messages: [] },
      baseConfig({ prepareRequest: async () => ({ model: "gpt" as never }) }),
      (event) => void events.push(event),
      undefined,
      scriptedStreamFn([{ content: [text("hi")] }]),
    );
    expect(events.at(-1)?.type).toBe("agent_end");
    const last = assistantOf(messages).at(-1)!;
    expect(last.stopReason).toBe("error");
    expect(last.errorMessage).toMatch(/model/);
  });
  it("the scripted stream function itself turns a descriptor without cost into an error event", async () => {
    const { cost: _cost, ...noCost } = scriptedModel;
    const stream = scriptedStreamFn([{ content: [text("hi")] }])(noCost as never, { messages: [] }, {});
    const events = [];
    for await (const event of await stream) events.push(event.type);
    expect(events).toEqual(["error"]);
    expect(await (await stream).result()).toMatchObject({ stopReason: "error", errorMessage: "Scripted model: invalid model.cost must be an object, got undefined (prices per million tokens: {input, output, cacheRead, cacheWrite})" });
  });
});

describe("issue 15 item 12: validation error texts are bounded", () => {
  const bounded = (message: string) => {
    expect(message.length).toBeLessThanOrEqual(8_000);
    return message;
  };
  it("a 10⁶-value enum", () => {
    const values = Array.from({ length: 1_000_000 }, (_, i) => `v${i}`);
    const result = validateToolArguments({ name: "t", description: "", parameters: { type: "object", properties: { a: { enum: values } } } }, { arguments: { a: "x" } });
    expect(result.ok).toBe(false);
    const message = bounded(!result.ok ? result.message : "");
    expect(message).toContain('a: expected one of ["v0","v1","v2","v3","v4","v5","v6","v7","v8","v9",… 999990 more]');
  });
  it("a 50 MB invalid argument is not echoed whole", () => {
    const result = validateToolArguments({ name: "t", description: "", parameters: { type: "object", properties: { a: { type: "number" } } } }, { arguments: { a: "x".repeat(50_000_000) } });
    const message = bounded(!result.ok ? result.message : "");
    expect(message).toMatch(/more characters/);
  });
  it("10⁴ items × a 10⁴-value enum finishes within 10 s with a bounded message listing the first problems", () => {
    const values = Array.from({ length: 10_000 }, (_, i) => `v${i}`);
    const started = performance.now();
    const result = validateToolArguments(
      { name: "t", description: "", parameters: { type: "object", properties: { items: { type: "array", items: { enum: values } } } } },
      { arguments: { items: Array.from({ length: 10_000 }, () => "x") } },
    );
    const elapsed = performance.now() - started;
    const message = bounded(!result.ok ? result.message : "");
    expect(message.split("\n").filter((line) => line.startsWith("  - items."))).toHaveLength(20);
    expect(message).toContain("  - … 9980 more");
    // Today ~2 s on a loaded 2-core machine (was 16.9 s and "Invalid string length"); generous bound.
    expect(elapsed).toBeLessThan(10_000);
  });
  it("a tool call through the loop gets the bounded text as its error result", async () => {
    const values = Array.from({ length: 100_000 }, (_, i) => `v${i}`);
    const picky = tool("picky", undefined, { parameters: { type: "object", properties: { a: { enum: values } }, required: ["a"] } });
    const messages = await runAgentLoop(
      [user("hi")],
      { messages: [], tools: [picky] },
      baseConfig(),
      () => {},
      undefined,
      scriptedStreamFn([{ content: [toolCall("picky", { a: "y".repeat(1_000_000) })] }, { content: [text("ok")] }]),
    );
    const result = messages.find((m) => m.role === "toolResult")!;
    const body = (result as { content: { text: string }[] }).content[0].text;
    expect(body.length).toBeLessThanOrEqual(8_000);
    expect(body).toMatch(/^Validation failed for tool "picky":/);
  });
});
