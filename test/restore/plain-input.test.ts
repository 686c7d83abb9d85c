/**
 * SPEC R13, R14: the prompts and transcript a caller hands in become plain data where they enter
 * the run (an embedded run's input, `agentLoop`), so every snapshot serializes: a `bigint` made
 * `getPersistedSnapshot` throw, a cycle overflowed the stack, a function stayed in the snapshot.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { agentLoop, createAgentRunLogic, scriptedStreamFn, text, type AgentMessage } from "../../src/index.js";
import { toPlainMessages } from "../../src/loop/plain-data.js";
import { baseConfig, user } from "../loop/helpers.js";

/** A user message with fields JSON cannot hold: a bigint, a function, a cycle, a Map. */
function odd(content: string): AgentMessage {
  const cyclic: Record<string, unknown> = { name: "loop" };
  cyclic.self = cyclic;
  return { ...user(content), big: 10n, onClick: () => 1, meta: cyclic, map: new Map([["k", 1]]) } as unknown as AgentMessage;
}

const converted = (content: string) => ({ ...user(content), big: "10", meta: { name: "loop", self: "[Circular]" }, map: { k: 1 } });

describe("R13, R14: the input of a run is plain data", () => {
  it("R14: an embedded run's prompts and transcript are converted: every snapshot serializes", async () => {
    const logic = createAgentRunLogic({ streamFn: scriptedStreamFn([{ content: [text("ok")] }]), config: baseConfig() });
    const prompt = odd("go");
    const run = createActor(logic, { input: { messages: [odd("before")], prompts: [prompt] } });
    const serialized: string[] = [];
    run.subscribe({ next: () => serialized.push(JSON.stringify(run.getPersistedSnapshot())), error: () => {} });
    run.start();
    const added = await toPromise(run);
    expect(serialized.length).toBeGreaterThan(1);
    const context = JSON.parse(serialized.at(-1)!).context as { messages: unknown[] };
    expect(context.messages.slice(0, 2)).toEqual([converted("before"), converted("go")]);
    expect(added[0]).toEqual(converted("go"));
    // The caller's message is not changed.
    expect(typeof (prompt as unknown as { onClick: unknown }).onClick).toBe("function");
  });

  it("R13: agentLoop's prompts are converted too", async () => {
    const added = await agentLoop([odd("go")], { messages: [] }, baseConfig(), undefined, scriptedStreamFn([{ content: [text("ok")] }])).result();
    expect(added[0]).toEqual(converted("go"));
  });

  it("R13: a plain transcript comes back as the same array (no copy)", () => {
    const messages = [user("a"), user("b")];
    expect(toPlainMessages(messages)).toBe(messages);
    const mixed = [user("a"), odd("b")];
    const plain = toPlainMessages(mixed);
    expect(plain).not.toBe(mixed);
    expect(plain[0]).toBe(mixed[0]);
    expect(plain[1]).toEqual(converted("b"));
  });
});
