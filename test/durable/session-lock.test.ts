/** R84 through the Agent: a session another writer holds is refused when the prompt starts, with nothing written. */
import { expect, it } from "vitest";
import { Agent, SessionLockedError, createMemoryStore, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool } from "../../src/index.js";

it("R84: a second Agent on a session held by a running one rejects its prompt with SessionLockedError; the first finishes; nothing was written by the second", async () => {
  const store = createMemoryStore();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const wait: AgentTool = {
    name: "wait",
    label: "wait",
    description: "waits",
    parameters: { type: "object", properties: {} },
    execute: async () => (started(), await held, { content: [{ type: "text", text: "done" }], details: {} }),
  };
  const agent = (script: Parameters<typeof scriptedStreamFn>[0]) =>
    new Agent({ streamFn: scriptedStreamFn(script), initialState: { model: scriptedModel, tools: [wait] }, durable: { store, sessionId: "shared" } });
  const first = agent([{ content: [toolCall("wait", {})] }, { content: [text("first done")] }]);
  const second = agent([{ content: [text("never")] }]);
  const run = first.prompt("go");
  await running;
  const records = store.readSession("shared").records().length;
  await expect(second.prompt("me too")).rejects.toBeInstanceOf(SessionLockedError);
  expect(store.readSession("shared").records()).toHaveLength(records);
  expect(second.state.isStreaming).toBe(false);
  release();
  await run;
  expect(first.state.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "first done" }] });
  // Once the first is idle, the second may write (the lock is per run).
  await second.prompt("now");
  expect(second.state.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "never" }] });
});
