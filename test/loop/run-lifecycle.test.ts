/**
 * Run lifecycle (SPEC R1–R12): what a run emits and adds, turn by turn, and when it polls its
 * queues and calls its turn hooks. Hook calls are written into the same log as the events, so
 * each test pins one exact interleaving.
 */
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentLoopContinue,
  runAgentLoopContinue,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentMessage,
  type AgentTurnContext,
  type Model,
  type ThinkingLevel,
} from "../../src/index.js";
import {
  baseConfig,
  logged,
  model,
  recorder,
  runScenario,
  summary,
  system,
  tool,
  user,
} from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
const calls = (...names: string[]) => ({ content: names.map((name) => toolCall(name)) });

/** A queue hook that returns the given batches in order, then nothing. */
const batches = (...list: AgentMessage[][]) => {
  let i = 0;
  return async () => list[i++] ?? [];
};

/**
 * The message runAgentLoopContinue refuses with. SPEC requires agentLoopContinue to throw
 * synchronously; for the promise-returning variant it only says "the same", and the reference
 * rejects, so either a synchronous throw or a rejection (before any event) is accepted.
 */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
  } catch (error) {
    return (error as Error).message;
  }
  return "no refusal";
}

describe("run lifecycle", () => {
  it("R1: agentLoop emits agent_start, turn_start and every prompt's message events, then makes the request", async () => {
    const rec = recorder();
    const stream = scriptedStreamFn([answer("hello")]);
    const context = { messages: [user("earlier", 0)] };
    // agentLoop's stream is observational (not awaited), so only events are logged here.
    const events = agentLoop([user("a"), user("b")], context, baseConfig(), undefined, stream);
    for await (const event of events) rec.sink(event);

    expect(rec.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(a)",
      "message_end:user(a)",
      "message_start:user(b)",
      "message_end:user(b)",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:3",
    ]);
    // The prompts were appended to the context the request saw.
    expect(stream.calls[0].context.messages.map(summary)).toEqual(["user(earlier)", "user(a)", "user(b)"]);
    expect((await events.result()).map(summary)).toEqual(["user(a)", "user(b)", "assistant(stop)[hello]"]);
  });

  it("R1: prompt events follow the tool declaration (R30) and precede the first request", async () => {
    const run = await runScenario({ tools: [tool("read")], script: [answer("ok")] });
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:3",
    ]);
    expect(run.messages.map(summary)).toEqual(["system( +read)", "user(hi)", "assistant(stop)[ok]"]);
  });

  it("R2: agentLoopContinue throws synchronously on an empty context, before any event", async () => {
    const stream = scriptedStreamFn([answer("never")]);
    const sink: unknown[] = [];
    expect(() => agentLoopContinue({ messages: [] }, baseConfig(), undefined, stream)).toThrowError(
      new Error("Cannot continue: no messages in context"),
    );
    expect(await refusal(() => runAgentLoopContinue({ messages: [] }, baseConfig(), (e) => void sink.push(e), undefined, stream))).toBe(
      "Cannot continue: no messages in context",
    );
    expect(sink).toEqual([]);
    expect(stream.calls).toEqual([]);
  });

  it("R2: agentLoopContinue throws synchronously when the last message is an assistant message", async () => {
    const stream = scriptedStreamFn([answer("never")]);
    const first = await runScenario({ script: [answer("first")] });
    const context = { messages: first.messages };
    const sink: unknown[] = [];
    let error: unknown;
    try {
      agentLoopContinue(context, baseConfig(), undefined, stream);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe("Cannot continue from message role: assistant");
    expect(await refusal(() => runAgentLoopContinue(context, baseConfig(), (e) => void sink.push(e), undefined, stream))).toBe(
      "Cannot continue from message role: assistant",
    );
    expect(sink).toEqual([]);
    expect(stream.calls).toEqual([]);
  });

  it("R2: agentLoopContinue emits agent_start and turn_start but no events for the existing messages", async () => {
    const rec = recorder();
    const context = { messages: [user("q"), user("and another thing", 2)] };
    const stream = scriptedStreamFn([answer("continued")]);
    const events = agentLoopContinue(context, baseConfig(), undefined, stream);
    for await (const event of events) rec.sink(event);
    expect(rec.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:1",
    ]);
    expect(stream.calls[0].context.messages.map(summary)).toEqual(["user(q)", "user(and another thing)"]);
    expect((await events.result()).map(summary)).toEqual(["assistant(stop)[continued]"]);
  });

  it("R3: steering is polled once at run start, after the prompts, and injected before the first request", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        script: [answer("ok")],
        config: { getSteeringMessages: logged(rec.note, "getSteeringMessages", batches([user("steer")])) },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "message_start:user(steer)",
      "message_end:user(steer)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "agent_end:3",
    ]);
    expect(run.stream.calls[0].context.messages.map(summary)).toEqual(["user(hi)", "user(steer)"]);
    expect(run.messages.map(summary)).toEqual(["user(hi)", "user(steer)", "assistant(stop)[ok]"]);
  });

  it("R3: agentLoopContinue polls steering at start too", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        prompts: null,
        messages: [user("q")],
        script: [answer("ok")],
        config: { getSteeringMessages: logged(rec.note, "getSteeringMessages", batches([user("steer")])) },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "hook:getSteeringMessages",
      "message_start:user(steer)",
      "message_end:user(steer)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "agent_end:2",
    ]);
    expect(run.stream.calls[0].context.messages.map(summary)).toEqual(["user(q)", "user(steer)"]);
  });

  it("R4: before each later request: prepareNextTurn, steering re-poll, turn_start, prepared messages, prepareRequest", async () => {
    const rec = recorder();
    const turns: AgentTurnContext[] = [];
    const run = await runScenario(
      {
        tools: [tool("read")],
        script: [calls("read"), answer("done")],
        config: {
          getSteeringMessages: logged(rec.note, "getSteeringMessages", batches()),
          getFollowUpMessages: logged(rec.note, "getFollowUpMessages", batches()),
          prepareNextTurn: logged(rec.note, "prepareNextTurn", async (turn: AgentTurnContext) => {
            turns.push(turn);
            return { messages: [user("prepared")] };
          }),
          prepareRequest: logged(rec.note, "prepareRequest", async () => undefined),
          finishTurn: logged(rec.note, "finishTurn", async () => undefined),
        },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "hook:prepareRequest",
      "request",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:read",
      "tool_end:read",
      "message_start:toolResult(read)",
      "message_end:toolResult(read)",
      "hook:finishTurn",
      "turn_end:assistant(toolUse)+1",
      "hook:getSteeringMessages", // R9
      "hook:prepareNextTurn", // R4a
      "hook:getSteeringMessages", // R4a: nothing pending (prepared messages are not pending)
      "turn_start",
      "message_start:user(prepared)", // R4b
      "message_end:user(prepared)",
      "hook:prepareRequest", // R4c
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "hook:finishTurn",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "hook:getFollowUpMessages",
      "agent_end:6",
    ]);
    // prepareNextTurn sees the completed turn.
    expect(turns).toHaveLength(1);
    expect(summary(turns[0].message)).toBe("assistant(toolUse)[call read]");
    expect(turns[0].toolResults.map(summary)).toEqual(["toolResult(read):read done"]);
    expect(turns[0].context.messages.map(summary)).toEqual([
      "system( +read)",
      "user(hi)",
      "assistant(toolUse)[call read]",
      "toolResult(read):read done",
    ]);
    expect(run.stream.calls[1].context.messages.map(summary).slice(-2)).toEqual(["toolResult(read):read done", "user(prepared)"]);
  });

  it("R4: steering is not re-polled after prepareNextTurn when a steering message is already pending", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        script: [answer("one"), answer("two")],
        config: {
          getSteeringMessages: logged(rec.note, "getSteeringMessages", batches([], [user("steer")])),
          prepareNextTurn: logged(rec.note, "prepareNextTurn", async () => undefined),
        },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "hook:prepareNextTurn",
      "turn_start",
      "message_start:user(steer)",
      "message_end:user(steer)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "agent_end:4",
    ]);
  });

  it("R4: prepareNextTurn's context, model and thinking level apply to the next request", async () => {
    const other: Model = { ...model, id: "other-model", provider: "other" };
    const replacement = [user("replaced")];
    const run = await runScenario({
      tools: [tool("read")],
      script: [calls("read"), answer("done")],
      config: {
        prepareNextTurn: async (turn: AgentTurnContext) => ({
          context: { messages: replacement, tools: turn.context.tools },
          model: other,
          thinkingLevel: "high" as ThinkingLevel,
        }),
      },
    });
    const [first, second] = run.stream.calls;
    expect(first.model.id).toBe("scripted");
    expect(first.options.reasoning).toBeUndefined();
    expect(second.model.id).toBe("other-model");
    expect(second.options.reasoning).toBe("high");
    // The replaced transcript (with the tools' declaration re-announced, R30) is what the model sees.
    expect(second.context.messages.map(summary)).toEqual(["user(replaced)", "system( +read)"]);
    const last = run.messages[run.messages.length - 1] as { thinkingLevel?: string; model: string };
    expect(last.thinkingLevel).toBe("high");
    expect(last.model).toBe("other-model");
  });

  it("R4: prepareRequest's update applies to this request and to later ones", async () => {
    const other: Model = { ...model, id: "prepared-model" };
    let n = 0;
    const seen: string[][] = [];
    const run = await runScenario({
      tools: [tool("read")],
      script: [calls("read"), answer("done")],
      config: {
        prepareRequest: async ({ context, model: current, thinkingLevel }) => {
          seen.push([current.id, thinkingLevel, ...context.messages.map(summary)]);
          if (n++ > 0) return undefined;
          // Drop nothing, but put a note first: the request and every later one see it.
          return { context: { messages: [user("note"), ...context.messages], tools: context.tools }, model: other, thinkingLevel: "low" };
        },
      },
    });
    expect(seen).toEqual([
      ["scripted", "off", "system( +read)", "user(hi)"],
      ["prepared-model", "low", "user(note)", "system( +read)", "user(hi)", "assistant(toolUse)[call read]", "toolResult(read):read done"],
    ]);
    expect(run.stream.calls.map((c) => [c.model.id, c.options.reasoning])).toEqual([
      ["prepared-model", "low"],
      ["prepared-model", "low"],
    ]);
    expect(run.stream.calls[0].context.messages.map(summary)).toEqual(["user(note)", "system( +read)", "user(hi)"]);
  });

  it("R5: each request produces exactly one assistant message, appended to the context", async () => {
    const run = await runScenario({ tools: [tool("read")], script: [calls("read"), calls("read"), answer("done")] });
    expect(run.stream.calls).toHaveLength(3);
    expect(run.messages.filter((m) => m.role === "assistant")).toHaveLength(3);
    expect(run.stream.calls.map((c) => c.context.messages.map(summary))).toEqual([
      ["system( +read)", "user(hi)"],
      ["system( +read)", "user(hi)", "assistant(toolUse)[call read]", "toolResult(read):read done"],
      [
        "system( +read)",
        "user(hi)",
        "assistant(toolUse)[call read]",
        "toolResult(read):read done",
        "assistant(toolUse)[call read]",
        "toolResult(read):read done",
      ],
    ]);
  });

  for (const stopReason of ["error", "aborted"] as const) {
    it(`R6: an ${stopReason} response ends the run: finishTurn is called but ignored, no tools, no queue polls`, async () => {
      const rec = recorder();
      const executed: string[] = [];
      const run = await runScenario(
        {
          tools: [tool("read", async () => (executed.push("read"), { content: [], details: {} }))],
          script: [{ content: [toolCall("read")], stopReason, errorMessage: "provider said no" }, answer("never")],
          config: {
            getSteeringMessages: logged(rec.note, "getSteeringMessages", batches()),
            getFollowUpMessages: logged(rec.note, "getFollowUpMessages", batches()),
            finishTurn: logged(rec.note, "finishTurn", async () => ({ action: "continue" as const })),
          },
        },
        rec,
      );
      expect(run.log).toEqual([
        "agent_start",
        "turn_start",
        "message_start:system",
        "message_end:system",
        "message_start:user(hi)",
        "message_end:user(hi)",
        "hook:getSteeringMessages",
        "request",
        "message_start:assistant",
        `message_end:assistant(${stopReason})`,
        "hook:finishTurn",
        `turn_end:assistant(${stopReason})+0`,
        "agent_end:3",
      ]);
      expect(executed).toEqual([]);
      expect(run.stream.calls).toHaveLength(1);
      expect(run.messages.map(summary)).toEqual(["system( +read)", "user(hi)", `assistant(${stopReason})[call read]:provider said no`]);
    });
  }

  it("R7: a response with tool calls runs the batch and appends one result per call", async () => {
    const run = await runScenario({ tools: [tool("read"), tool("grep")], script: [calls("read", "grep"), answer("done")] });
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "request",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:read",
      "tool_start:grep",
      "tool_end:read",
      "tool_end:grep",
      "message_start:toolResult(read)",
      "message_end:toolResult(read)",
      "message_start:toolResult(grep)",
      "message_end:toolResult(grep)",
      "turn_end:assistant(toolUse)+2",
      "turn_start",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:6",
    ]);
    expect(run.messages.map(summary)).toEqual([
      "system( +read,grep)",
      "user(hi)",
      "assistant(toolUse)[call read|call grep]",
      "toolResult(read):read done",
      "toolResult(grep):grep done",
      "assistant(stop)[done]",
    ]);
  });

  it('R8: finishTurn runs after the tool results and before turn_end; {action:"end"} ends the run at once', async () => {
    const rec = recorder();
    const seen: string[] = [];
    const run = await runScenario(
      {
        tools: [tool("read")],
        script: [calls("read"), answer("never")],
        config: {
          getSteeringMessages: logged(rec.note, "getSteeringMessages", batches()),
          getFollowUpMessages: logged(rec.note, "getFollowUpMessages", batches()),
          finishTurn: logged(rec.note, "finishTurn", async (turn: AgentTurnContext) => {
            seen.push(summary(turn.message), ...turn.toolResults.map(summary));
            return { action: "end" as const };
          }),
        },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "request",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:read",
      "tool_end:read",
      "message_start:toolResult(read)",
      "message_end:toolResult(read)",
      "hook:finishTurn",
      "turn_end:assistant(toolUse)+1",
      "agent_end:4",
    ]);
    expect(seen).toEqual(["assistant(toolUse)[call read]", "toolResult(read):read done"]);
    expect(run.stream.calls).toHaveLength(1);
  });

  it("R9: steering is polled after every turn; a steering message keeps the inner loop going", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        script: [answer("one"), answer("two")],
        config: {
          getSteeringMessages: logged(rec.note, "getSteeringMessages", batches([], [user("mid")])),
          getFollowUpMessages: logged(rec.note, "getFollowUpMessages", batches()),
        },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "turn_start",
      "message_start:user(mid)",
      "message_end:user(mid)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "hook:getFollowUpMessages",
      "agent_end:4",
    ]);
    expect(run.stream.calls[1].context.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[one]", "user(mid)"]);
  });

  it("R9: steering polled after a tool turn is injected with the tool results' answer request", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        tools: [tool("read")],
        script: [calls("read"), answer("done")],
        config: { getSteeringMessages: logged(rec.note, "getSteeringMessages", batches([], [user("mid")])) },
      },
      rec,
    );
    expect(run.stream.calls).toHaveLength(2);
    expect(run.stream.calls[1].context.messages.map(summary).slice(-3)).toEqual([
      "assistant(toolUse)[call read]",
      "toolResult(read):read done",
      "user(mid)",
    ]);
  });

  it("R10: follow-ups are polled when the run would stop; messages continue the loop, none end it", async () => {
    const rec = recorder();
    const run = await runScenario(
      {
        script: [answer("one"), answer("two")],
        config: {
          getSteeringMessages: logged(rec.note, "getSteeringMessages", batches()),
          getFollowUpMessages: logged(rec.note, "getFollowUpMessages", batches([user("more")])),
        },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "hook:getFollowUpMessages",
      "turn_start",
      "message_start:user(more)",
      "message_end:user(more)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "hook:getFollowUpMessages",
      "agent_end:4",
    ]);
    expect(run.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[one]", "user(more)", "assistant(stop)[two]"]);
  });

  it('R10: {action:"continue"} with nothing else pending makes exactly one more request with the current context', async () => {
    const rec = recorder();
    let n = 0;
    const run = await runScenario(
      {
        script: [answer("one"), answer("two"), answer("never")],
        config: {
          getFollowUpMessages: logged(rec.note, "getFollowUpMessages", batches()),
          finishTurn: logged(rec.note, "finishTurn", async () => (n++ === 0 ? { action: "continue" as const } : undefined)),
        },
      },
      rec,
    );
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "hook:finishTurn",
      "turn_end:assistant(stop)+0",
      "hook:getFollowUpMessages",
      "turn_start",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "hook:finishTurn",
      "turn_end:assistant(stop)+0",
      "hook:getFollowUpMessages",
      "agent_end:3",
    ]);
    expect(run.stream.calls[1].context.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[one]"]);
  });

  it("R11: a continue decision is satisfied by the tool results' request and adds none", async () => {
    const run = await runScenario({
      tools: [tool("read")],
      script: [calls("read"), answer("done"), answer("never")],
      config: { finishTurn: async ({ message }) => (message.stopReason === "toolUse" ? { action: "continue" as const } : undefined) },
    });
    expect(run.stream.calls).toHaveLength(2);
    expect(run.messages.map(summary)).toEqual([
      "system( +read)",
      "user(hi)",
      "assistant(toolUse)[call read]",
      "toolResult(read):read done",
      "assistant(stop)[done]",
    ]);
  });

  it("R11: a continue decision is satisfied by a steering or follow-up request and adds none", async () => {
    let n = 0;
    const steered = await runScenario({
      script: [answer("one"), answer("two"), answer("never")],
      config: {
        getSteeringMessages: batches([], [user("steer")]),
        finishTurn: async () => (n++ === 0 ? { action: "continue" as const } : undefined),
      },
    });
    expect(steered.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[one]", "user(steer)", "assistant(stop)[two]"]);

    let m = 0;
    const followed = await runScenario({
      script: [answer("one"), answer("two"), answer("never")],
      config: {
        getFollowUpMessages: batches([user("follow")]),
        finishTurn: async () => (m++ === 0 ? { action: "continue" as const } : undefined),
      },
    });
    expect(followed.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[one]", "user(follow)", "assistant(stop)[two]"]);
  });

  it("R12: agent_end.messages and the resolved value are every message the run added, in order", async () => {
    let prepared = 0;
    const run = await runScenario({
      messages: [system("You help."), user("old", 0)],
      prompts: [user("hi")],
      tools: [tool("read")],
      script: [calls("read"), answer("two"), answer("three")],
      config: {
        getSteeringMessages: batches([user("steer")]),
        getFollowUpMessages: batches([user("follow")]),
        prepareNextTurn: async () => (prepared++ === 0 ? { messages: [user("prepared")] } : undefined),
      },
    });
    const expected = [
      "system( +read)",
      "user(hi)",
      "user(steer)",
      "assistant(toolUse)[call read]",
      "toolResult(read):read done",
      "user(prepared)",
      "assistant(stop)[two]",
      "user(follow)",
      "assistant(stop)[three]",
    ];
    expect(run.messages.map(summary)).toEqual(expected);
    const end = run.events[run.events.length - 1];
    expect(end.type).toBe("agent_end");
    expect(end.type === "agent_end" && end.messages).toEqual(run.messages);
  });

  it("R12: agentLoopContinue's result excludes the messages it continued from", async () => {
    const run = await runScenario({ prompts: null, messages: [user("q")], script: [answer("a")] });
    expect(run.messages.map(summary)).toEqual(["assistant(stop)[a]"]);
  });
});
