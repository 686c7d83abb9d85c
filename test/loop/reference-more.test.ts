/**
 * More differential tests against the reference, @earendil-works/pi-agent-core 1.6.0, run as a
 * black box (see reference-diff.test.ts for the approach). These go for combinations and edges:
 * the EventStream entry points, hooks together, stream options per request, mixed tool batches,
 * queue hooks, aborts at every stage, stream edge cases, and `runToolCall`.
 *
 * Besides the interleaved log and the returned messages, each scenario also compares every event
 * payload (serialized at emit time, timestamps and durations dropped) and what each request got
 * (model, plain-data options, the normalized transcript).
 *
 * Excluded on purpose (SPEC says we differ): R56 throwing hooks/streams, emit serialization with
 * async sinks, and the additive `agent_end.reason` (R63), which is stripped before comparing.
 */
import * as reference from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  runToolCall,
  scriptedModel,
  scriptedStreamFn,
  text,
  thinking,
  toolCall,
  type AgentContext,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  type Model,
  type Script,
  type StreamFn,
  type JsonObject,
  type ToolCall,
} from "../../src/index.js";
import { assistantMessage, baseConfig, logEntry, ok, summary, system, tool, user, wait } from "./helpers.js";

type Impl = "reference" | "ours";
const ref = reference as unknown as {
  runAgentLoop: typeof runAgentLoop;
  runAgentLoopContinue: typeof runAgentLoopContinue;
  agentLoop: typeof agentLoop;
  agentLoopContinue: typeof agentLoopContinue;
  runToolCall: typeof runToolCall;
};
const impls = {
  reference: ref,
  ours: { runAgentLoop, runAgentLoopContinue, agentLoop, agentLoopContinue, runToolCall },
};

interface Built {
  /** `null`: continue. */
  prompts: AgentMessage[] | null;
  context: AgentContext;
  config: AgentLoopConfig;
  script: Script;
  signal?: AbortSignal;
  /** Called with each event as the sink receives it (e.g. to abort at a given event). */
  onEvent?: (event: AgentEvent) => void;
}
type Scenario = (note: (entry: string) => void) => Built;
type Entry = "run" | "loop";

/** JSON with the fields that legitimately vary dropped; `agent_end.reason` is additive (R63). */
function norm(value: unknown): unknown {
  if (value === undefined) return undefined;
  return JSON.parse(
    JSON.stringify(value, function (key, v) {
      if (key === "timestamp" || key === "durationMs") return undefined;
      if (key === "reason" && (this as { type?: string }).type === "agent_end") return undefined;
      return v;
    }),
  );
}

/**
 * An event serialized at emit time. The streamed partial of `message_update` (and of an assistant
 * `message_start`) is the provider's live object, which the scripted stream keeps growing while
 * the consumer lags, so only the delta event itself is compared for those.
 */
function projectEvent(event: AgentEvent): unknown {
  if (event.type === "message_update") {
    const { partial: _partial, message: _message, ...rest } = event.assistantMessageEvent as unknown as Record<string, unknown>;
    return norm({ type: event.type, assistantMessageEvent: rest });
  }
  if (event.type === "message_start" && (event.message as { role: string }).role === "assistant") {
    return { type: event.type, role: "assistant" };
  }
  if (event.type === "tool_execution_end") {
    // `result.isError` is compared on its own (see "tool_execution_end.result.isError" below).
    const { isError: _isError, ...result } = (event.result ?? {}) as Record<string, unknown>;
    return norm({ ...event, result });
  }
  return norm(event);
}

/** Plain-data stream options: no functions, no model, identity or signal. */
function plainOptions(options: Record<string, unknown> | undefined) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options ?? {})) {
    if (typeof v === "function" || k === "model" || k === "identity" || k === "signal") continue;
    out[k] = v;
  }
  return norm(out);
}

interface Outcome {
  log: string[];
  /** The log without events: hook calls, tool notes and requests only. */
  notes: string[];
  /** Every `tool_execution_end` as emitted, `result.isError` included. */
  toolEnds: unknown[];
  /** Per request: the signal the stream function got, relative to the caller's. */
  requestSignals: string[];
  messages: string[];
  normalized: unknown;
  events: unknown[];
  requests: unknown[];
}

async function play(impl: Impl, scenario: Scenario, entry: Entry = "run"): Promise<Outcome> {
  const log: string[] = [];
  const notes: string[] = [];
  const events: unknown[] = [];
  const toolEnds: unknown[] = [];
  const requests: unknown[] = [];
  const requestSignals: string[] = [];
  const note = (s: string) => void (log.push(s), notes.push(s));
  const built = scenario(note);
  const scripted = scriptedStreamFn(built.script);
  const stream: StreamFn = (model, context, options) => {
    note("request");
    const signal = (options as { signal?: AbortSignal })?.signal;
    requestSignals.push(signal === undefined ? "none" : signal === built.signal ? "caller's" : "other");
    requests.push({
      model: model.id,
      options: plainOptions(options as Record<string, unknown>),
      aborted: !!(options as { signal?: AbortSignal })?.signal?.aborted,
      context: norm(context),
    });
    return scripted(model, context, options);
  };
  const sink = (event: AgentEvent) => {
    events.push(projectEvent(event));
    if (event.type === "tool_execution_end") toolEnds.push(norm(event));
    if (event.type !== "message_update") log.push(logEntry(event));
    built.onEvent?.(event);
  };
  const api = impls[impl];
  let messages: AgentMessage[];
  if (entry === "run") {
    messages =
      built.prompts === null
        ? await api.runAgentLoopContinue(built.context, built.config, sink, built.signal, stream)
        : await api.runAgentLoop(built.prompts, built.context, built.config, sink, built.signal, stream);
  } else {
    const es =
      built.prompts === null
        ? api.agentLoopContinue(built.context, built.config, built.signal, stream)
        : api.agentLoop(built.prompts, built.context, built.config, built.signal, stream);
    for await (const event of es as AsyncIterable<AgentEvent>) sink(event);
    messages = await es.result();
  }
  return { log, notes, toolEnds, requestSignals, messages: messages.map(summary), normalized: norm(messages), events, requests };
}

async function compare(scenario: Scenario, entry: Entry = "run") {
  const reference = await play("reference", scenario, entry);
  const ours = await play("ours", scenario, entry);
  return { reference, ours };
}

/** The common assertion: same log, messages, events and requests. */
async function same(scenario: Scenario, entry: Entry = "run") {
  const { reference, ours } = await compare(scenario, entry);
  // Through the EventStream the consumer runs behind the loop, so how hook calls interleave with
  // the events it iterates is scheduling, not behaviour: compare both sequences on their own.
  if (entry === "loop") expect(ours.notes).toEqual(reference.notes);
  else expect(ours.log).toEqual(reference.log);
  expect(ours.messages).toEqual(reference.messages);
  expect(ours.normalized).toEqual(reference.normalized);
  expect(ours.events).toEqual(reference.events);
  expect(ours.requests).toEqual(reference.requests);
}

const answer = (value: string) => ({ content: [text(value)] });
const calls = (...names: string[]) => ({ content: names.map((name) => toolCall(name, {}, `id_${name}`)) });
const batches = (...list: AgentMessage[][]) => {
  let i = 0;
  return async () => list[i++] ?? [];
};
function queueHooks(note: (entry: string) => void, steering: AgentMessage[][] = [], followUps: AgentMessage[][] = []) {
  const s = batches(...steering);
  const f = batches(...followUps);
  return {
    getSteeringMessages: async () => (note("hook:getSteeringMessages"), s()),
    getFollowUpMessages: async () => (note("hook:getFollowUpMessages"), f()),
  };
}
const roles = (messages: AgentMessage[]) => messages.map(summary).join(",");
const otherModel: Model = { ...scriptedModel, id: "other", name: "Other" };
const custom = (content: string) => ({ role: "note", content, timestamp: 1 }) as unknown as AgentMessage;
/** Drops custom-role messages, as an app's convertToLlm would. */
const dropCustom = (messages: AgentMessage[]) => messages.filter((m) => (m as { role: string }).role !== "note") as never;

const numberSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

// ---------------------------------------------------------------------------------------------

describe("reference differential, more (pi-agent-core 1.6.0 as a black box)", () => {
  describe("EventStream entry points", () => {
    const withTools: Scenario = (note) => ({
      prompts: [user("hi")],
      context: { messages: [], tools: [tool("a"), tool("b")] },
      config: baseConfig({ ...queueHooks(note, [], [[user("more")]]) }),
      script: [calls("a", "b"), answer("one"), answer("two")],
    });

    it("R1: agentLoop yields the same events and result() as the reference", async () => {
      await same(withTools, "loop");
    });

    it("R2: agentLoopContinue yields the same events and result() as the reference", async () => {
      await same(
        (note) => ({
          prompts: null,
          context: { messages: [user("q")], tools: [tool("a")] },
          config: baseConfig({ ...queueHooks(note, [[user("steer")]]) }),
          script: [calls("a"), answer("done")],
        }),
        "loop",
      );
    });

    it("R2: agentLoopContinue from a toolResult tail", async () => {
      const assistant = assistantMessage([{ type: "toolCall", id: "c1", name: "a", arguments: {} }], "toolUse");
      const result = { role: "toolResult", toolCallId: "c1", toolName: "a", content: [{ type: "text", text: "r" }], isError: false, timestamp: 1 };
      await same(
        (note) => ({
          prompts: null,
          context: { messages: [user("q"), assistant, result as AgentMessage], tools: [tool("a")] },
          config: baseConfig({ ...queueHooks(note) }),
          script: [answer("done")],
        }),
        "loop",
      );
    });

    /** How a continue entry refuses `context`: a synchronous throw, or a rejected promise. */
    async function refusal(impl: Impl, fn: "agentLoopContinue" | "runAgentLoopContinue", context: AgentContext) {
      const api = impls[impl];
      try {
        const value =
          fn === "agentLoopContinue"
            ? api.agentLoopContinue(context, baseConfig(), undefined, scriptedStreamFn([answer("x")]))
            : api.runAgentLoopContinue(context, baseConfig(), () => {}, undefined, scriptedStreamFn([answer("x")]));
        if (value instanceof Promise) return await value.then(() => ["resolved"], (error: Error) => ["rejected", error.message]);
        return ["returned"];
      } catch (error) {
        return ["threw", (error as Error).message];
      }
    }
    const emptyContext = (): AgentContext => ({ messages: [] });
    const assistantTail = (): AgentContext => ({ messages: [user("q"), assistantMessage([{ type: "text", text: "x" }])] });

    it("R2: agentLoopContinue throws synchronously for an empty context and an assistant tail", async () => {
      for (const context of [emptyContext, assistantTail]) {
        expect(await refusal("ours", "agentLoopContinue", context())).toEqual(await refusal("reference", "agentLoopContinue", context()));
      }
      expect(await refusal("ours", "agentLoopContinue", emptyContext())).toEqual(["threw", "Cannot continue: no messages in context"]);
      expect(await refusal("ours", "agentLoopContinue", assistantTail())).toEqual(["threw", "Cannot continue from message role: assistant"]);
    });

    // runAgentLoopContinue with an empty context / assistant tail returns a rejected promise with
    // R2's texts, as the reference's (ours threw synchronously, which `.catch(...)` does not see).
    it("R2: runAgentLoopContinue rejects (not throws) for an empty context and an assistant tail", async () => {
      for (const context of [emptyContext, assistantTail]) {
        expect(await refusal("ours", "runAgentLoopContinue", context())).toEqual(await refusal("reference", "runAgentLoopContinue", context()));
      }
    });

    it("R2: continue from a custom-role tail", async () => {
      await same(
        (note) => ({
          prompts: null,
          context: { messages: [user("q"), custom("memo")] },
          config: baseConfig({ ...queueHooks(note), convertToLlm: dropCustom }),
          script: [answer("hi")],
        }),
        "loop",
      );
    });

    it("R2: a system-only context continues (the last message is not assistant)", async () => {
      await same(
        (note) => ({
          prompts: null,
          context: { messages: [system("You help.")] },
          config: baseConfig({ ...queueHooks(note) }),
          script: [answer("hi")],
        }),
        "loop",
      );
    });

    it("Entry points: ours never mutates the caller's context.messages on continue (the reference may; SPEC: intended)", async () => {
      // SPEC (Entry points): the reference's continue variant mutates the caller's array; we copy. Intended.
      const lengths: Record<string, number> = {};
      for (const impl of ["reference", "ours"] as const) {
        const context = { messages: [user("q")] };
        await impls[impl].runAgentLoopContinue(context, baseConfig(), () => {}, undefined, scriptedStreamFn([answer("a")]));
        lengths[impl] = context.messages.length;
      }
      expect(lengths.ours).toBe(1);
      // The reference appended its assistant answer to the caller's array.
      expect(lengths.reference).toBe(2);
    });
  });

  describe("hooks in combination", () => {
    it("R4: prepareNextTurn changes the model and appends messages; prepareRequest sees them", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note, [], [[user("f")]]),
            prepareNextTurn: async (turn) => {
              note(`hook:prepareNextTurn:${turn.toolResults.length}:${turn.newMessages.length}:${turn.context.messages.length}:${turn.message.stopReason}`);
              return n++ === 0 ? { model: otherModel, messages: [custom("memo"), user("added")] } : undefined;
            },
            prepareRequest: async (r) => (note(`hook:prepareRequest:${r.model.id}:${r.thinkingLevel}:${roles(r.context.messages)}`), undefined),
            convertToLlm: dropCustom,
          }),
          script: [calls("a"), answer("one"), answer("two")],
        };
      });
    });

    it("R4: prepareNextTurn returns context, messages and thinkingLevel together", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [user("old")], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note, [[], [user("steer")]]),
            reasoning: "low",
            prepareNextTurn: async (turn) => {
              note(`hook:prepareNextTurn:${roles(turn.context.messages)}`);
              return n++ === 0
                ? { context: { messages: turn.context.messages.slice(1), tools: [tool("a"), tool("b")] }, messages: [user("prep")], thinkingLevel: "high" as const }
                : undefined;
            },
            prepareRequest: async (r) => (note(`hook:prepareRequest:${r.thinkingLevel}:${roles(r.context.messages)}`), undefined),
          }),
          script: [calls("a"), calls("b"), answer("done")],
        };
      });
    });

    it("R4: prepareRequest replaces model and thinkingLevel for this and later requests", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note),
            reasoning: "medium",
            prepareRequest: async (r) => {
              note(`hook:prepareRequest:${r.model.id}:${r.thinkingLevel}`);
              return n++ === 0 ? { model: otherModel, thinkingLevel: "off" as const } : undefined;
            },
          }),
          script: [calls("a"), answer("done")],
        };
      });
    });

    it("R4: prepareRequest replaces the messages (context) of the request", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [user("a"), user("b")], tools: [tool("a")] },
        config: baseConfig({
          ...queueHooks(note),
          prepareRequest: async (r) => {
            note(`hook:prepareRequest:${roles(r.context.messages)}`);
            return { context: { ...r.context, messages: r.context.messages.slice(-1) } };
          },
        }),
        script: [calls("a"), answer("done")],
      }));
    });

    it("R4: prepareRequest removes the tools (tool declaration for the next request)", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: baseConfig({
          ...queueHooks(note),
          prepareRequest: async (r) => (note(`hook:prepareRequest:${(r.context.tools ?? []).length}`), { context: { messages: r.context.messages, tools: [] } }),
        }),
        script: [calls("a"), answer("done")],
      }));
    });

    it("R40: transformContext then convertToLlm, with their inputs, per request", async () => {
      await same((note) => ({
        prompts: [user("hi"), custom("memo")],
        context: { messages: [user("old")], tools: [tool("a")] },
        config: baseConfig({
          ...queueHooks(note),
          transformContext: async (messages, signal) => {
            // Whether a signal is passed is pinned on its own below ("hooks get a signal...").
            void signal;
            note(`hook:transformContext:${roles(messages)}`);
            return messages.slice(1);
          },
          convertToLlm: async (messages) => (note(`hook:convertToLlm:${roles(messages)}`), dropCustom(messages)),
        }),
        script: [calls("a"), answer("done")],
      }));
    });

    it("R40: getApiKey per request, falling back to config.apiKey when it returns undefined", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note),
            apiKey: "fallback",
            getApiKey: async (provider) => (note(`hook:getApiKey:${provider}`), n++ === 0 ? "dynamic" : undefined),
          }),
          script: [calls("a"), calls("a"), answer("done")],
        };
      });
    });

    // getApiKey returning "" falls back to config.apiKey, as the reference's (ours passed "").
    it("R40: getApiKey returning an empty string falls back to config.apiKey", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({ ...queueHooks(note), apiKey: "fallback", getApiKey: () => "" }),
        script: [answer("done")],
      }));
    });

    it("R40: the plain-data stream options each request receives", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: {
          ...baseConfig({ ...queueHooks(note) }),
          reasoning: "high",
          apiKey: "k",
          sessionId: "s1",
          transport: "sse",
          maxTokens: 123,
          temperature: 0.5,
          toolExecution: "sequential",
          custom: { x: 1 },
        } as AgentLoopConfig,
        script: [calls("a"), answer("done")],
      }));
    });

    it("R40: stream options with no reasoning configured", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({ ...queueHooks(note, [], [[user("f")]]) }),
        script: [answer("one"), answer("two")],
      }));
    });

    // DIFFERENCE: with `reasoning: "off"` in the config, the reference's stream function receives
    // `options.reasoning === "off"` (it passes the whole config); ours receives no `reasoning` key
    // (options `{}`). Everything else (events, messages, thinkingLevel "off") is the same.
    it.fails("R40: reasoning 'off' reaches the stream options as 'off'", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({ ...queueHooks(note), reasoning: "off" as never }),
        script: [answer("one")],
      }));
    });

    it("R4: the prepareRequest thinkingLevel is reflected in the options and the final message (R42)", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({ ...queueHooks(note), prepareRequest: async () => ({ thinkingLevel: "minimal" as const }) }),
        script: [answer("one")],
      }));
    });

    it("R8, R10: finishTurn sees the turn; continue with an empty follow-up poll", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note),
            finishTurn: async (turn) => {
              note(`hook:finishTurn:${turn.toolResults.length}:${turn.newMessages.length}:${roles(turn.context.messages)}`);
              return n++ === 1 ? { action: "continue" as const } : undefined;
            },
          }),
          script: [calls("a"), answer("one"), answer("two")],
        };
      });
    });
  });

  describe("tool batches", () => {
    const mixedTools = (note: (entry: string) => void) => [
      tool("ok", async (_id, params) => (note(`exec:ok:${JSON.stringify(params)}`), ok("fine"))),
      tool("num", async (_id, params) => (note(`exec:num:${JSON.stringify(params)}`), ok("num")), { parameters: numberSchema }),
      tool("blocked", async () => (note("exec:blocked"), ok("never"))),
      tool("stop", async () => (note("exec:stop"), ok("never"))),
    ];
    const mixedHooks = (note: (entry: string) => void) => ({
      beforeToolCall: async ({ toolCall: call, args }: { toolCall: ToolCall; args: unknown }) => {
        note(`hook:beforeToolCall:${call.name}:${JSON.stringify(args)}`);
        if (call.name === "blocked") return { block: true, reason: "" };
        if (call.name === "stop") return { block: true, reason: "stopped", terminate: true };
        return undefined;
      },
      afterToolCall: async ({ toolCall: call, isError, result }: { toolCall: ToolCall; isError: boolean; result: { content: unknown } }) => {
        note(`hook:afterToolCall:${call.name}:${isError}:${JSON.stringify(result.content)}`);
        return undefined;
      },
    });
    const mixedScript: Script = [
      {
        content: [
          toolCall("ok", { x: 1 }, "c1"),
          toolCall("missing", {}, "c2"),
          toolCall("num", { n: "nope" }, "c3"),
          toolCall("blocked", {}, "c4"),
          toolCall("stop", {}, "c5"),
          toolCall("num", { n: "4" }, "c6"),
        ],
      },
      answer("done"),
    ];

    it("R24: sequential batch with unknown, invalid, blocked (empty reason), blocked+terminate and ok calls", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: mixedTools(note) },
        config: baseConfig({ ...queueHooks(note), ...mixedHooks(note), toolExecution: "sequential" }),
        script: mixedScript,
      }));
    });

    it("R25: the same mixed batch in parallel", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: mixedTools(note) },
        config: baseConfig({ ...queueHooks(note), ...mixedHooks(note) }),
        script: mixedScript,
      }));
    });

    it("R27: only some results terminate: the batch is answered", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("t", async () => ok("t", { terminate: true })), tool("u")] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("t", "u"), answer("answered")],
      }));
    });

    it("R27: every result terminates through a mix of blocked+terminate and terminating tools", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("t", async () => ok("t", { terminate: true })), tool("b")] },
        config: baseConfig({
          ...queueHooks(note),
          beforeToolCall: async ({ toolCall: call }) => (call.name === "b" ? { block: true, terminate: true } : undefined),
        }),
        script: [calls("t", "b"), answer("never")],
      }));
    });

    it("R27: an unknown tool in an otherwise terminating batch prevents termination", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("t", async () => ok("t", { terminate: true }))] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("t", "missing"), answer("answered")],
      }));
    });

    it("R23, R27: afterToolCall clears terminate on one result and overrides content/isError/details/usage", async () => {
      const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("t", async () => ok("t", { terminate: true, structuredContent: { s: 1 } })),
            tool("u", async () => ok("u", { terminate: true, details: { d: 1 } })),
          ],
        },
        config: baseConfig({
          ...queueHooks(note),
          afterToolCall: async ({ toolCall: call }) =>
            call.name === "t"
              ? { terminate: false, content: [{ type: "text" as const, text: "t2" }] }
              : { isError: true, details: { d: 2 }, usage },
        }),
        script: [calls("t", "u"), answer("answered")],
      }));
    });

    it("R23, R27: afterToolCall sets terminate on every result, with isError false on an error", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("bad", async () => {
              throw new Error("broken");
            }),
            tool("soft", async () => ok("soft", { isError: true })),
          ],
        },
        config: baseConfig({
          ...queueHooks(note),
          afterToolCall: async ({ toolCall: call, isError }) => (note(`hook:afterToolCall:${call.name}:${isError}`), { terminate: true, isError: false }),
        }),
        script: [calls("bad", "soft"), answer("never")],
      }));
    });

    it("R27: a terminating batch with finishTurn continue makes one more request", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("t", async () => ok("t", { terminate: true }))] },
        config: baseConfig({ ...queueHooks(note), finishTurn: async () => (note("hook:finishTurn"), { action: "continue" as const }) }),
        script: [calls("t"), calls("t"), answer("end")],
      }));
    });

    it("R27: a terminating batch with steering continues", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("t", async () => ok("t", { terminate: true }))] },
        config: baseConfig({ ...queueHooks(note, [[], [user("steer")]]) }),
        script: [calls("t"), answer("after steer")],
      }));
    });

    it("R21: prepareArguments rewrites the raw arguments before validation", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("num", async (_id, params) => (note(`exec:num:${JSON.stringify(params)}`), ok("num")), {
              parameters: numberSchema,
              prepareArguments: (raw) => (note(`prepare:${JSON.stringify(raw)}`), { n: String((raw as { count?: unknown }).count ?? "x") }),
            }),
          ],
        },
        config: baseConfig({
          ...queueHooks(note),
          beforeToolCall: async ({ args, toolCall: call }) => (note(`hook:beforeToolCall:${JSON.stringify(args)}:${JSON.stringify(call.arguments)}`), undefined),
        }),
        script: [{ content: [toolCall("num", { count: 3 }, "c1"), toolCall("num", {}, "c2")] }, answer("done")],
      }));
    });

    it("R21: prepareArguments that throws", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("p", async () => ok("never"), {
              prepareArguments: () => {
                throw new Error("cannot prepare");
              },
            }),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("p"), answer("done")],
      }));
    });

    it("R20: executionMode 'parallel' on a tool does not override toolExecution 'sequential'", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("slow", async () => (note("exec:slow:start"), await wait(15), note("exec:slow:end"), ok("slow")), { executionMode: "parallel" }),
            tool("fast", async () => (note("exec:fast"), ok("fast")), { executionMode: "parallel" }),
          ],
        },
        config: baseConfig({ ...queueHooks(note), toolExecution: "sequential" }),
        script: [calls("slow", "fast"), answer("done")],
      }));
    });

    it("R20: a sequential tool that is not called does not make the batch sequential", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("slow", async () => (note("exec:slow:start"), await wait(15), note("exec:slow:end"), ok("slow"))),
            tool("fast", async () => (note("exec:fast"), ok("fast"))),
            tool("seq", async () => ok("seq"), { executionMode: "sequential" }),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("slow", "fast"), answer("done")],
      }));
    });

    it("R20: a sequential tool whose call is unknown-named elsewhere; a call to it among immediate errors", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("slow", async () => (note("exec:slow:start"), await wait(15), note("exec:slow:end"), ok("slow"))),
            tool("seq", async () => (note("exec:seq"), ok("seq")), { executionMode: "sequential", parameters: numberSchema }),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        // The sequential tool's call fails validation: is the batch still sequential?
        script: [{ content: [toolCall("slow", {}, "c1"), toolCall("seq", { n: "x" }, "c2"), toolCall("slow", {}, "c3")] }, answer("done")],
      }));
    });

    it("R22, R25: tool_execution_update ordering across parallel tools", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("a", async (_id, _p, _s, onUpdate) => {
              onUpdate?.(ok("a1"));
              await wait(5);
              onUpdate?.(ok("a2"));
              await wait(20);
              return ok("a");
            }),
            tool("b", async (_id, _p, _s, onUpdate) => {
              await wait(10);
              onUpdate?.(ok("b1"));
              return ok("b");
            }),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("a", "b"), answer("done")],
      }));
    });

    it("R22: updates after execute settled are dropped (sequential)", async () => {
      await same((note) => {
        let late: ((r: ReturnType<typeof ok>) => void) | undefined;
        return {
          prompts: [user("hi")],
          context: {
            messages: [],
            tools: [
              tool("a", async (_id, _p, _s, onUpdate) => ((late = onUpdate), onUpdate?.(ok("a1")), ok("a"))),
              tool("b", async () => (late?.(ok("late")), ok("b"))),
            ],
          },
          config: baseConfig({ ...queueHooks(note), toolExecution: "sequential", afterToolCall: async () => (late?.(ok("late2")), undefined) }),
          script: [calls("a", "b"), answer("done")],
        };
      });
    });

    it("R22: a tool returning a non-standard result (no details, extra fields, image content)", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("odd", async () => ({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], extra: 1 }) as never),
            tool("empty", async () => ({ content: [] }) as never),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("odd", "empty"), answer("done")],
      }));
    });

    it("R22: a tool throwing a string", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("s", async () => {
              throw "plain string";
            }),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("s"), answer("done")],
      }));
    });

    // DIFFERENCE: a tool that throws a plain object `{code: 42}`: the reference's error result text
    // is String(value), "[object Object]"; ours is its JSON, '{"code":42}'. SPEC R22 only says "the
    // error's message"; the README does not record this choice.
    it.fails("R22: a tool throwing a plain object", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: {
          messages: [],
          tools: [
            tool("o", async () => {
              throw { code: 42 };
            }),
          ],
        },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("o"), answer("done")],
      }));
    });

    it("R21: argumentsError alongside valid calls, parallel", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: baseConfig({ ...queueHooks(note), beforeToolCall: async ({ toolCall: call }) => (note(`hook:before:${call.id}`), undefined) }),
        script: [{ content: [toolCall("a", {}, "c1"), { type: "toolCall", name: "a", id: "c2", argumentsError: "Unexpected token" }] }, answer("done")],
      }));
    });

    // DIFFERENCE: two tools named "a" in context.tools: the reference's injected system message
    // declares both (toolsAdded [a, a], "system( +a,a)"); ours declares one ("system( +a)"). Both
    // execute the first. SPEC R30 keys declarations by name, which supports ours.
    it.fails("R30: duplicate tool names in context.tools", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a", async () => ok("first")), tool("a", async () => ok("second"))] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("a"), answer("done")],
      }));
    });
  });

  describe("tool_execution_end.result.isError and hook signals", () => {
    const isErrorScenario = (mode: "parallel" | "sequential"): Scenario => (note) => ({
      prompts: [user("hi")],
      context: {
        messages: [],
        tools: [
          tool("boom", async () => {
            throw new Error("broken");
          }),
          tool("soft", async () => ok("soft", { isError: true })),
          tool("fine"),
          tool("blocked"),
        ],
      },
      config: baseConfig({
        ...queueHooks(note),
        toolExecution: mode,
        beforeToolCall: async ({ toolCall: call }) => (call.name === "blocked" ? { block: true } : undefined),
        afterToolCall: async ({ toolCall: call }) => (call.name === "soft" ? { isError: false } : call.name === "fine" ? { isError: true } : undefined),
      }),
      script: [calls("missing", "boom", "soft", "fine", "blocked"), answer("done")],
    });

    it("R23: the event-level isError and the messages agree (parallel and sequential)", async () => {
      for (const mode of ["parallel", "sequential"] as const) await same(isErrorScenario(mode));
    });

    // `tool_execution_end.result.isError`, as the reference: immediate errors (unknown tool,
    // blocked) and a thrown tool have no `result.isError`; a tool's own `isError: true` stays in
    // `result` even when afterToolCall sets `isError: false`; afterToolCall's `isError: true` is not
    // written into `result`. (Ours wrote the final flag into `result.isError` every time.)
    it("R23: tool_execution_end.result.isError is the tool's own field, not the final flag", async () => {
      for (const mode of ["parallel", "sequential"] as const) {
        const { reference, ours } = await compare(isErrorScenario(mode));
        expect(ours.toolEnds).toEqual(reference.toolEnds);
      }
    });

    /** What each hook and the tool get as their signal: none, the caller's own, or another one. */
    const signalScenario = (callerSignal: AbortSignal | undefined): Scenario => (note) => {
      const seen = (name: string, signal: unknown) =>
        note(`signal:${name}:${signal === undefined ? "none" : signal === callerSignal ? "caller's" : signal instanceof AbortSignal ? "other" : typeof signal}`);
      return {
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a", async (_id, _p, signal) => (seen("execute", signal), ok("a")))] },
        signal: callerSignal,
        config: baseConfig({
          ...queueHooks(note),
          transformContext: async (messages, signal) => (seen("transformContext", signal), messages),
          prepareRequest: async (_r, signal) => (seen("prepareRequest", signal), undefined),
          beforeToolCall: async (_c, signal) => (seen("beforeToolCall", signal), undefined),
          afterToolCall: async (_c, signal) => (seen("afterToolCall", signal), undefined),
          finishTurn: async (_t, signal) => (seen("finishTurn", signal), undefined),
        }),
        script: [calls("a"), answer("done")],
      };
    };

    // DIFFERENCE: hooks' signal argument when the caller passes no signal. Reference:
    // transformContext, prepareRequest, beforeToolCall, afterToolCall, finishTurn and the tool's
    // execute all get `undefined`; ours passes an AbortSignal of its own to each ("other"). (The
    // stream function gets no signal in the reference either; ours passes one — see requestSignals.)
    it.fails("R40: with no caller signal, hooks, tools and the stream function get no signal", async () => {
      const { reference, ours } = await compare(signalScenario(undefined));
      expect(reference.requestSignals).toEqual(["none", "none"]);
      expect(ours.requestSignals).toEqual(["other", "other"]);
      expect(ours.notes).toEqual(reference.notes);
    });

    // DIFFERENCE: with a caller signal, the reference hands that very AbortSignal to every hook,
    // the tool's execute and the stream function; ours hands each a different AbortSignal (aborted
    // when the caller's aborts). For execute this is intended (SPEC R65: "Each call has its own
    // signal"); for the hooks and the stream function SPEC says nothing. Pinned below, then the
    // reference comparison fails.
    it.fails("R40: with a caller signal, hooks and the stream function get the caller's own signal", async () => {
      const controller = new AbortController();
      const { reference, ours } = await compare(signalScenario(controller.signal));
      expect(reference.notes.filter((n) => n.startsWith("signal:")).every((n) => n.endsWith(":caller's"))).toBe(true);
      expect(reference.requestSignals).toEqual(["caller's", "caller's"]);
      expect(ours.notes.filter((n) => n.startsWith("signal:")).every((n) => n.endsWith(":other"))).toBe(true);
      expect(ours.requestSignals).toEqual(["other", "other"]);
      expect(ours.notes.filter((n) => !n.includes(":execute:"))).toEqual(reference.notes.filter((n) => !n.includes(":execute:")));
    });

  });

  describe("steering and follow-ups", () => {
    it("R3, R9: several steering messages with custom roles at different polls", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: baseConfig({
          ...queueHooks(note, [[custom("n0")], [], [user("s1"), custom("n1"), user("s2")]]),
          convertToLlm: dropCustom,
        }),
        script: [calls("a"), calls("a"), answer("done")],
      }));
    });

    it("R10: follow-ups arrive after an empty poll; steering and follow-ups both non-empty", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({ ...queueHooks(note, [[], [], [user("s")]], [[user("f1"), custom("fn")], [], [user("late")]]), convertToLlm: dropCustom }),
        script: [answer("one"), answer("two"), answer("three"), answer("four")],
      }));
    });

    it("R4: prepareNextTurn messages plus pending steering in the same turn", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note, [[], [user("steer")]]),
            prepareNextTurn: async () => (note("hook:prepareNextTurn"), n++ === 0 ? { messages: [user("prep")] } : undefined),
          }),
          script: [calls("a"), answer("done")],
        };
      });
    });

    it("R4: prepareNextTurn messages when no tool results (follow-up turn)", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [] },
          config: baseConfig({
            ...queueHooks(note, [], [[user("f")]]),
            prepareNextTurn: async () => (note("hook:prepareNextTurn"), n++ === 0 ? { messages: [system("New rules.")] } : undefined),
          }),
          script: [answer("one"), answer("two")],
        };
      });
    });

    it("R3: steering returns a system message with tools at run start (R30)", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: baseConfig({ ...queueHooks(note, [[system("Steer rules."), user("s")]]) }),
        script: [answer("done")],
      }));
    });
  });

  describe("abort", () => {
    it("R29: an already-aborted signal before the run starts", async () => {
      await same((note) => {
        const controller = new AbortController();
        controller.abort();
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          signal: controller.signal,
          config: baseConfig({ ...queueHooks(note), finishTurn: async () => (note("hook:finishTurn"), undefined) }),
          script: [calls("a"), answer("never")],
        };
      });
    });

    it("R29: an already-aborted signal, continue entry, agentLoop form", async () => {
      await same(
        (note) => {
          const controller = new AbortController();
          controller.abort();
          return {
            prompts: null,
            context: { messages: [user("q")] },
            signal: controller.signal,
            config: baseConfig({ ...queueHooks(note) }),
            script: [answer("never")],
          };
        },
        "loop",
      );
    });

    it("R6: abort during the stream (at the first text delta)", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [] },
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") controller.abort();
          },
          config: baseConfig({ ...queueHooks(note), finishTurn: async () => (note("hook:finishTurn"), undefined) }),
          // delayMs keeps the scripted producer from running ahead of the reference's lazy consumer.
          script: [{ content: [text("one two three four")], delayMs: 2 }],
        };
      });
    });

    it("R6: abort during the stream of a tool call (at toolcall_start)", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a", async () => (note("exec:a"), ok("a")))] },
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === "message_update" && e.assistantMessageEvent.type === "toolcall_start") controller.abort();
          },
          config: baseConfig({ ...queueHooks(note) }),
          script: [{ content: [text("x"), toolCall("a", {}, "c1")], delayMs: 2 }, answer("never")],
        };
      });
    });

    it("R29: abort during a parallel tool: running tools see it, the next request is aborted", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: {
            messages: [],
            tools: [
              tool("slow", async (_id, _p, signal) => {
                await new Promise<void>((resolve) => {
                  if (signal?.aborted) return resolve();
                  signal?.addEventListener("abort", () => resolve(), { once: true });
                });
                note("exec:slow:saw abort");
                return ok("slow aborted");
              }),
              tool("trigger", async () => (note("exec:trigger"), controller.abort(), ok("trigger"))),
            ],
          },
          signal: controller.signal,
          config: baseConfig({
            ...queueHooks(note),
            finishTurn: async () => (note("hook:finishTurn"), undefined),
            prepareNextTurn: async () => (note("hook:prepareNextTurn"), undefined),
            afterToolCall: async ({ toolCall: call }, signal) => (note(`hook:afterToolCall:${call.name}:${signal?.aborted}`), undefined),
          }),
          script: [calls("slow", "trigger"), answer("never")],
        };
      });
    });

    it("R29: abort between turns (in finishTurn)", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          signal: controller.signal,
          config: baseConfig({
            ...queueHooks(note),
            finishTurn: async () => (note("hook:finishTurn"), controller.abort(), undefined),
            prepareNextTurn: async () => (note("hook:prepareNextTurn"), undefined),
          }),
          script: [calls("a"), answer("never")],
        };
      });
    });

    it("R29: abort in finishTurn after a plain answer (no more requests due)", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [] },
          signal: controller.signal,
          config: baseConfig({ ...queueHooks(note, [], [[user("f")]]), finishTurn: async () => (note("hook:finishTurn"), controller.abort(), undefined) }),
          script: [answer("one"), answer("never")],
        };
      });
    });

    it("R29: abort while transformContext awaits", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [] },
          signal: controller.signal,
          config: baseConfig({
            ...queueHooks(note),
            transformContext: async (messages, signal) => {
              note("hook:transformContext");
              controller.abort();
              await wait(2);
              note(`hook:transformContext:after:${signal?.aborted}`);
              return messages;
            },
          }),
          script: [answer("never")],
        };
      });
    });

    it("R29: abort while prepareNextTurn awaits", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          signal: controller.signal,
          config: baseConfig({
            ...queueHooks(note),
            prepareNextTurn: async () => {
              note("hook:prepareNextTurn");
              controller.abort();
              await wait(2);
              return { messages: [user("prep")] };
            },
            prepareRequest: async (_r, signal) => (note(`hook:prepareRequest:${signal?.aborted}`), undefined),
          }),
          script: [calls("a"), answer("never")],
        };
      });
    });

    it("R29: abort while beforeToolCall awaits, sequential", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a", async () => (note("exec:a"), ok("a"))), tool("b", async () => (note("exec:b"), ok("b")))] },
          signal: controller.signal,
          config: baseConfig({
            ...queueHooks(note),
            toolExecution: "sequential",
            beforeToolCall: async ({ toolCall: call }) => {
              note(`hook:beforeToolCall:${call.name}`);
              if (call.name === "a") {
                controller.abort();
                await wait(2);
              }
              return undefined;
            },
          }),
          script: [calls("a", "b"), answer("never")],
        };
      });
    });

    it("R29: abort while getSteeringMessages awaits at run start", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: { messages: [] },
          signal: controller.signal,
          config: baseConfig({
            getSteeringMessages: async () => (note("hook:getSteeringMessages"), controller.abort(), await wait(2), [user("s")]),
            getFollowUpMessages: async () => (note("hook:getFollowUpMessages"), []),
          }),
          script: [answer("never")],
        };
      });
    });
  });

  describe("more combinations", () => {
    it("R25: parallel preflight and execution interleaving (exec notes, sync onUpdate)", async () => {
      await same((note) => {
        const t = (name: string, ms: number) =>
          tool(name, async (_id, _p, _s, onUpdate) => {
            note(`exec:${name}:start`);
            onUpdate?.(ok(`${name} sync update`));
            await wait(ms);
            note(`exec:${name}:end`);
            return ok(name);
          });
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [t("a", 12), t("b", 2), t("c", 6)] },
          config: baseConfig({
            ...queueHooks(note),
            beforeToolCall: async ({ toolCall: call }) => (note(`hook:beforeToolCall:${call.name}`), undefined),
            afterToolCall: async ({ toolCall: call }) => (note(`hook:afterToolCall:${call.name}`), undefined),
          }),
          script: [calls("a", "b", "c"), answer("done")],
        };
      });
    });

    for (const mode of ["parallel", "sequential"] as const) {
      it(`R21, R23: beforeToolCall and afterToolCall that throw, ${mode} (not R56: tool hooks)`, async () => {
        await same((note) => ({
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a", async () => (note("exec:a"), ok("a"))), tool("b", async () => (note("exec:b"), ok("b")))] },
          config: baseConfig({
            ...queueHooks(note),
            ...(mode === "sequential" ? { toolExecution: "sequential" as const } : {}),
            beforeToolCall: async ({ toolCall: call }) => {
              if (call.name === "a") throw new Error("before failed");
              return undefined;
            },
            afterToolCall: async ({ toolCall: call }) => {
              if (call.name === "b") throw new Error("after failed");
              return undefined;
            },
          }),
          script: [calls("a", "b"), answer("done")],
        }));
      });
    }

    it("R4, R40: prepareNextTurn switches to a model of another provider; getApiKey sees the provider", async () => {
      await same((note) => {
        let n = 0;
        const foreign: Model = { ...scriptedModel, id: "foreign", provider: "elsewhere", api: "elsewhere-api" };
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          config: baseConfig({
            ...queueHooks(note),
            getApiKey: (provider) => (note(`hook:getApiKey:${provider}`), `key-${provider}`),
            prepareNextTurn: async () => (n++ === 0 ? { model: foreign } : undefined),
          }),
          script: [calls("a"), answer("done")],
        };
      });
    });

    it("R4, R30: prepareNextTurn removes a tool; the model calls it anyway", async () => {
      await same((note) => {
        let n = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a"), tool("b")] },
          config: baseConfig({
            ...queueHooks(note),
            prepareNextTurn: async (turn) => (n++ === 0 ? { context: { messages: turn.context.messages, tools: [tool("b")] } } : undefined),
          }),
          script: [calls("a"), calls("a", "b"), answer("done")],
        };
      });
    });

    it("R30: a follow-up system message that adds tool declarations the context does not have", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: baseConfig({
          ...queueHooks(note, [], [[system("Also x.", { toolsAdded: [{ name: "x", description: "x", parameters: { type: "object", properties: {} } }] }), user("f")]]),
        }),
        script: [answer("one"), calls("x"), answer("done")],
      }));
    });

    it("R1, R30: prompts that include a system message already declaring the tools", async () => {
      const a = tool("a");
      await same((note) => ({
        prompts: [system("Rules.", { toolsAdded: [{ name: a.name, description: a.description, parameters: a.parameters }] }), user("hi")],
        context: { messages: [], tools: [a] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("a"), answer("done")],
      }));
    });

    it("R1: several prompts with a custom role between them", async () => {
      await same(
        (note) => ({
          prompts: [user("one"), custom("memo"), user("two")],
          context: { messages: [user("before")] },
          config: baseConfig({ ...queueHooks(note), convertToLlm: dropCustom }),
          script: [answer("done")],
        }),
        "loop",
      );
    });

    it("R3, R29: an already-aborted signal with steering at run start", async () => {
      await same((note) => {
        const controller = new AbortController();
        controller.abort();
        return {
          prompts: [user("hi")],
          context: { messages: [] },
          signal: controller.signal,
          config: baseConfig({ ...queueHooks(note, [[user("steer")]], [[user("f")]]), prepareRequest: async () => (note("hook:prepareRequest"), undefined) }),
          script: [answer("never")],
        };
      });
    });

    it("R29: abort in afterToolCall of a parallel batch while another tool runs", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: {
            messages: [],
            tools: [
              tool("fast", async () => ok("fast")),
              tool("slow", async (_id, _p, signal) => {
                await wait(10);
                note(`exec:slow:aborted=${signal?.aborted}`);
                return ok("slow");
              }),
            ],
          },
          signal: controller.signal,
          config: baseConfig({
            ...queueHooks(note),
            afterToolCall: async ({ toolCall: call }) => {
              note(`hook:afterToolCall:${call.name}`);
              if (call.name === "fast") controller.abort();
              return undefined;
            },
          }),
          script: [calls("fast", "slow"), answer("never")],
        };
      });
    });

    it("R29: abort during the second request's stream", async () => {
      await same((note) => {
        const controller = new AbortController();
        let requests = 0;
        return {
          prompts: [user("hi")],
          context: { messages: [], tools: [tool("a")] },
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === "message_start" && (e.message as { role: string }).role === "assistant" && ++requests === 2) controller.abort();
          },
          config: baseConfig({ ...queueHooks(note, [], [[user("f")]]), finishTurn: async () => (note("hook:finishTurn"), undefined) }),
          script: [calls("a"), { content: [text("second answer")], delayMs: 2 }],
        };
      });
    });

    it("R29: abort while a sequential tool runs, later calls get Operation aborted, steering still polled", async () => {
      await same((note) => {
        const controller = new AbortController();
        return {
          prompts: [user("hi")],
          context: {
            messages: [],
            tools: [
              tool("first", async () => (note("exec:first"), controller.abort(), ok("first"))),
              tool("second", async () => (note("exec:second"), ok("second"))),
              tool("third", async () => (note("exec:third"), ok("third"))),
            ],
          },
          signal: controller.signal,
          config: baseConfig({ ...queueHooks(note, [[], [user("steer")]]), toolExecution: "sequential" }),
          script: [calls("first", "second", "third"), answer("never")],
        };
      });
    });

    it("R10, R11: finishTurn continue after a follow-up turn does not add a request", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({
          ...queueHooks(note, [], [[user("f")]]),
          finishTurn: async () => (note("hook:finishTurn"), { action: "continue" as const }),
        }),
        script: [answer("one"), answer("two"), answer("three"), answer("four")],
      }));
    });

    it("R8: finishTurn end with pending steering and follow-ups", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("a")] },
        config: baseConfig({
          ...queueHooks(note, [[], [user("s")]], [[user("f")]]),
          finishTurn: async () => (note("hook:finishTurn"), { action: "end" as const }),
        }),
        script: [calls("a"), answer("never")],
      }));
    });

    it("R21: prepareArguments returning a non-object", async () => {
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("p", async (_id, params) => ok(JSON.stringify(params)), { parameters: numberSchema, prepareArguments: () => 5 as never })] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [calls("p"), answer("done")],
      }));
    });

    it("R21: validation with coercions and null for an optional property", async () => {
      const schema = {
        type: "object",
        properties: { n: { type: "number" }, flag: { type: "boolean" }, s: { type: "string" }, list: { type: "array", items: { type: "string" } }, opt: { type: "string" } },
        required: ["n"],
      };
      await same((note) => ({
        prompts: [user("hi")],
        context: { messages: [], tools: [tool("v", async (_id, params) => ok(JSON.stringify(params)), { parameters: schema })] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [{ content: [toolCall("v", { n: "2.5", flag: "true", s: 7, list: "one", opt: null }, "c1")] }, answer("done")],
      }));
    });
  });

  describe("hand-made streams", () => {
    const runWith = async (impl: Impl, streamFn: StreamFn) => {
      const log: unknown[] = [];
      const out = await impls[impl].runAgentLoop([user("hi")], { messages: [] }, baseConfig(), (e) => void log.push(projectEvent(e)), undefined, streamFn);
      return { log, out: norm(out) };
    };
    const handmade = (events: unknown[], final: unknown): StreamFn =>
      (() => ({
        async *[Symbol.asyncIterator]() {
          for (const e of events) yield e;
        },
        result: async () => final,
      })) as never;

    // DIFFERENCE (only for a stream whose `done.message` and `result()` disagree): the reference's
    // message_end, turn_end, agent_end and returned message are result()'s ("from result"); ours
    // are done.message ("from done"). SPEC R41 ("done/error replace it with the final message") is
    // silent on which; the StreamFn contract makes them one message.
    it.fails("R41: done carries a message different from result(): result() wins in the reference", async () => {
      const a = assistantMessage([{ type: "text", text: "from done" }]);
      const b = assistantMessage([{ type: "text", text: "from result" }]);
      const fn = () => handmade([{ type: "start", partial: a }, { type: "done", reason: "stop", message: a }], b);
      expect(await runWith("ours", fn())).toEqual(await runWith("reference", fn()));
    });

    // DIFFERENCE (same cause): an `error` event whose message differs from result(): the
    // reference keeps result()'s (errorMessage "from result"), ours the event's ("from error event").
    it.fails("R41: an error event whose message differs from result(): result() wins in the reference", async () => {
      const a = { ...assistantMessage([], "error"), errorMessage: "from error event" };
      const b = { ...assistantMessage([], "error"), errorMessage: "from result" };
      const fn = () => handmade([{ type: "start", partial: assistantMessage([]) }, { type: "error", reason: "error", error: a }], b);
      const [r, o] = [await runWith("reference", fn()), await runWith("ours", fn())];
      expect((r.out as { errorMessage?: string }[])[1]?.errorMessage).toBe("from result");
      expect((o.out as { errorMessage?: string }[])[1]?.errorMessage).toBe("from error event");
      expect(o).toEqual(r);
    });

    it("R41: an error event without start", async () => {
      const e = { ...assistantMessage([], "error"), errorMessage: "refused" };
      const fn = () => handmade([{ type: "error", reason: "error", error: e }], e);
      expect(await runWith("ours", fn())).toEqual(await runWith("reference", fn()));
    });

    it("R41: no events at all: result() is used", async () => {
      const m = assistantMessage([{ type: "text", text: "only result" }]);
      const fn = () => handmade([], m);
      expect(await runWith("ours", fn())).toEqual(await runWith("reference", fn()));
    });

    it("R41: a start, then no terminal event: result() closes the message", async () => {
      const p = assistantMessage([]);
      const m = assistantMessage([{ type: "text", text: "closed by result" }]);
      const fn = () => handmade([{ type: "start", partial: p }], m);
      expect(await runWith("ours", fn())).toEqual(await runWith("reference", fn()));
    });

    it("R41: a done event with stopReason toolUse but a message with tool calls", async () => {
      const m = assistantMessage([{ type: "toolCall", id: "c1", name: "missing", arguments: {} } as never], "toolUse");
      const fn = () => handmade([{ type: "start", partial: m }, { type: "done", reason: "toolUse", message: m }], m);
      const script = [answer("after")];
      let i = 0;
      const both: StreamFn = (model, ctx, opts) => (i++ === 0 ? fn()(model, ctx, opts) : scriptedStreamFn(script)(model, ctx, opts));
      const r = await runWith("reference", both);
      i = 0;
      const o = await runWith("ours", both);
      expect(o).toEqual(r);
    });
  });

  describe("stream edge cases", () => {
    const edge = (script: Script, extra: Partial<AgentLoopConfig> = {}, tools: AgentTool[] = [tool("a")]): Scenario => (note) => ({
      prompts: [user("hi")],
      context: { messages: [], tools },
      config: baseConfig({ ...queueHooks(note, [], [[user("f")]]), finishTurn: async () => (note("hook:finishTurn"), undefined), ...extra }),
      script,
    });

    it("R6: error stop reason with no content", async () => {
      await same(edge([{ stopReason: "error", errorMessage: "boom" }]));
    });

    it("R6: aborted stop reason (scripted) without an aborted signal", async () => {
      await same(edge([{ content: [text("part")], stopReason: "aborted", errorMessage: "gone" }]));
    });

    it("R6: scripted failure kind (overloaded) is not retried by default", async () => {
      await same(edge([{ failure: "overloaded" }, answer("never")]));
    });

    it("R6: failure after content", async () => {
      await same(edge([{ failure: "connection", afterContent: true, content: [text("Half")] }, answer("never")]));
    });

    it("R6: setup error on the second request", async () => {
      await same(edge([calls("a"), { setupError: "auth failed" }]));
    });

    it("R28: length stop reason with text only continues normally", async () => {
      await same(edge([{ content: [text("cut")], stopReason: "length" }, answer("f answer")]));
    });

    it("R28: length with only a tool call, then the follow-up", async () => {
      await same(edge([{ content: [toolCall("a", {}, "c1")], stopReason: "length" }, answer("after")]));
    });

    it("R5: empty content", async () => {
      await same(edge([{ content: [] }, { content: [] }]));
    });

    it("R41: thinking blocks, multiple text blocks, chunked", async () => {
      await same(edge([{ content: [thinking("let me think", "sig1"), text("one "), text("two"), thinking("again")], chunkSize: 3 }, answer("x")]));
    });

    it("R41: redacted thinking then a tool call", async () => {
      await same(edge([{ content: [{ type: "thinking", thinking: "", signature: "opaque", redacted: true }, toolCall("a", { q: 1 }, "c1")] }, answer("done"), answer("f")]));
    });

    it("R41: tool call with thinking before it and text after it", async () => {
      await same(edge([{ content: [thinking("plan"), toolCall("a", { q: 1 }, "c1"), text("after")] }, answer("done"), answer("f")]));
    });

    it("R6: toolUse stopReason without any tool call", async () => {
      await same(edge([{ content: [text("no calls")], stopReason: "toolUse" }, answer("f")]));
    });

    it("R7: stop stopReason with a tool call (tools still run)", async () => {
      await same(edge([{ content: [toolCall("a", {}, "c1")], stopReason: "stop" }, answer("done"), answer("f")]));
    });

    it("R6: deferred stopReason (pi-ai's: the response continues behind a provider handle) ends the turn as stop does", async () => {
      await same(edge([{ content: [], stopReason: "deferred" }, answer("f")]));
    });

    it("R7: deferred stopReason with a tool call (tools still run)", async () => {
      await same(edge([{ content: [text("later"), toolCall("a", {}, "c1")], stopReason: "deferred" }, answer("done"), answer("f")]));
    });

    it("R41: a hand-made stream with content events before start and no terminal event", async () => {
      const final = assistantMessage([{ type: "text", text: "final" }]);
      const partial = assistantMessage([{ type: "text", text: "p" }]);
      const scenario: Scenario = (note) => ({
        prompts: [user("hi")],
        context: { messages: [] },
        config: baseConfig({ ...queueHooks(note) }),
        script: [],
      });
      const handmade: StreamFn = () => ({
        async *[Symbol.asyncIterator]() {
          yield { type: "text_start", contentIndex: 0, partial } as never;
          yield { type: "start", partial } as never;
          yield { type: "text_delta", contentIndex: 0, delta: "p", partial } as never;
        },
        result: async () => final,
      }) as never;
      const runWith = async (impl: Impl) => {
        const log: unknown[] = [];
        const out = await impls[impl].runAgentLoop([user("hi")], { messages: [] }, scenario(() => {}).config, (e) => void log.push(norm(e)), undefined, handmade);
        return { log, out: norm(out) };
      };
      const [r, o] = [await runWith("reference"), await runWith("ours")];
      expect(o).toEqual(r);
    });
  });

  describe("runToolCall", () => {
    const call = (name: string, args: JsonObject = {}): ToolCall => ({ type: "toolCall", id: "c1", name, arguments: args });
    const base = { assistantMessage: assistantMessage([], "toolUse"), context: { messages: [] } };
    /** The outcome, normalized; `result.isError` is dropped unless `raw` (it differs, see below). */
    const outcome = async (impl: Impl, c: ToolCall, options: Record<string, unknown>, raw = false) => {
      const updates: unknown[] = [];
      const o = (await impls[impl].runToolCall(c, { ...base, onUpdate: (u: unknown) => void updates.push(norm(u)), ...options } as never)) as unknown as {
        result: Record<string, unknown>;
      };
      const { isError: _isError, ...result } = o.result;
      return { ...(norm(raw ? o : { ...o, result }) as object), updates };
    };
    const both = async (c: () => ToolCall, options: () => Record<string, unknown>, raw = false) => {
      const r = await outcome("reference", c(), options(), raw);
      const o = await outcome("ours", c(), options(), raw);
      return { r, o };
    };

    // An immediate or thrown error outcome: `outcome.result` has no `isError` field
    // ({content: [{type: "text", text: "Tool missing not found"}], details: {}}, with outcome.isError
    // true), as the reference's (ours had set `outcome.result.isError: true` too).
    it("R21: outcome.result carries no isError of its own (unknown tool)", async () => {
      const { r, o } = await both(() => call("missing"), () => ({ tools: [counter()] }), true);
      expect(o).toEqual(r);
    });
    const counter = () => tool("counter", async (_id, p, _s, onUpdate) => (onUpdate?.(ok("half")), ok(`n=${(p as { n: number }).n}`)), { parameters: numberSchema });

    it("R21: unknown tool", async () => {
      const { r, o } = await both(() => call("missing"), () => ({ tools: [counter()] }));
      expect(o).toEqual(r);
    });

    it("R21: invalid arguments (full validation text)", async () => {
      const { r, o } = await both(() => call("counter", { n: "many", extra: [1] }), () => ({ tools: [counter()] }));
      expect(o).toEqual(r);
    });

    it("R21: argumentsError", async () => {
      const { r, o } = await both(() => ({ ...call("counter"), argumentsError: "Unexpected end" }) as ToolCall, () => ({ tools: [counter()] }));
      expect(o).toEqual(r);
    });

    it("R21: blocked with and without a reason, and with terminate", async () => {
      for (const result of [{ block: true }, { block: true, reason: "nope" }, { block: true, reason: "t", terminate: true }, { block: false, reason: "ignored" }]) {
        const { r, o } = await both(() => call("counter", { n: 1 }), () => ({ tools: [counter()], beforeToolCall: async () => result }));
        expect(o).toEqual(r);
      }
    });

    it("R22: a tool that throws", async () => {
      const broken = () => tool("broken", async () => {
        throw new Error("disk full");
      });
      const { r, o } = await both(() => call("broken"), () => ({ tools: [broken()] }));
      expect(o).toEqual(r);
    });

    it("R22: a tool returning a non-standard result", async () => {
      const odd = () => tool("odd", async () => ({ content: [{ type: "text", text: "x" }], extra: true, isError: true, terminate: true }) as never);
      const { r, o } = await both(() => call("odd"), () => ({ tools: [odd()] }));
      expect(o).toEqual(r);
    });

    it("R21: an aborted signal is checked first, before the hooks", async () => {
      const seen: string[] = [];
      const controller = new AbortController();
      controller.abort();
      const { r, o } = await both(
        () => call("counter", { n: 1 }),
        () => ({ tools: [counter()], signal: controller.signal, beforeToolCall: async () => (seen.push("before"), undefined) }),
      );
      expect(o).toEqual(r);
      expect(seen).toEqual([]);
    });

    it("R22, R23: coerced args, updates, afterToolCall overrides", async () => {
      const { r, o } = await both(
        () => call("counter", { n: "3" }),
        () => ({
          tools: [counter()],
          beforeToolCall: async ({ args }: { args: unknown }) => (args as { n: unknown }).n === 3 ? undefined : { block: true, reason: "not coerced" },
          afterToolCall: async () => ({ details: { after: true }, terminate: true }),
        }),
      );
      expect(o).toEqual(r);
    });

    it("R21, R23: runToolCall with throwing beforeToolCall, afterToolCall and prepareArguments", async () => {
      const cases: [() => AgentTool, Record<string, unknown>][] = [
        [counter, { beforeToolCall: async () => { throw new Error("before broke"); } }],
        [counter, { afterToolCall: async () => { throw new Error("after broke"); } }],
        [() => tool("p", async () => ok("never"), { prepareArguments: () => { throw new Error("prep broke"); } }), {}],
      ];
      for (const [make, hooks] of cases) {
        const name = make().name;
        const { r, o } = await both(() => call(name, { n: 1 }), () => ({ tools: [make()], ...hooks }));
        expect(o).toEqual(r);
      }
    });

    it("R22: runToolCall: a tool throwing a string, no tools at all, updates after settling", async () => {
      let late: ((u: unknown) => void) | undefined;
      const thrower = () => tool("t", async () => { throw "plain"; });
      const leaky = () => tool("l", async (_id, _p, _s, onUpdate) => ((late = onUpdate as never), onUpdate?.(ok("u1")), ok("l")));
      for (const [c, opts] of [
        [() => call("t"), () => ({ tools: [thrower()] })],
        [() => call("t"), () => ({ tools: [] })],
        [() => call("l"), () => ({ tools: [leaky()], afterToolCall: async () => (late?.(ok("late")), undefined) })],
      ] as [() => ToolCall, () => Record<string, unknown>][]) {
        const { r, o } = await both(c, opts);
        late?.(ok("later still"));
        expect(o).toEqual(r);
      }
    });

    it("R21: prepareArguments in runToolCall", async () => {
      const prepared = () => tool("p", async (_id, params) => ok(JSON.stringify(params)), { parameters: numberSchema, prepareArguments: (raw) => ({ n: (raw as { v: number }).v }) });
      const { r, o } = await both(() => call("p", { v: 9 }), () => ({ tools: [prepared()] }));
      expect(o).toEqual(r);
    });
  });
});
