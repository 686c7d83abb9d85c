/**
 * Issue 19 item 1: an idle Agent keeps only its session's plain data (no actor), and a message is
 * appended to the transcript without copying it. What an app observes must not change: these
 * drive the parked Agent through every way back into its session, and compare the transcript's
 * identity with the reference's (run as a black box).
 */
import { describe, expect, it } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { Agent as ReferenceAgent } from "@earendil-works/pi-agent-core";
import { Agent, defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, type AgentMessage } from "../../src/index.js";
import type { Script } from "../../src/index.js";
import { textOf } from "../loop/helpers.js";
import { requestTails, says } from "./helpers.js";

const answers = (...texts: string[]): Script => texts.map((value) => ({ content: [text(value)] }));
const texts = (messages: readonly AgentMessage[]) => messages.map((message) => `${(message as { role: string }).role}:${textOf(message)}`);

function agent(script: Script) {
  const stream = scriptedStreamFn(script);
  return { agent: new Agent({ streamFn: stream, initialState: { model: scriptedModel } }), stream };
}

describe("issue 19.1: an idle Agent keeps its session as plain data", () => {
  it("issue 19.1: state.messages is one array that grows in place, as the reference's", async () => {
    const observe = async (kind: "reference" | "ours") => {
      const init = { initialState: { model: scriptedModel }, streamFn: scriptedStreamFn(answers("a", "b")) };
      const subject = (kind === "reference" ? new ReferenceAgent(init as never) : new Agent(init as never)) as unknown as Agent;
      const before = subject.state.messages;
      await subject.prompt("one");
      const afterOne = subject.state.messages;
      await subject.prompt("two");
      return { sameArray: before === afterOne && afterOne === subject.state.messages, length: before.length, transcript: texts(subject.state.messages) };
    };
    const ours = await observe("ours");
    expect(ours).toEqual(await observe("reference"));
    expect(ours).toEqual({ sameArray: true, length: 4, transcript: ["user:one", "assistant:a", "user:two", "assistant:b"] });
  });

  it("issue 34.3: the session's transcript is immutable; state.messages stays one array, and what the app pushes onto it reaches the next run, as the reference's", async () => {
    const observe = async (kind: "reference" | "ours") => {
      const stream = scriptedStreamFn(answers("a", "b"));
      const init = { initialState: { model: scriptedModel }, streamFn: stream };
      const subject = (kind === "reference" ? new ReferenceAgent(init as never) : new Agent(init as never)) as unknown as Agent;
      const held = subject.state.messages;
      await subject.prompt("one");
      held.push(says("pushed"));
      await subject.prompt("two");
      subject.state.messages = [...held];
      const replaced = subject.state.messages !== held;
      return { held: texts(held), replaced, tails: requestTails(stream), transcript: texts(subject.state.messages) };
    };
    const ours = await observe("ours");
    expect(ours).toEqual(await observe("reference"));
    expect(ours.held).toEqual(["user:one", "assistant:a", "user:pushed", "user:two", "assistant:b"]);
  });

  it("issue 19.1, R13: a persisted snapshot keeps the transcript it was taken with; two restores of it are independent", async () => {
    const { agent: original } = agent(answers("a", "later"));
    await original.prompt("one");
    const snapshot = original.getPersistedSnapshot() as unknown as { context: { messages: AgentMessage[] } };
    await original.prompt("two");
    expect(texts(snapshot.context.messages)).toEqual(["user:one", "assistant:a"]);

    const first = Agent.restore(snapshot, { streamFn: scriptedStreamFn(answers("first")) });
    const second = Agent.restore(snapshot, { streamFn: scriptedStreamFn(answers("second")) });
    await first.prompt("x");
    await second.prompt("y");
    expect(texts(first.state.messages)).toEqual(["user:one", "assistant:a", "user:x", "assistant:first"]);
    expect(texts(second.state.messages)).toEqual(["user:one", "assistant:a", "user:y", "assistant:second"]);
    expect(texts(snapshot.context.messages)).toEqual(["user:one", "assistant:a"]);
  });

  it("issue 19.1, R13: an Agent restored mid-run finishes that run, then takes the next prompt", async () => {
    const { agent: original } = agent(answers("a"));
    let snapshot: unknown;
    original.subscribe((event) => {
      if (event.type === "message_end" && event.message.role === "user") snapshot = JSON.parse(JSON.stringify(original.getPersistedSnapshot()));
    });
    await original.prompt("one");
    const restored = Agent.restore(snapshot, { streamFn: scriptedStreamFn(answers("resumed", "next")) });
    expect(restored.state.isStreaming).toBe(true);
    await restored.waitForIdle();
    await restored.prompt("two");
    expect(texts(restored.state.messages)).toEqual(["user:one", "assistant:resumed", "user:two", "assistant:next"]);
  });

  it("issue 19.1: what is set or queued while idle between runs reaches the next run", async () => {
    const { agent: subject, stream } = agent(answers("a", "b", "c"));
    await subject.prompt("one");
    subject.state.thinkingLevel = "high";
    subject.steer(says("steered"));
    subject.followUp(says("followed"));
    expect(subject.hasQueuedMessages()).toBe(true);
    expect(subject.state.thinkingLevel).toBe("high");
    await subject.prompt("two");
    expect(requestTails(stream)).toEqual([["one"], ["two", "steered"], ["followed"]]);
    expect(stream.calls[1].options?.reasoning).toBe("high");
    expect(subject.hasQueuedMessages()).toBe(false);
  });

  it("issue 19.1, R54: reset() and state.messages = … on an idle Agent between runs", async () => {
    const stream = scriptedStreamFn(answers("a", "b"));
    const subject = new Agent({ streamFn: stream, initialState: { model: scriptedModel, systemPrompt: "Be brief." } });
    await subject.prompt("one");
    subject.reset();
    expect(texts(subject.state.messages)).toEqual(["system:Be brief."]);
    expect(subject.state.systemPrompt).toBe("Be brief.");
    subject.state.messages = [...subject.state.messages, says("kept")];
    await subject.prompt("two");
    expect(texts(subject.state.messages)).toEqual(["system:Be brief.", "user:kept", "user:two", "assistant:b"]);
    expect(subject.usage.totalTokens).toBeGreaterThanOrEqual(0);
  });

  it("issue 19.1, R52: a prompt started as soon as waitForIdle() settles runs, and the next after it too", async () => {
    const { agent: subject } = agent(answers("a", "b", "c"));
    const first = subject.prompt("one");
    await subject.waitForIdle();
    const second = subject.prompt("two");
    expect(subject.state.isStreaming).toBe(true);
    await Promise.all([first, second]);
    await subject.prompt("three");
    expect(texts(subject.state.messages)).toEqual(["user:one", "assistant:a", "user:two", "assistant:b", "user:three", "assistant:c"]);
    expect(subject.state.isStreaming).toBe(false);
  });

  it("issue 19.1: once asked for, `actor` is the Agent's session actor for good", async () => {
    const { agent: subject } = agent(answers("a", "b"));
    await subject.prompt("one");
    const actor = subject.actor;
    await subject.prompt("two");
    expect(subject.actor).toBe(actor);
    expect(actor.getSnapshot().value).toBe("idle");
    expect(texts(actor.getSnapshot().context.messages)).toEqual(texts(subject.state.messages));
  });

  it("issue 19.1: an inspected Agent keeps one session actor across its runs", async () => {
    const sessions = new Set<string>();
    const inspect = (event: InspectionEvent) => {
      if (event.type === "@xstate.actor" && (event.actorRef as AnyActorRef).id === "session") sessions.add(event.actorRef.sessionId);
    };
    const subject = new Agent({ streamFn: scriptedStreamFn(answers("a", "b")), initialState: { model: scriptedModel }, inspect });
    await subject.prompt("one");
    await subject.prompt("two");
    expect(sessions.size).toBe(1);
    expect(subject.state.messages).toHaveLength(4);
  });
});

describe("issue 19.1: defaultConvertToLlm per request", () => {
  it("issue 19.1: keeps provider messages in order, drops app-defined ones wherever they are, and returns a new array", () => {
    const custom = (n: number) => ({ role: "note", text: `n${n}`, timestamp: n }) as unknown as AgentMessage;
    const provider = [says("a"), { role: "assistant", content: [text("b")] } as unknown as AgentMessage, { role: "toolResult", content: [] } as unknown as AgentMessage, { role: "system", content: "s" } as unknown as AgentMessage];
    const transcripts = [[], provider, [custom(0), ...provider], [...provider, custom(1)], [provider[0], custom(2), provider[1], custom(3), custom(4), provider[2]], [custom(5)]];
    for (const messages of transcripts) {
      const converted = defaultConvertToLlm(messages);
      expect(converted).toEqual(messages.filter((message) => (message as { role: string }).role !== "note"));
      expect(converted).not.toBe(messages);
    }
  });
});
