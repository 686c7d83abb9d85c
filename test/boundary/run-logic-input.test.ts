/**
 * SPEC R14 and errors.md ("what the caller hands in wrongly is a typed error, thrown where it is
 * handed in"): `createAgentRunLogic` checks its options at the call, as `agentLoop` checks its
 * arguments; a run's input is checked when its actor is created, and the actor fails with the
 * `AgentInputError` when it starts (a plain or internal `TypeError`, or a run that went on, before).
 */
import { describe, expect, it } from "vitest";
import { assign, createActor, setup, toPromise } from "xstate";
import { AgentInputError, createAgentRunLogic, scriptedModel, scriptedStreamFn, text, type AgentTool } from "../../src/index.js";
import { baseConfig, user } from "../loop/helpers.js";

const streamFn = scriptedStreamFn([{ content: [text("x")] }]);

describe("R14: the embedded run's options and input are checked where they are handed in", () => {
  it.each([
    ["a model without api", { streamFn, config: baseConfig({ model: { id: "x" } as never }) }, "config.model.api"],
    ["tools that are not a list", { streamFn, tools: "nope" as never, config: baseConfig() }, "tools"],
    ["a tool without execute", { streamFn, tools: [{ name: "t", description: "t", parameters: { type: "object" } }] as unknown as AgentTool[], config: baseConfig() }, "tools[0].execute"],
  ])("R14: createAgentRunLogic refuses %s with AgentInputError", (_name, options, field) => {
    let thrown: unknown;
    try {
      createAgentRunLogic(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AgentInputError);
    expect((thrown as AgentInputError).field).toBe(field);
  });

  it("R14: createAgentRunLogic without a stream function throws at the call", () => {
    expect(() => createAgentRunLogic({ config: baseConfig() } as never)).toThrow(/streamFn is required/);
  });

  const inputs: [string, unknown, string][] = [
    ["no input", undefined, "input"],
    ["messages that are a string", { messages: "hello" }, "input.messages"],
    ["a message that is a number", { messages: [42], prompts: [user("hi")] }, "input.messages[0]"],
    ["a prompt without role", { messages: [], prompts: [{ content: "hi" }] }, "input.prompts[0].role"],
    ["forwardEvents that is not a boolean", { messages: [], prompts: [user("hi")], forwardEvents: "yes" }, "input.forwardEvents"],
  ];

  it.each(inputs)("R14: a root run actor with %s fails with AgentInputError when it starts", async (_name, input, field) => {
    const run = createActor(createAgentRunLogic({ streamFn, config: baseConfig() }), { input } as never);
    const settled = toPromise(run).then(() => undefined, (error: unknown) => error);
    run.subscribe({ error: () => {} });
    run.start();
    const error = await settled;
    expect(error).toBeInstanceOf(AgentInputError);
    expect((error as AgentInputError).field).toBe(field);
    expect(run.getSnapshot().status).toBe("error");
  });

  it.each(inputs)("R14: an invoking parent's onError gets AgentInputError for %s", async (_name, input, field) => {
    const parent = setup({ actors: { run: createAgentRunLogic({ streamFn, config: { model: scriptedModel, convertToLlm: baseConfig().convertToLlm } }) } }).createMachine({
      context: { error: undefined as unknown },
      initial: "running",
      states: {
        running: { invoke: { src: "run", input: input as never, onDone: "done", onError: { target: "failed", actions: assign({ error: ({ event }) => event.error }) } } },
        done: { type: "final" },
        failed: { type: "final" },
      },
    });
    const actor = createActor(parent);
    actor.start();
    await toPromise(actor);
    expect(actor.getSnapshot().value).toBe("failed");
    expect(actor.getSnapshot().context.error).toBeInstanceOf(AgentInputError);
    expect((actor.getSnapshot().context.error as AgentInputError).field).toBe(field);
  });
});
