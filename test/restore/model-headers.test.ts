/**
 * SPEC R14: no key in context, input or snapshots. A model's `headers` (pi-ai's field, where custom
 * providers put `x-api-key`) are sent with every request, and never appear in a run's or an
 * Agent's snapshot, a durable journal or what the Agent persists; a restored run sends them again
 * from the model it is given.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { Agent, createAgentRunLogic, createMemoryStore, defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool, type Model, type StreamFn } from "../../src/index.js";

const CANARY = "sk-canary-0123456789abcdef0123";
const keyed: Model = { ...scriptedModel, headers: { "x-api-key": CANARY, "x-team": "blue" } };
const other: Model = { ...scriptedModel, id: "scripted-large", headers: { "x-api-key": `${CANARY}-large` } };

const echo: AgentTool = {
  name: "echo",
  label: "echo",
  description: "echoes",
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

/** The scripted responses, recording the headers of the model each request was made with. */
function recording(responses: Parameters<typeof scriptedStreamFn>[0]) {
  const seen: (Record<string, string> | undefined)[] = [];
  const inner = scriptedStreamFn(responses);
  const streamFn: StreamFn = (model, context, options) => {
    seen.push(model.headers);
    return inner(model, context, options);
  };
  return { seen, streamFn };
}

describe("R14: a model's headers are sent, never kept in a machine", () => {
  it("R14: a run sends config.model's headers with each request; its snapshots hold none", async () => {
    const { seen, streamFn } = recording([{ content: [toolCall("echo")] }, { content: [text("done")] }]);
    const logic = createAgentRunLogic({ streamFn, tools: [echo], config: { model: keyed, convertToLlm: defaultConvertToLlm } });
    const run = createActor(logic, { input: { messages: [], prompts: [{ role: "user", content: "go", timestamp: 0 }] } });
    const snapshots: string[] = [];
    run.subscribe(() => snapshots.push(JSON.stringify(run.getPersistedSnapshot())));
    run.start();
    await toPromise(run);
    expect(seen).toEqual([keyed.headers, keyed.headers]);
    expect(snapshots.length).toBeGreaterThan(5);
    for (const snapshot of snapshots) expect(snapshot).not.toContain(CANARY);
  });

  it("R14: a model a hook swaps in is requested with its headers, and kept without them", async () => {
    const { seen, streamFn } = recording([{ content: [toolCall("echo")] }, { content: [text("done")] }]);
    const logic = createAgentRunLogic({
      streamFn,
      tools: [echo],
      config: { model: scriptedModel, convertToLlm: defaultConvertToLlm, prepareNextTurn: async () => ({ model: other }) },
    });
    const run = createActor(logic, { input: { messages: [], prompts: [{ role: "user", content: "go", timestamp: 0 }] } });
    const snapshots: string[] = [];
    run.subscribe(() => snapshots.push(JSON.stringify(run.getPersistedSnapshot())));
    run.start();
    await toPromise(run);
    expect(seen).toEqual([undefined, other.headers]);
    for (const snapshot of snapshots) expect(snapshot).not.toContain(CANARY);
  });

  it("R14, R80: an Agent sends its model's headers; its snapshots and durable journal hold none; restored, it sends them again", async () => {
    const store = createMemoryStore();
    const first = recording([{ content: [toolCall("echo")] }, { content: [text("done")] }]);
    const agent = new Agent({ streamFn: first.streamFn, initialState: { model: keyed, tools: [echo] }, durable: { store, sessionId: "s" } });
    const persisted: string[] = [];
    agent.subscribe(() => void persisted.push(JSON.stringify(agent.getPersistedSnapshot())));
    await agent.prompt("go");
    expect(first.seen).toEqual([keyed.headers, keyed.headers]);
    // The app reads back the model it set: the same object, as the reference's `state.model`.
    expect(agent.state.model).toBe(keyed);
    expect(agent.state.model).toBe(agent.state.model);
    persisted.push(JSON.stringify(agent.getPersistedSnapshot()));
    for (const snapshot of persisted) expect(snapshot).not.toContain(CANARY);
    const stored = store.readSession("s");
    expect(JSON.stringify(stored.records())).not.toContain(CANARY);
    expect(JSON.stringify(stored.snapshot())).not.toContain(CANARY);
    // A model set later is kept the same way.
    agent.state.model = other;
    expect(JSON.stringify(agent.getPersistedSnapshot())).not.toContain(CANARY);
    expect(agent.state.model).toBe(other);
    // Restored with the model given again: its headers go with the next request.
    const second = recording([{ content: [text("again")] }]);
    const restored = Agent.restore(JSON.parse(persisted.at(-1)!), { streamFn: second.streamFn, initialState: { model: keyed, tools: [echo] } });
    await restored.prompt("more");
    expect(second.seen).toEqual([keyed.headers]);
  });

  it("R14: a model set again without headers has none (a rotated key is not sent again); another baseUrl is another model", async () => {
    const { seen, streamFn } = recording([{ content: [text("one")] }, { content: [text("two")] }, { content: [text("three")] }]);
    const agent = new Agent({ streamFn, initialState: { model: keyed } });
    await agent.prompt("one");
    const { headers: _headers, ...bare } = keyed;
    agent.state.model = bare;
    await agent.prompt("two");
    agent.state.model = { ...bare, baseUrl: "https://elsewhere.example" };
    await agent.prompt("three");
    expect(seen).toEqual([keyed.headers, undefined, undefined]);
    expect(agent.state.model.headers).toBeUndefined();
  });
});
