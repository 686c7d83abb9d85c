/**
 * SPEC R14: runs embedded in an app statechart. The worked example (examples/research-team): two
 * runs in parallel states, then a third with both outputs; a tool that runs a sub-agent as a child
 * of its tool-call actor; and 200 runs invoked at once by one app machine, each equal to the same
 * run alone.
 */
import { describe, expect, it } from "vitest";
import { assign, createActor, setup, toPromise, type AnyActorRef, type InspectionEvent } from "xstate";
import {
  agentEvents,
  createAgentRunLogic,
  defaultConvertToLlm,
  scriptedModel,
  scriptedStreamFn,
  text,
  toolCall,
  type AnyAgentEvent,
  type AgentEventForward,
  type AgentMessage,
  type AgentRunOptions,
  type AgentTool,
} from "../../src/index.js";
import { createTeamMachine, lastAnswer } from "../../examples/research-team/team.machine.js";

const identity = defaultConvertToLlm;
const answering = (answer: string): AgentRunOptions => ({
  streamFn: scriptedStreamFn([{ content: [text(answer)] }]),
  config: { model: scriptedModel, convertToLlm: identity },
});
const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });
const strip = <T>(value: T): T => JSON.parse(JSON.stringify(value, (key, item) => (key === "durationMs" || key === "timestamp" ? undefined : item)));

describe("R14: runs embedded in an app statechart", () => {
  it("R14: a researcher and a critic run in parallel states, then an editor gets both outputs", async () => {
    const inspected: InspectionEvent[] = [];
    const team = createActor(
      createTeamMachine({
        researcher: answering("Paris has 2.1 million people."),
        critic: answering("The figure excludes the suburbs."),
        editor: {
          // The editor answers with what it was given, so the test sees both outputs arrive.
          streamFn: scriptedStreamFn((request) => {
            const prompt = request.context.messages.at(-1) as { content: string };
            return { content: [text(`Report: ${prompt.content.split("\n").slice(1).join(" / ")}`)] };
          }),
          config: { model: scriptedModel, convertToLlm: identity },
        },
      }),
      { input: { topic: "Paris" }, inspect: (event) => inspected.push(event) },
    );
    team.start();
    await toPromise(team);
    expect(lastAnswer(team.getSnapshot().context.report)).toBe("Report: Research: Paris has 2.1 million people. / Critique: The figure excludes the suburbs.");
    // The two runs were alive at once, as children of the app machine in one actor system.
    const started = inspected.filter((event) => event.type === "@xstate.actor").map((event) => event.actorRef as AnyActorRef);
    const runs = started.filter((ref) => ["researcher", "critic", "editor"].includes(ref.id));
    expect(runs.map((ref) => ref.id).sort()).toEqual(["critic", "editor", "researcher"]);
    expect(new Set(runs.map((ref) => ref.system)).size).toBe(1);
    expect(runs.every((ref) => ref._parent === team)).toBe(true);
    // The team's snapshot persists: it is plain data all the way down.
    expect(() => JSON.stringify(team.getPersistedSnapshot())).not.toThrow();
  });

  it("R14: a tool runs a sub-agent as a child of its tool-call actor; the inspector shows the nesting", async () => {
    const inspected: InspectionEvent[] = [];
    const delegate: AgentTool = {
      name: "delegate",
      label: "delegate",
      description: "ask a sub-agent",
      parameters: { type: "object", properties: { task: { type: "string" } } },
      execute: async (_id, params: { task: string }, _signal, _onUpdate, context) => {
        const added = await context!.runSubAgent(answering(`did ${params.task}`), { prompts: [user(params.task)] });
        return { content: [{ type: "text", text: lastAnswer(added) }], details: {} };
      },
    };
    const logic = createAgentRunLogic({
      streamFn: scriptedStreamFn([{ content: [toolCall("delegate", { task: "the sums" })] }, { content: [text("Thanks.")] }]),
      tools: [delegate],
      config: { model: scriptedModel, convertToLlm: identity },
    });
    const run = createActor(logic, { input: { messages: [], prompts: [user("go")] }, inspect: (event) => inspected.push(event) });
    const events: AnyAgentEvent[] = [];
    agentEvents(run).subscribe((event) => events.push(event));
    run.start();
    const added = await toPromise(run);
    const result = added.find((message) => (message as { role: string }).role === "toolResult") as { content: { text: string }[] };
    expect(result.content[0].text).toBe("did the sums");
    const actors = inspected.filter((event) => event.type === "@xstate.actor").map((event) => event.actorRef as AnyActorRef);
    const call = actors.find((ref) => ref.id === "tool:0")!;
    const subRun = actors.find((ref) => ref._parent === call && ref.id !== "steps");
    expect(subRun).toBeDefined();
    expect(subRun!._parent!._parent).toBe(run);
    // The parent's events are its own: the sub-run's stay with the sub-run.
    expect(events.filter((event) => event.type === "agent_start")).toHaveLength(1);
  });

  it("R14: 200 runs invoked at once by one app machine each equal the same run alone", async () => {
    const COUNT = 200;
    const read: AgentTool = {
      name: "read",
      label: "read",
      description: "read",
      parameters: { type: "object", properties: { n: { type: "number" } } },
      execute: async (_id, params: { n: number }) => ({ content: [{ type: "text", text: `value ${params.n * 2}` }], details: { n: params.n } }),
    };
    // One logic for every run: the model answers from what it is asked, so the runs differ by input only.
    const logic = createAgentRunLogic({
      tools: [read],
      config: { model: scriptedModel, convertToLlm: identity },
      streamFn: scriptedStreamFn((request) => {
        const messages = request.context.messages;
        const n = Number((messages.find((message) => message.role === "user") as { content: string }).content);
        const results = messages.filter((message) => message.role === "toolResult").length;
        return results === 0
          ? { content: [text(`Reading ${n}.`), toolCall("read", { n }, `a${n}`), toolCall("read", { n: n + 1 }, `b${n}`)] }
          : { content: [text(`Done with ${n}.`)] };
      }),
    });
    const inputFor = (i: number) => ({ messages: [], prompts: [user(String(i))], forwardEvents: true });

    const app = setup({
      types: { context: {} as { outputs: Record<string, AgentMessage[]>; events: Record<string, AnyAgentEvent[]> }, events: {} as AgentEventForward | { type: "xstate.done.actor.*" } },
      actors: { run: logic },
    }).createMachine({
      context: { outputs: {}, events: {} },
      initial: "running",
      states: {
        running: {
          entry: assign(({ spawn }) => {
            for (let i = 0; i < COUNT; i++) spawn("run", { id: `run:${i}`, input: inputFor(i) });
            return {};
          }),
          on: {
            "agent.event": { actions: assign({ events: ({ context, event }) => ({ ...context.events, [event.id]: [...(context.events[event.id] ?? []), event.event] }) }) },
            "xstate.done.actor.*": [
              {
                guard: ({ context }) => Object.keys(context.outputs).length === COUNT - 1,
                target: "done",
                actions: assign({ outputs: ({ context, event }) => ({ ...context.outputs, [(event as unknown as { actorId: string }).actorId]: (event as unknown as { output: AgentMessage[] }).output }) }),
              },
              { actions: assign({ outputs: ({ context, event }) => ({ ...context.outputs, [(event as unknown as { actorId: string }).actorId]: (event as unknown as { output: AgentMessage[] }).output }) }) },
            ],
          },
        },
        done: { type: "final" },
      },
    });
    const actor = createActor(app);
    actor.start();
    await toPromise(actor);
    const { outputs, events } = actor.getSnapshot().context;
    expect(Object.keys(outputs)).toHaveLength(COUNT);

    for (let i = 0; i < COUNT; i++) {
      const alone = createActor(logic, { input: inputFor(i) });
      const aloneEvents: AnyAgentEvent[] = [];
      agentEvents(alone).subscribe((event) => aloneEvents.push(event));
      alone.start();
      const aloneOutput = await toPromise(alone);
      expect(strip(outputs[`run:${i}`]), `run ${i}`).toEqual(strip(aloneOutput));
      expect(strip(events[`run:${i}`]), `run ${i}`).toEqual(strip(aloneEvents));
    }
  });
});
