import { describe, expect, it } from "vitest";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall, toolDeclaration, type AgentMessage, type AssistantMessage } from "../../src/index.js";
import { deferred, ok, summary, system, tool, untilAborted } from "../loop/helpers.js";
import { requestTails, roles, says, scenario } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });

const assistant = (value: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: value }],
  api: "scripted",
  provider: "scripted",
  model: "scripted",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: 1,
});

describe("R50: state", () => {
  it("R50: initialState systemPrompt and tools become the leading system message", () => {
    const agent = new Agent({
      streamFn: scriptedStreamFn([]),
      initialState: { systemPrompt: "You are terse.", tools: [tool("read")], messages: [says("hi")] },
    });
    expect(agent.state.messages.map(summary)).toEqual(["system(You are terse. +read)", "user(hi)"]);
    expect(agent.state.messages[0]).toMatchObject({ timestamp: 0 });
    expect(agent.state.systemPrompt).toBe("You are terse.");
    expect(agent.state.tools.map((t) => t.name)).toEqual(["read"]);
  });

  it("R50: a transcript that already starts with a system message keeps it; the prompt is replayed from it", () => {
    const agent = new Agent({
      streamFn: scriptedStreamFn([]),
      initialState: {
        systemPrompt: "ignored",
        messages: [system("Base."), says("hi"), system("Be brief.", { sections: { style: "Plain words." } })],
      },
    });
    expect(agent.state.messages.map(summary)).toEqual(["system(Base.)", "user(hi)", "system(Be brief.)"]);
    expect(agent.state.systemPrompt).toBe("Base.\n\nBe brief.\n\nPlain words.");
  });

  it("R50: defaults as in the reference: no system message, thinking off, one-at-a-time queues, idle", () => {
    const agent = new Agent({ streamFn: scriptedStreamFn([]) });
    expect(agent.state.messages).toEqual([]);
    expect(agent.state.systemPrompt).toBe("");
    expect(agent.state.model.id).toBe("unknown");
    expect(agent.state.thinkingLevel).toBe("off");
    expect([agent.steeringMode, agent.followUpMode]).toEqual(["one-at-a-time", "one-at-a-time"]);
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.state.pendingToolCalls.size).toBe(0);
    expect(agent.state.errorMessage).toBeUndefined();
  });

  it("R50: assigning state.messages and state.tools copies the arrays", () => {
    const agent = new Agent({ streamFn: scriptedStreamFn([]) });
    const messages: AgentMessage[] = [says("a")];
    const tools = [tool("read")];
    agent.state.messages = messages;
    agent.state.tools = tools;
    messages.push(says("b"));
    tools.push(tool("write"));
    expect(agent.state.messages.map(summary)).toEqual(["user(a)"]);
    expect(agent.state.tools.map((t) => t.name)).toEqual(["read"]);
  });

  // The reference's state.messages is its transcript: an app edits it in place, and the next run starts from it.
  it("R50: a message replaced in place in state.messages is what the next request sends", async () => {
    const { agent, stream } = scenario([answer("one"), answer("two")]);
    await agent.prompt("my password is hunter2");
    const first = agent.state.messages.findIndex((m) => m.role === "user");
    agent.state.messages[first] = says("[redacted]");
    await agent.prompt("next");
    const sent = stream.calls[1].context.messages.map((m) => summary(m as AgentMessage));
    // (A prompt's own content shows as "…".)
    expect(sent.filter((line) => line.startsWith("user"))).toEqual(["user([redacted])", "user(…)"]);
    expect(agent.state.messages.map(summary)).toContain("user([redacted])");
  });

  it("R50, R52: a message pushed onto state.messages while idle is continued from, once", async () => {
    const { agent, stream } = scenario([answer("one"), answer("two")]);
    await agent.prompt("hi");
    const held = agent.state.messages;
    held.push(says("pushed"));
    await agent.continue();
    expect(agent.state.messages).toBe(held);
    expect(held.map(summary)).toEqual(["user(…)", "assistant(stop)[one]", "user(pushed)", "assistant(stop)[two]"]);
    expect(stream.calls[1].context.messages.map((m) => summary(m as AgentMessage)).at(-1)).toBe("user(pushed)");
  });

  it("R50: a message an app pushes onto state.messages mid-run stays, after the run's own, and the next run sends it", async () => {
    const { agent, stream } = scenario([{ content: [toolCall("read")] }, answer("done"), answer("again")], {}, { tools: [tool("read")] });
    agent.subscribe((event) => {
      if (event.type === "tool_execution_end") agent.state.messages.push(says("note"));
    });
    await agent.prompt("go");
    expect(agent.state.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "toolResult", "assistant"]);
    await agent.prompt("more");
    expect(stream.calls[2].context.messages.map((m) => summary(m as AgentMessage))).toContain("user(note)");
  });

  it("R50, R30: assigning state.tools declares the change before the next request", async () => {
    const { agent, stream } = scenario([answer("one"), answer("two")], {}, { systemPrompt: "S", tools: [tool("read")] });
    await agent.prompt("first");
    agent.state.tools = [tool("write")];
    await agent.prompt("second");
    const sent = stream.calls[1].context.messages.map((m) => summary(m as AgentMessage));
    expect(sent).toEqual(["system(S +read)", "user(…)", "assistant(stop)[one]", "system( -read +write)", "user(…)"]);
    expect(agent.state.messages.map(summary)).toEqual(sent.concat("assistant(stop)[two]"));
  });

  it("R50: streamingMessage, pendingToolCalls and the transcript follow the events, listeners see them updated", async () => {
    const { agent } = scenario([{ content: [toolCall("read")] }, answer("done")], {}, { tools: [tool("read")] });
    const seen: string[] = [];
    agent.subscribe((event) => {
      if (event.type === "message_update") return;
      const streaming = agent.state.streamingMessage ? (agent.state.streamingMessage as { role: string }).role : "-";
      seen.push(`${event.type} n=${agent.state.messages.length} streaming=${streaming} pending=${agent.state.pendingToolCalls.size}`);
    });
    await agent.prompt("go");
    expect(seen).toEqual([
      "agent_start n=1 streaming=- pending=0",
      "turn_start n=1 streaming=- pending=0",
      "message_start n=1 streaming=user pending=0",
      "message_end n=2 streaming=- pending=0",
      "message_start n=2 streaming=assistant pending=0",
      "message_end n=3 streaming=- pending=0",
      "tool_execution_start n=3 streaming=- pending=1",
      "tool_execution_end n=3 streaming=- pending=0",
      "message_start n=3 streaming=toolResult pending=0",
      "message_end n=4 streaming=- pending=0",
      "turn_end n=4 streaming=- pending=0",
      "turn_start n=4 streaming=- pending=0",
      "message_start n=4 streaming=assistant pending=0",
      "message_end n=5 streaming=- pending=0",
      "turn_end n=5 streaming=- pending=0",
      "agent_end n=5 streaming=- pending=0",
    ]);
    expect(roles(agent.state.messages)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
  });

  it("R50: errorMessage holds the last failed turn's error until the next run starts", async () => {
    const { agent } = scenario([{ stopReason: "error", errorMessage: "overloaded" }, answer("fine")]);
    await agent.prompt("a");
    expect(agent.state.errorMessage).toBe("overloaded");
    const next = agent.prompt("b");
    expect(agent.state.errorMessage).toBeUndefined();
    await next;
    expect(agent.state.errorMessage).toBeUndefined();
  });

  it("R50: model and thinking level apply to the next run; sessionId and other set options reach the stream function", async () => {
    const { agent, stream } = scenario([answer("a")], { sessionId: "session-1", transport: "sse" });
    agent.state.model = { ...scriptedModel, id: "other" };
    agent.state.thinkingLevel = "high";
    await agent.prompt("x");
    expect(stream.calls[0].model.id).toBe("other");
    // `identity` (always sent, over DEFAULT_AGENT_IDENTITY) is checked in test/drop-in/identity-wiring.test.ts.
    const { identity: _identity, ...options } = stream.calls[0].options;
    expect(options).toEqual({ sessionId: "session-1", transport: "sse", toolExecution: "parallel", reasoning: "high" });
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", thinkingLevel: "high" });
  });
});

describe("R52: prompt and continue", () => {
  it("R52: prompt() and continue() reject while a run is active, reset() throws", async () => {
    const { agent } = scenario([answer("a")]);
    const run = agent.prompt("first");
    await expect(agent.prompt("second")).rejects.toThrow(
      "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
    );
    await expect(agent.continue()).rejects.toThrow("Agent is already processing. Wait for completion before continuing.");
    expect(() => agent.reset()).toThrow("Agent is already processing. Wait for completion before resetting.");
    await run;
    expect(agent.state.messages.map(summary)).toEqual(["user(…)", "assistant(stop)[a]"]);
  });

  it("R52: prompt accepts text with images, one message, or several", async () => {
    const { agent, stream } = scenario([answer("a"), answer("b"), answer("c")]);
    await agent.prompt("look", [{ type: "image", data: "AAAA", mimeType: "image/png" }]);
    await agent.prompt(says("one"));
    await agent.prompt([says("two"), says("three")]);
    expect(agent.state.messages[0]).toMatchObject({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
    });
    expect(requestTails(stream)).toEqual([["look"], ["one"], ["two", "three"]]);
  });

  it("R52: continue() rejects on an empty or system-only transcript", async () => {
    await expect(scenario([]).agent.continue()).rejects.toThrow("No messages to continue from");
    const systemOnly = scenario([], {}, { systemPrompt: "S", messages: [system("more")] });
    await expect(systemOnly.agent.continue()).rejects.toThrow("No messages to continue from");
    expect(systemOnly.log).toEqual([]);
  });

  it("R52: continue() from a user tail runs without new messages, polling steering at the start", async () => {
    const { agent, stream, log } = scenario([answer("a")], {}, { messages: [says("pending question")] });
    await agent.continue();
    expect(log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:1",
    ]);
    expect(requestTails(stream)).toEqual([["pending question"]]);
  });

  it("R52: continue() from an assistant tail takes one steering batch and skips the start-of-run poll", async () => {
    const { agent, stream } = scenario([answer("a"), answer("b")], {}, { messages: [says("q"), assistant("answer")] });
    agent.steer(says("s1"));
    agent.steer(says("s2"));
    await agent.continue();
    // One-at-a-time: s1 is the prompt; a start-of-run poll would have added s2 to the first request.
    expect(requestTails(stream)).toEqual([["s1"], ["s2"]]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("R52: continue() from an assistant tail without steering takes one follow-up batch", async () => {
    const { agent, stream, log } = scenario([answer("a")], {}, { messages: [says("q"), assistant("answer")] });
    agent.followUp(says("f1"));
    await agent.continue();
    expect(requestTails(stream)).toEqual([["f1"]]);
    expect(log.slice(0, 4)).toEqual(["agent_start", "turn_start", "message_start:user(f1)", "message_end:user(f1)"]);
  });

  it("R52: continue() from an assistant tail with empty queues rejects", async () => {
    const { agent, log } = scenario([], {}, { messages: [says("q"), assistant("answer")] });
    await expect(agent.continue()).rejects.toThrow("Cannot continue from message role: assistant");
    expect(log).toEqual([]);
    expect(agent.state.isStreaming).toBe(false);
  });
});

describe("R54: abort, waitForIdle, reset", () => {
  it("R54: abort() mid-stream ends the run with an aborted message, turn_end and agent_end", async () => {
    const { agent, log } = scenario([{ content: [text("a long answer that keeps going")], chunkSize: 2 }]);
    agent.subscribe((event) => {
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") agent.abort();
    });
    await agent.prompt("go");
    expect(log.slice(-4)).toEqual([
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:2",
    ]);
    expect(agent.state.errorMessage).toBe("Request was aborted");
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.signal).toBeUndefined();
  });

  it("R54, R29: abort() mid-tool aborts the tool's signal; the turn finishes and the next request ends the run", async () => {
    const started = deferred();
    const slow = tool("slow", async (_id, _args, signal) => {
      started.resolve();
      await untilAborted(signal);
      return ok(`stopped, aborted=${signal?.aborted}`);
    });
    const { agent, log } = scenario([{ content: [toolCall("slow")] }, answer("never")], {}, { tools: [slow] });
    const states: string[] = [];
    agent.actor.subscribe((snapshot) => states.push(JSON.stringify(snapshot.value)));
    const run = agent.prompt("go");
    await started.promise;
    expect(agent.state.pendingToolCalls.size).toBe(1);
    agent.abort();
    await run;
    expect(log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(…)",
      "message_end:user(…)",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:slow",
      "tool_end:slow",
      "message_start:toolResult(slow)",
      "message_end:toolResult(slow)",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:4",
    ]);
    expect(agent.state.messages.map(summary)).toContain("toolResult(slow):stopped, aborted=true");
    // The abort is a state of the session: busy.running.aborting. (Its listener had every event when
    // the run ended, so the session went idle without settling.)
    expect([...new Set(states)]).toEqual([
      '{"busy":{"running":"active"}}',
      '{"busy":{"running":"aborting"}}',
      '"idle"',
    ]);
  });

  it("R54: abort() while idle does nothing", async () => {
    const { agent, log } = scenario([answer("a")]);
    agent.abort();
    await agent.prompt("go");
    expect(log.at(-2)).toBe("turn_end:assistant(stop)+0");
  });

  it("R51, R54: listeners get the run's signal, which is agent.signal during the run", async () => {
    const { agent } = scenario([answer("a")]);
    const signals = new Set<AbortSignal>();
    let duringRun: AbortSignal | undefined;
    agent.subscribe((event, signal) => {
      signals.add(signal);
      if (event.type === "agent_start") duringRun = agent.signal;
    });
    await agent.prompt("go");
    expect(signals.size).toBe(1);
    expect([...signals][0]).toBe(duringRun);
    expect(agent.signal).toBeUndefined();
  });

  it("R54: waitForIdle() resolves only after the agent_end listeners settle", async () => {
    const { agent } = scenario([answer("a")]);
    const entered = deferred();
    const release = deferred();
    agent.subscribe(async (event) => {
      if (event.type !== "agent_end") return;
      entered.resolve();
      await release.promise;
    });
    void agent.prompt("go");
    let idle = false;
    const waiting = agent.waitForIdle().then(() => (idle = true));
    await entered.promise;
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(idle).toBe(false);
    expect(agent.state.isStreaming).toBe(true);
    release.resolve();
    await waiting;
    expect(idle).toBe(true);
    expect(agent.state.isStreaming).toBe(false);
  });

  it("R54: the session settles while an agent_end listener is busy, and goes idle at once when none is", async () => {
    const statesOf = async (slow: boolean) => {
      const { agent } = scenario([answer("a")]);
      if (slow) agent.subscribe((event) => (event.type === "agent_end" ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined));
      const states: string[] = [];
      agent.actor.subscribe((snapshot) => states.push(JSON.stringify(snapshot.value)));
      await agent.prompt("go");
      return [...new Set(states)];
    };
    expect(await statesOf(true)).toEqual(['{"busy":{"running":"active"}}', '{"busy":"settling"}', '"idle"']);
    expect(await statesOf(false)).toEqual(['{"busy":{"running":"active"}}', '"idle"']);
  });

  it("R54: waitForIdle() resolves at once when idle", async () => {
    await expect(scenario([]).agent.waitForIdle()).resolves.toBeUndefined();
  });

  it("R54: reset() keeps one system message with the replayed prompt and tools, and clears the queues", async () => {
    const write = tool("write");
    const { agent } = scenario([{ stopReason: "error", errorMessage: "boom" }], {}, {
      tools: [write],
      messages: [
        system("Base.", { timestamp: 5, toolsAdded: [toolDeclaration(tool("read"))] }),
        says("q"),
        system("More.", { sections: { style: "Short." }, toolsAdded: [toolDeclaration(write)], toolsRemoved: [{ name: "read" }] }),
      ],
    });
    await agent.prompt("x");
    agent.steer(says("s"));
    agent.followUp(says("f"));
    expect(agent.state.errorMessage).toBe("boom");
    agent.reset();
    expect(agent.state.messages).toEqual([
      { role: "system", content: "Base.\n\nMore.", sections: { style: "Short." }, toolsAdded: [toolDeclaration(write)], timestamp: 5 },
    ]);
    expect(agent.state.systemPrompt).toBe("Base.\n\nMore.\n\nShort.");
    expect(agent.hasQueuedMessages()).toBe(false);
    expect(agent.state.errorMessage).toBeUndefined();
    expect(agent.state.tools).toEqual([write]);
  });

  it("R54: reset() of a transcript without system messages empties it", async () => {
    const { agent } = scenario([answer("a")]);
    await agent.prompt("x");
    agent.reset();
    expect(agent.state.messages).toEqual([]);
  });
});
