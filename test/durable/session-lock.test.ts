/**
 * R84 through the Agent: an Agent holds its durable session from its first use until `release()`;
 * another writer is refused with nothing written, even while the holder is idle.
 */
import { expect, it } from "vitest";
import { Agent, SessionLockedError, createMemoryStore, scriptedModel, scriptedStreamFn, text, toolCall, type AgentTool } from "../../src/index.js";

it("R84: a second Agent on a session another Agent holds rejects its prompt with SessionLockedError, running or idle; once the first releases it, the second goes on from the whole transcript", async () => {
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
  // Idle, the first still holds the session: no run of it can be dropped by a second writer.
  await expect(second.prompt("still me")).rejects.toBeInstanceOf(SessionLockedError);
  const transcript = store.readSession("shared").snapshot();
  first.release();
  // The second resumes the stored session (the first's run in it), then runs.
  expect(await second.resume()).toBe(false);
  await second.prompt("now");
  expect(second.state.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant", "user", "assistant"]);
  expect(second.state.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "never" }] });
  expect(transcript?.snapshot).toMatchObject({ kind: "agent" });
});
