/**
 * Entry-point stream semantics (SPEC "Entry points"): agentLoop's buffered, multicast,
 * non-aborting event stream; argument checks at the call; the caller's context left alone; and
 * runAgentLoop's awaited sink — no loop step while an emit is pending, and a throwing sink aborts
 * the running tools and rejects the run.
 */
import { from, lastValueFrom, takeWhile, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type StreamFn,
} from "../../src/index.js";
import { baseConfig, entries, logEntry, ok, summary, tool, untilAborted, user, wait } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
const script = () => scriptedStreamFn([{ content: [text("looking"), toolCall("read")] }, answer("done")]);

/** Everything the standard two-turn scenario emits, deltas dropped. */
const expected = [
  "agent_start",
  "turn_start",
  "message_start:system",
  "message_end:system",
  "message_start:user(hi)",
  "message_end:user(hi)",
  "message_start:assistant",
  "message_end:assistant(toolUse)",
  "tool_start:read",
  "tool_end:read",
  "message_start:toolResult(read)",
  "message_end:toolResult(read)",
  "turn_end:assistant(toolUse)+1",
  "turn_start",
  "message_start:assistant",
  "message_end:assistant(stop)",
  "turn_end:assistant(stop)+0",
  "agent_end:5",
];
const expectedMessages = ["system( +read)", "user(hi)", "assistant(toolUse)[looking|call read]", "toolResult(read):read done", "assistant(stop)[done]"];

const start = (signal?: AbortSignal, readTool = tool("read")) =>
  agentLoop([user("hi")], { messages: [], tools: [readTool] }, baseConfig(), signal, script());

describe("entry-point stream semantics", () => {
  it("agentLoop: a subscriber attaching right after the call sees every event, then completion", async () => {
    const stream = start();
    const seen: AgentEvent[] = [];
    let completed = false;
    stream.subscribe({ next: (e) => seen.push(e), complete: () => (completed = true) });
    const messages = await stream.result();
    expect(entries(seen)).toEqual(expected);
    expect(completed).toBe(true);
    expect(messages.map(summary)).toEqual(expectedMessages);
  });

  it("agentLoop: events are buffered until the first consumer, even one attaching after the run ended", async () => {
    const stream = start();
    const messages = await stream.result();
    const seen: AgentEvent[] = [];
    for await (const event of stream) seen.push(event);
    expect(entries(seen)).toEqual(expected);
    expect(messages.map(summary)).toEqual(expectedMessages);
  });

  it("agentLoop: further Observable subscribers see events from the moment they subscribe", async () => {
    const stream = start();
    const first: AgentEvent[] = [];
    const second: AgentEvent[] = [];
    let joinedAt = -1;
    let secondCompleted = false;
    stream.subscribe((event) => {
      first.push(event);
      if (event.type === "tool_execution_start") {
        joinedAt = first.length;
        stream.subscribe({ next: (e) => second.push(e), complete: () => (secondCompleted = true) });
      }
    });
    await stream.result();
    expect(entries(first)).toEqual(expected);
    expect(second).toEqual(first.slice(joinedAt));
    expect(entries(second)[0]).toBe("tool_end:read");
    expect(secondCompleted).toBe(true);
  });

  it("agentLoop: unsubscribing does not abort the run; it completes and result() has every message", async () => {
    let toolSignal: AbortSignal | undefined;
    const read = tool("read", async (_id, _params, signal) => ((toolSignal = signal), ok("read done")));
    const stream = start(undefined, read);
    // takeWhile unsubscribes from the stream after the prompt's message_end.
    const seen = await lastValueFrom(
      from(stream).pipe(
        takeWhile((event) => !(event.type === "message_end" && event.message.role === "user"), true),
        toArray(),
      ),
    );
    const messages = await stream.result();
    expect(entries(seen)).toEqual(expected.slice(0, 6));
    expect(messages.map(summary)).toEqual(expectedMessages);
    expect(toolSignal?.aborted).toBe(false);
  });

  it("agentLoop: breaking out of for-await does not abort the run either", async () => {
    let toolSignal: AbortSignal | undefined;
    const read = tool("read", async (_id, _params, signal) => ((toolSignal = signal), ok("read done")));
    const stream = start(undefined, read);
    for await (const event of stream) if (event.type === "agent_start") break;
    const messages = await stream.result();
    expect(messages.map(summary)).toEqual(expectedMessages);
    expect(toolSignal?.aborted).toBe(false);
  });

  it("agentLoop: rxjs consumers (from + toArray / lastValueFrom) and async-iterator consumers see identical sequences", async () => {
    const viaRx = await lastValueFrom(from(start()).pipe(toArray()));
    const viaIterator: AgentEvent[] = [];
    for await (const event of start()) viaIterator.push(event);
    expect(viaRx.map(logEntry)).toEqual(viaIterator.map(logEntry));
    expect(entries(viaRx)).toEqual(expected);
    expect(viaRx.filter((e) => e.type === "message_update")).toHaveLength(viaIterator.filter((e) => e.type === "message_update").length);

    const last = await lastValueFrom(from(start()));
    expect(last.type).toBe("agent_end");
    expect(last.type === "agent_end" && last.messages.map(summary)).toEqual(expectedMessages);
  });

  it("agentLoopContinue's stream behaves the same way", async () => {
    const stream = agentLoopContinue({ messages: [user("q")] }, baseConfig(), undefined, scriptedStreamFn([answer("a")]));
    const viaRx = await lastValueFrom(from(stream).pipe(toArray()));
    expect(entries(viaRx)).toEqual(["agent_start", "turn_start", "message_start:assistant", "message_end:assistant(stop)", "turn_end:assistant(stop)+0", "agent_end:1"]);
    expect((await stream.result()).map(summary)).toEqual(["assistant(stop)[a]"]);
  });

  it("every entry point refuses at the call with a TypeError when streamFn is omitted: the stream ones throw, the promise ones reject", async () => {
    const context = { messages: [user("q")] };
    const config = baseConfig();
    expect(() => agentLoop([user("hi")], context, config)).toThrow(TypeError);
    expect(() => agentLoopContinue(context, config)).toThrow(TypeError);
    await expect(runAgentLoop([user("hi")], context, config, () => {})).rejects.toThrow(TypeError);
    await expect(runAgentLoopContinue(context, config, () => {})).rejects.toThrow(TypeError);
  });

  it("no entry point mutates the caller's context.messages, prompts or tools", async () => {
    const tools = [tool("read")];
    const check = async (run: (context: { messages: AgentMessage[]; tools: typeof tools }, prompts: AgentMessage[]) => Promise<unknown>) => {
      const messages: AgentMessage[] = [user("q")];
      const prompts = [user("hi")];
      const context = { messages, tools };
      const before = structuredClone(messages);
      await run(context, prompts);
      expect(context.messages).toBe(messages);
      expect(messages).toEqual(before);
      expect(prompts).toEqual([user("hi")]);
      expect(context.tools).toBe(tools);
      expect(tools).toHaveLength(1);
    };
    await check((context, prompts) => agentLoop(prompts, context, baseConfig(), undefined, script()).result());
    await check((context) => agentLoopContinue(context, baseConfig(), undefined, script()).result());
    await check((context, prompts) => runAgentLoop(prompts, context, baseConfig(), () => {}, undefined, script()));
    await check((context) => runAgentLoopContinue(context, baseConfig(), () => {}, undefined, script()));
  });

  it("the run's transcript is its own: a caller that changes its context.messages during the run changes no request and no output", async () => {
    // A common pattern: the caller appends each finished message to the array it passed in (here
    // also a stray message), while the run is in flight.
    const check = async (run: (messages: AgentMessage[], sink: (event: AgentEvent) => void, streamFn: StreamFn) => Promise<AgentMessage[]>, start: AgentMessage[]) => {
      const seen: string[][] = [];
      const inner = script();
      const streamFn: StreamFn = (model, context, options) => {
        seen.push(context.messages.map((message) => message.role));
        return inner(model, context, options);
      };
      const messages = start.slice();
      const added = await run(messages, (event) => {
        if (event.type === "message_end") messages.push(event.message, user("stray"));
      }, streamFn);
      return { seen, added: added.map((message) => message.role) };
    };
    const prompted = await check((messages, sink, streamFn) => runAgentLoop([user("hi")], { messages, tools: [tool("read")] }, baseConfig(), sink, undefined, streamFn), [user("q")]);
    expect(prompted.seen).toEqual([
      ["user", "system", "user"],
      ["user", "system", "user", "assistant", "toolResult"],
    ]);
    expect(prompted.added).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    const continued = await check((messages, sink, streamFn) => runAgentLoopContinue({ messages, tools: [tool("read")] }, baseConfig(), sink, undefined, streamFn), [user("q")]);
    // R2: a continue run declares its tools with its first request.
    expect(continued.seen).toEqual([
      ["user", "system"],
      ["user", "system", "assistant", "toolResult"],
    ]);
    expect(continued.added).toEqual(["system", "assistant", "toolResult", "assistant"]);
    // Nothing to declare: the run injects nothing before its first request.
    const bare = await check((messages, sink, streamFn) => runAgentLoopContinue({ messages }, baseConfig(), sink, undefined, streamFn), [user("q")]);
    expect(bare.seen).toEqual([["user"], ["user", "assistant", "toolResult"]]);
    expect(bare.added).toEqual(["assistant", "toolResult", "assistant"]);
  });
});

describe("entry-point stream semantics: the awaited sink", () => {
  /**
   * A slow sink plus a timeline. Every loop step (hook, tool execute, request) records itself;
   * the sink records each event, stays busy for a couple of milliseconds, then settles. Any step
   * or event that begins while an earlier event is still in the sink is a violation (the control
   * test below shows the detector firing when the loop is not made to wait).
   */
  function slowSink() {
    const timeline: string[] = [];
    const violations: string[] = [];
    let busy: string | null = null;
    const step = (entry: string) => {
      if (busy) violations.push(`${entry} while ${busy} was in the sink`);
      timeline.push(entry);
    };
    const sink = async (event: AgentEvent) => {
      const entry = logEntry(event);
      if (busy) violations.push(`${entry} overlapped ${busy}`);
      busy = entry;
      if (event.type !== "message_update") timeline.push(entry);
      await wait(2);
      busy = null;
    };
    return { timeline, violations, step, sink };
  }

  function allHooks(step: (entry: string) => void): Partial<AgentLoopConfig> {
    const hook =
      <T>(name: string, value: T) =>
      () => {
        step(`hook:${name}`);
        return value;
      };
    return {
      getSteeringMessages: hook("getSteeringMessages", Promise.resolve([])),
      getFollowUpMessages: hook("getFollowUpMessages", Promise.resolve([])),
      prepareNextTurn: hook("prepareNextTurn", Promise.resolve(undefined)),
      prepareRequest: hook("prepareRequest", Promise.resolve(undefined)),
      transformContext: (messages: AgentMessage[]) => (step("hook:transformContext"), Promise.resolve(messages)),
      convertToLlm: (messages: AgentMessage[]) => (step("hook:convertToLlm"), messages as never),
      getApiKey: hook("getApiKey", "key"),
      finishTurn: hook("finishTurn", Promise.resolve(undefined)),
      beforeToolCall: hook("beforeToolCall", Promise.resolve(undefined)),
      afterToolCall: hook("afterToolCall", Promise.resolve(undefined)),
    };
  }

  it("runAgentLoop: no hook call, tool execute or request happens until the sink settled the previous event", async () => {
    const { timeline, violations, step, sink } = slowSink();
    const stream = scriptedStreamFn([{ content: [toolCall("a"), toolCall("b")] }, answer("done")]);
    const streamFn: StreamFn = (...args) => (step("request"), stream(...args));
    const a = tool("a", async (_id, _params, _signal, onUpdate) => {
      step("exec:a");
      onUpdate?.(ok("halfway"));
      return ok("a done");
    });
    const b = tool("b", async () => (step("exec:b"), ok("b done")));
    const config = baseConfig({ ...allHooks(step), toolExecution: "sequential" });
    const messages = await runAgentLoop([user("hi")], { messages: [], tools: [a, b] }, config, sink, undefined, streamFn);

    expect(violations).toEqual([]);
    expect(timeline).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:getSteeringMessages",
      "hook:prepareRequest",
      "hook:transformContext",
      "hook:convertToLlm",
      "hook:getApiKey",
      "request",
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:a",
      "hook:beforeToolCall",
      "exec:a",
      "tool_update:a",
      "hook:afterToolCall",
      "tool_end:a",
      "message_start:toolResult(a)",
      "message_end:toolResult(a)",
      "tool_start:b",
      "hook:beforeToolCall",
      "exec:b",
      "hook:afterToolCall",
      "tool_end:b",
      "message_start:toolResult(b)",
      "message_end:toolResult(b)",
      "hook:finishTurn",
      "turn_end:assistant(toolUse)+2",
      "hook:getSteeringMessages",
      "hook:prepareNextTurn",
      "hook:getSteeringMessages",
      "turn_start",
      "hook:prepareRequest",
      "hook:transformContext",
      "hook:convertToLlm",
      "hook:getApiKey",
      "request",
      "message_start:assistant",
      "message_end:assistant(stop)",
      "hook:finishTurn",
      "turn_end:assistant(stop)+0",
      "hook:getSteeringMessages",
      "hook:getFollowUpMessages",
      "agent_end:6",
    ]);
    expect(messages).toHaveLength(6);
  });

  it("control: the detector flags a loop that is not made to wait (a sink that hides its promise)", async () => {
    const { violations, step, sink } = slowSink();
    const stream = scriptedStreamFn([{ content: [toolCall("a")] }, answer("done")]);
    const streamFn: StreamFn = (...args) => (step("request"), stream(...args));
    const a = tool("a", async () => (step("exec:a"), ok("a done")));
    const unawaited = (event: AgentEvent) => void sink(event);
    await runAgentLoop([user("hi")], { messages: [], tools: [a] }, baseConfig(allHooks(step)), unawaited, undefined, streamFn);
    expect(violations).toEqual(expect.arrayContaining(["turn_start overlapped agent_start", "hook:getSteeringMessages while message_end:user(hi) was in the sink"]));
  });

  it("runAgentLoop: a parallel batch never has two emits in the sink at once (tool_execution_end emits are serialized)", async () => {
    const { violations, step, sink, timeline } = slowSink();
    const stream = scriptedStreamFn([{ content: [toolCall("a"), toolCall("b"), toolCall("c")] }, answer("done")]);
    const quick = (name: string, ms: number) => tool(name, async () => (step(`exec:${name}`), await wait(ms), ok(name)));
    const config = baseConfig({ ...allHooks(step) });
    await runAgentLoop([user("hi")], { messages: [], tools: [quick("a", 1), quick("b", 1), quick("c", 1)] }, config, sink, undefined, stream);
    expect(violations).toEqual([]);
    expect(timeline.filter((e) => e.startsWith("tool_end")).sort()).toEqual(["tool_end:a", "tool_end:b", "tool_end:c"]);
  });

  for (const kind of ["throws", "rejects"] as const) {
    it(`runAgentLoop: a sink that ${kind} aborts running tools and the run rejects with that error`, async () => {
      const failure = new Error("sink is broken");
      const stream = scriptedStreamFn([{ content: [toolCall("watch")] }, answer("never")]);
      let sawAbort: boolean | undefined;
      const watch = tool("watch", async (_id, _params, signal, onUpdate) => {
        onUpdate?.(ok("started"));
        await untilAborted(signal);
        sawAbort = signal?.aborted;
        return ok("stopped");
      });
      const delivered: string[] = [];
      const sink = (event: AgentEvent) => {
        delivered.push(logEntry(event));
        if (event.type === "tool_execution_update") {
          if (kind === "throws") throw failure;
          return Promise.reject(failure);
        }
        return undefined;
      };
      await expect(runAgentLoop([user("hi")], { messages: [], tools: [watch] }, baseConfig(), sink, undefined, stream)).rejects.toBe(failure);
      expect(sawAbort).toBe(true);
      expect(stream.calls).toHaveLength(1);
      // Nothing is delivered after the failing event.
      expect(delivered[delivered.length - 1]).toBe("tool_update:watch");
    });
  }
});
