/**
 * Request boundary (SPEC R40–R42): how one request is built (hooks in order, the API key kept out
 * of events and machine state), how the provider's event stream becomes message events, and what
 * the final message records.
 */
import { describe, expect, it } from "vitest";
import {
  text,
  thinking,
  toolCall,
  type AgentMessage,
  type AssistantMessage,
  type Message,
  type RunActor,
  type StreamFn,
  type AssistantMessageEvent,
  type JsonObject,
} from "../../src/index.js";
import { assistantMessage, baseConfig, handStream, logEntry, logged, recorder, runScenario, summary, tool, user } from "./helpers.js";
import { runAgentLoop } from "../../src/index.js";

const answer = (value: string) => ({ content: [text(value)] });
const SECRET = "sk-test-SECRET-4242";

/** Runs one request through a hand-written stream; returns every event's log entry, deltas included. */
async function handRun(streamFn: StreamFn) {
  const rec = recorder();
  const messages = await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), rec.sink, undefined, streamFn);
  return { messages, events: rec.events, entries: rec.events.map(logEntry) };
}

describe("request boundary", () => {
  it("R40: transformContext → convertToLlm → getApiKey → streamFn, each fed by the previous step", async () => {
    const rec = recorder();
    const seen: Record<string, unknown> = {};
    const run = await runScenario(
      {
        script: [answer("ok")],
        config: {
          prepareRequest: logged(rec.note, "prepareRequest", async () => undefined),
          transformContext: logged(rec.note, "transformContext", async (messages: AgentMessage[], signal?: AbortSignal) => {
            seen.transformSignal = signal instanceof AbortSignal;
            return [user("remembered", 0), ...messages];
          }),
          convertToLlm: logged(rec.note, "convertToLlm", (messages: AgentMessage[]) => {
            seen.convertInput = messages.map(summary);
            return [...(messages as Message[]), user("converted", 3) as Message];
          }),
          getApiKey: logged(rec.note, "getApiKey", async (provider: string) => {
            seen.provider = provider;
            return SECRET;
          }),
        },
      },
      rec,
    );
    expect(run.log.slice(0, 9)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "hook:prepareRequest",
      "hook:transformContext",
      "hook:convertToLlm",
      "hook:getApiKey",
      "request",
    ]);
    expect(seen).toEqual({ transformSignal: true, convertInput: ["user(remembered)", "user(hi)"], provider: "scripted" });
    expect(run.stream.calls[0].context.messages.map(summary)).toEqual(["user(remembered)", "user(hi)", "user(converted)"]);
    expect(run.stream.calls[0].hadApiKey).toBe(true);
    // transformContext shapes the request only: the transcript is unchanged.
    expect(run.messages.map(summary)).toEqual(["user(hi)", "assistant(stop)[ok]"]);
  });

  it("R40: the API key reaches every request but never an event or the run actor's snapshot", async () => {
    let actor: RunActor | undefined;
    const snapshots: string[] = [];
    const rec = recorder();
    const record = rec.sink;
    rec.sink = (event) => {
      record(event);
      snapshots.push(JSON.stringify(actor!.getPersistedSnapshot()));
    };
    const providers: string[] = [];
    const run = await runScenario(
      {
        tools: [tool("read")],
        script: [{ content: [toolCall("read")] }, answer("ok")],
        config: {
          apiKey: `${SECRET}-fallback`,
          getApiKey: async (provider) => (providers.push(provider), SECRET),
          beforeToolCall: async () => undefined,
          afterToolCall: async () => undefined,
        },
        options: { onActor: (a) => (actor = a) },
      },
      rec,
    );
    expect(providers).toEqual(["scripted", "scripted"]);
    expect(run.stream.calls.map((c) => c.hadApiKey)).toEqual([true, true]);
    expect(JSON.stringify(run.events)).not.toContain(SECRET);
    expect(JSON.stringify(run.messages)).not.toContain(SECRET);
    expect(snapshots.length).toBe(run.events.length);
    for (const snapshot of snapshots) expect(snapshot).not.toContain(SECRET);
    expect(JSON.stringify(actor!.getPersistedSnapshot())).not.toContain(SECRET);
  });

  it("R40: without getApiKey, or when it returns nothing, config.apiKey is used", async () => {
    const keyPassed: (string | undefined)[] = [];
    const spy: StreamFn = (model, context, options) => {
      keyPassed.push(options.apiKey);
      return handStream([{ type: "done", reason: "stop", message: assistantMessage([text("x") as never]) }], assistantMessage([]))(model, context, options);
    };
    await runAgentLoop([user("hi")], { messages: [] }, baseConfig({ apiKey: "fallback-key" }), () => {}, undefined, spy);
    await runAgentLoop([user("hi")], { messages: [] }, baseConfig({ apiKey: "fallback-key", getApiKey: async () => undefined }), () => {}, undefined, spy);
    await runAgentLoop([user("hi")], { messages: [] }, baseConfig({ apiKey: "fallback-key", getApiKey: () => "resolved-key" }), () => {}, undefined, spy);
    await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), () => {}, undefined, spy);
    expect(keyPassed).toEqual(["fallback-key", "fallback-key", "resolved-key", undefined]);
  });

  it("R40: stream options from the config pass through untouched, with the signal", async () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    let sawAbort: boolean | undefined;
    const run = await runScenario({
      script: (call) => ({ content: [text(String(call.options.maxTokens))] }),
      config: { maxTokens: 123, sessionId: "session-1", temperature: 0.25, metadata: { user: "u1" } },
    });
    expect(run.stream.calls[0].options).toMatchObject({ maxTokens: 123, sessionId: "session-1", temperature: 0.25, metadata: { user: "u1" } });
    // The request's signal follows the caller's.
    const spy: StreamFn = (model, context, options) => {
      signal = options.signal;
      controller.abort();
      sawAbort = options.signal?.aborted;
      return handStream([{ type: "done", reason: "stop", message: assistantMessage([]) }], assistantMessage([]))(model, context, options);
    };
    await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), () => {}, controller.signal, spy);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(sawAbort).toBe(true);
  });

  it("R40: normalization drops what convertToLlm let through that a provider cannot read", async () => {
    const note = { role: "note", text: "app-only", timestamp: 2 } as unknown as AgentMessage;
    const run = await runScenario({
      messages: [user("q", 0), note],
      prompts: [user("hi")],
      script: [answer("ok")],
      config: { convertToLlm: (messages) => messages as Message[] },
    });
    expect(run.stream.calls[0].context.messages.map(summary)).toEqual(["user(q)", "user(hi)"]);
  });

  it("R41, R83: an update kept by a listener stays the message as of that update (the provider grows its partial in place)", async () => {
    // A provider that appends each delta to its live block (as real ones do); a sink that keeps
    // the events and reads them later (an async sink, a journal) must see each update's own text.
    const deltas = ["one ", "two ", "three ", "four"];
    const growing: StreamFn = () => {
      const live = assistantMessage([], "stop");
      return {
        async *[Symbol.asyncIterator]() {
          yield { type: "start", partial: live } as AssistantMessageEvent;
          const block = { type: "text" as const, text: "" };
          live.content.push(block);
          yield { type: "text_start", contentIndex: 0, partial: live } as AssistantMessageEvent;
          for (const delta of deltas) {
            block.text += delta;
            yield { type: "text_delta", contentIndex: 0, delta, partial: live } as AssistantMessageEvent;
          }
          yield { type: "done", reason: "stop", message: assistantMessage([{ type: "text", text: block.text }]) } as AssistantMessageEvent;
        },
        result: async () => assistantMessage([{ type: "text", text: deltas.join("") }]),
      };
    };
    const run = await runScenario({ script: [], streamFn: growing });
    const updates = run.events.filter((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta");
    expect(updates).toHaveLength(deltas.length);
    let sofar = "";
    for (const event of updates) {
      if (event.type !== "message_update" || event.assistantMessageEvent.type !== "text_delta") throw new Error("unexpected");
      sofar += event.assistantMessageEvent.delta;
      expect(event.message.content).toEqual([{ type: "text", text: sofar }]);
      expect(event.assistantMessageEvent.partial.content).toEqual([{ type: "text", text: sofar }]);
    }
    const start = run.events.find((e) => e.type === "message_start" && e.message.role === "assistant");
    expect(start?.type === "message_start" && start.message.content).toEqual([]);
  });

  it("R41, R83: a kept update stays as of that update when the provider runs ahead of its consumer (blocks after the event's own)", async () => {
    // A provider that buffers its events (as pi-ai's event streams do) has opened the next block,
    // and goes on changing it, before the consumer reads the update of the block before.
    const ahead: StreamFn = () => {
      const live = assistantMessage([], "toolUse");
      return {
        async *[Symbol.asyncIterator]() {
          yield { type: "start", partial: live } as AssistantMessageEvent;
          const call = { type: "toolCall" as const, id: "c1", name: "read", arguments: {} as JsonObject };
          live.content.push({ type: "text", text: "a" }, call);
          yield { type: "text_delta", contentIndex: 0, delta: "a", partial: live } as AssistantMessageEvent;
          call.arguments = { path: "x" };
          yield { type: "toolcall_end", contentIndex: 1, toolCall: call, partial: live } as AssistantMessageEvent;
          yield { type: "done", reason: "toolUse", message: assistantMessage(structuredClone(live.content), "toolUse") } as AssistantMessageEvent;
        },
        result: async () => assistantMessage(structuredClone(live.content), "toolUse"),
      };
    };
    const kept: AgentMessage[] = [];
    await runAgentLoop([user("hi")], { messages: [], tools: [tool("read")] }, { ...baseConfig(), finishTurn: () => ({ action: "end" }) }, (event) => {
      if (event.type === "message_update") kept.push(event.message);
    }, undefined, ahead);
    expect(kept.map((message) => (message as AssistantMessage).content)).toEqual([
      [{ type: "text", text: "a" }, { type: "toolCall", id: "c1", name: "read", arguments: {} }],
      [{ type: "text", text: "a" }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "x" } }],
    ]);
  });

  it("R41, R83: past 128 blocks too, a kept update stays as of that update when the provider runs ahead (the next block opened, grown and replaced before the update is read)", async () => {
    const expected: string[] = [];
    const ahead: StreamFn = () => {
      const live = assistantMessage([], "stop");
      return {
        async *[Symbol.asyncIterator]() {
          yield { type: "start", partial: live } as AssistantMessageEvent;
          live.content.push({ type: "text", text: "" });
          for (let b = 0; b < 300; b++) {
            (live.content[b] as { text: string }).text += "a";
            live.content.push({ type: "text", text: "" });
            expected.push(JSON.stringify(live.content));
            yield { type: "text_delta", contentIndex: b, delta: "a", partial: live } as AssistantMessageEvent;
            (live.content[b + 1] as { text: string }).text += "z";
            live.content[b + 1] = { type: "text", text: "" };
          }
          live.content.pop();
          yield { type: "done", reason: "stop", message: assistantMessage(structuredClone(live.content)) } as AssistantMessageEvent;
        },
        result: async () => assistantMessage(structuredClone(live.content)),
      };
    };
    const kept: AgentMessage[] = [];
    await runAgentLoop([user("hi")], { messages: [], tools: [] }, { ...baseConfig(), finishTurn: () => ({ action: "end" }) }, (event) => {
      if (event.type === "message_update") kept.push(event.message);
    }, undefined, ahead);
    const read = kept.map((message) => JSON.stringify((message as AssistantMessage).content));
    expect(read.findIndex((content, i) => content !== expected[i])).toBe(-1);
    expect(read).toHaveLength(300);
  });

  describe("R41, R83: many blocks (each update's content copied when first read)", () => {
    /**
     * A provider that appends `blocks` text blocks and grows each with three deltas; `replace`
     * writes each delta as a new block object instead of growing the live one; `shape`: pi-ai's
     * partial, the same with a `responseId` set mid-stream, or its keys in another order. The
     * expected message of every update is taken when it is emitted, as an eager copy would hold it.
     */
    async function manyBlocks(blocks: number, replace: boolean, shape: "usual" | "responseId" | "reordered" = "usual") {
      const expected: string[] = [];
      const growing: StreamFn = () => {
        const { timestamp, ...rest } = assistantMessage([], "stop");
        const live: AssistantMessage = shape === "reordered" ? { timestamp, ...rest } : { ...rest, timestamp };
        return {
          async *[Symbol.asyncIterator]() {
            yield { type: "start", partial: live } as AssistantMessageEvent;
            for (let b = 0; b < blocks; b++) {
              if (shape === "responseId" && b === blocks / 2) (live as AssistantMessage & { responseId?: string }).responseId = "resp-1";
              live.content.push({ type: "text", text: "" });
              expected.push(JSON.stringify(live));
              yield { type: "text_start", contentIndex: b, partial: live } as AssistantMessageEvent;
              for (const delta of ["a", "b", "c"]) {
                const block = live.content[b] as { type: "text"; text: string };
                if (replace) live.content[b] = { type: "text", text: block.text + delta };
                else block.text += delta;
                expected.push(JSON.stringify(live));
                yield { type: "text_delta", contentIndex: b, delta, partial: live } as AssistantMessageEvent;
              }
            }
            yield { type: "done", reason: "stop", message: assistantMessage(structuredClone(live.content)) } as AssistantMessageEvent;
          },
          result: async () => assistantMessage(structuredClone(live.content)),
        };
      };
      // The sink keeps every update and reads none until the run is over.
      const kept: AgentMessage[] = [];
      const rec = recorder();
      await runAgentLoop([user("hi")], { messages: [] }, baseConfig(), (event) => {
        if (event.type === "message_update") kept.push(event.message);
        return rec.sink(event);
      }, undefined, growing);
      return { kept, expected, events: rec.events };
    }

    for (const [replace, shape] of [[false, "usual"], [true, "usual"], [false, "responseId"], [false, "reordered"]] as const) {
      it(`every kept update reads as of its emission, 200 blocks (${replace ? "blocks replaced" : "blocks grown in place"}, ${shape} keys)`, async () => {
        const { kept, expected, events } = await manyBlocks(200, replace, shape);
        // The whole message, keys in the partial's order as of the update.
        expect(kept.map((message) => JSON.stringify(message))).toEqual(expected);
        // The same message as a plain copy would be: keys in the same order, content an own array per update.
        const update = events.find((e) => e.type === "message_update" && e.message.role === "assistant" && (e.message as AssistantMessage).content.length === 150);
        if (update?.type !== "message_update") throw new Error("no update with 150 blocks");
        const plain = JSON.parse(JSON.stringify(update.message));
        expect(Object.keys(update.message)).toEqual(Object.keys(plain));
        expect({ ...update.message }).toEqual(plain);
        expect(structuredClone(update.message)).toEqual(plain);
        expect((update.assistantMessageEvent as { partial: unknown }).partial).toBe(update.message);
        expect(new Set(kept.map((message) => (message as AssistantMessage).content)).size).toBe(kept.length);
      });
    }
  });

  it("R41: start opens the message, each content event is a message_update, done closes it", async () => {
    const run = await runScenario({
      tools: [tool("read")],
      prompts: [user("hi")],
      script: [{ content: [thinking("let me think"), text("hello world"), toolCall("read", { path: "a" })], chunkSize: 100 }, answer("ok")],
    });
    const first = run.events.findIndex((e) => e.type === "message_start" && e.message.role === "assistant");
    const last = run.events.findIndex((e) => e.type === "message_end" && e.message.role === "assistant");
    expect(run.events.slice(first, last + 1).map(logEntry)).toEqual([
      "message_start:assistant",
      "message_update:thinking_start",
      "message_update:thinking_delta",
      "message_update:thinking_end",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_end",
      "message_update:toolcall_start",
      "message_update:toolcall_delta",
      "message_update:toolcall_end",
      "message_end:assistant(toolUse)",
    ]);
    // Each update carries the message as of that update (its own content array and its own copy of
    // the block the event changes, also as the provider event's `partial`), so a listener that
    // keeps one keeps that update's message, not the live object the provider goes on growing.
    const seen = new Set<unknown>();
    for (const event of run.events.slice(first + 1, last)) {
      if (event.type !== "message_update" || !("partial" in event.assistantMessageEvent)) throw new Error(`unexpected ${event.type}`);
      expect(event.assistantMessageEvent.partial).toBe(event.message);
      const changed = event.message.content[(event.assistantMessageEvent as { contentIndex: number }).contentIndex];
      for (const item of [event.message, event.message.content, changed]) {
        expect(seen.has(item)).toBe(false);
        seen.add(item);
      }
    }
    const end = run.events[last];
    expect(end.type === "message_end" && end.message).toMatchObject({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "let me think", thinkingSignature: "sig" },
        { type: "text", text: "hello world" },
        { type: "toolCall", id: "call_2_read", name: "read", arguments: { path: "a" } },
      ],
      stopReason: "toolUse",
    });
    expect(run.messages[2]).toEqual(end.type === "message_end" && end.message);
  });

  it("R41: content events before start are ignored", async () => {
    const final = assistantMessage([{ type: "text", text: "hi" }]);
    const partial = assistantMessage([]);
    const { entries } = await handRun(
      handStream(
        [
          { type: "text_start", contentIndex: 0, partial },
          { type: "text_delta", contentIndex: 0, delta: "early", partial },
          { type: "start", partial },
          { type: "text_start", contentIndex: 0, partial },
          { type: "text_delta", contentIndex: 0, delta: "hi", partial },
          { type: "text_end", contentIndex: 0, content: "hi", partial },
          { type: "done", reason: "stop", message: final },
        ],
        final,
      ),
    );
    expect(entries).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "message_start:assistant",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_end",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:2",
    ]);
  });

  it("R41: a stream that terminates without start emits message_start then message_end for the final message", async () => {
    const final = assistantMessage([{ type: "text", text: "at once" }]);
    const { events, entries, messages } = await handRun(handStream([{ type: "done", reason: "stop", message: final }], final));
    expect(entries.slice(4)).toEqual(["message_start:assistant", "message_end:assistant(stop)", "turn_end:assistant(stop)+0", "agent_end:2"]);
    expect(events[4].type === "message_start" && events[4].message).toMatchObject({ content: [{ type: "text", text: "at once" }] });
    expect(summary(messages[1])).toBe("assistant(stop)[at once]");
  });

  it("R41: a setup failure (a lone error event) emits message_start and message_end, and R6 ends the run", async () => {
    const run = await runScenario({ script: [{ setupError: "invalid model id" }] });
    expect(run.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(hi)",
      "message_end:user(hi)",
      "request",
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)+0",
      "agent_end:2",
    ]);
    expect(summary(run.messages[1])).toBe("assistant(error)[]:invalid model id");
  });

  it("R41: a stream that ends with no terminal event falls back to result()", async () => {
    const partial = assistantMessage([]);
    const final = assistantMessage([{ type: "text", text: "from result()" }]);
    const { entries, messages } = await handRun(
      handStream(
        [
          { type: "start", partial },
          { type: "text_start", contentIndex: 0, partial },
          { type: "text_delta", contentIndex: 0, delta: "from", partial },
        ],
        final,
      ),
    );
    expect(entries.slice(4)).toEqual([
      "message_start:assistant",
      "message_update:text_start",
      "message_update:text_delta",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:2",
    ]);
    expect(summary(messages[1])).toBe("assistant(stop)[from result()]");
  });

  it("R42: the final message records the requested thinking level", async () => {
    const high = await runScenario({ script: [answer("ok")], config: { reasoning: "high" } });
    expect((high.messages[1] as AssistantMessage).thinkingLevel).toBe("high");
    expect(high.stream.calls[0].options.reasoning).toBe("high");

    const off = await runScenario({ script: [answer("ok")] });
    expect((off.messages[1] as AssistantMessage).thinkingLevel).toBe("off");

    const failed = await runScenario({ script: [{ setupError: "nope" }], config: { reasoning: "minimal" } });
    expect((failed.messages[1] as AssistantMessage).thinkingLevel).toBe("minimal");

    const changed = await runScenario({
      tools: [tool("read")],
      script: [{ content: [toolCall("read")] }, answer("ok")],
      config: { reasoning: "medium", prepareRequest: async ({ context }) => (context.messages.length > 3 ? { thinkingLevel: "low" } : undefined) },
    });
    expect(changed.messages.filter((m) => m.role === "assistant").map((m) => (m as AssistantMessage).thinkingLevel)).toEqual(["medium", "low"]);
  });
});
