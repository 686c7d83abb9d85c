/**
 * Differential tests against the reference, @earendil-works/pi-agent-core 1.6.0, run as a black
 * box: the same scenario (the same scripted stream function, tools and hooks) through its
 * `runAgentLoop`/`runAgentLoopContinue` and ours, comparing the projected event sequence (with
 * hook calls and requests interleaved) and the returned messages.
 *
 * Excluded on purpose (SPEC says we differ): R56 throwing hooks/streams (the reference rejects or
 * hangs) and emit serialization (a synchronous sink here, so no emit ever overlaps).
 */
import * as reference from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import {
  runAgentLoop,
  runAgentLoopContinue,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentContext,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  type AgentTurnContext,
  type Script,
} from "../../src/index.js";
import { baseConfig, logged, loggedStream, ok, recorder, summary, system, tool, user, wait } from "./helpers.js";

type Runner = typeof runAgentLoop;
type ContinueRunner = typeof runAgentLoopContinue;
const implementations = {
  reference: { run: reference.runAgentLoop as unknown as Runner, continue: reference.runAgentLoopContinue as unknown as ContinueRunner },
  ours: { run: runAgentLoop, continue: runAgentLoopContinue },
};

interface Built {
  /** `null`: continue. */
  prompts: AgentMessage[] | null;
  context: AgentContext;
  config: AgentLoopConfig;
  script: Script;
  signal?: AbortSignal;
}

/** A scenario builds fresh tools and hooks per run, logging hook calls through `note`. */
type Scenario = (note: (entry: string) => void) => Built;

interface Outcome {
  log: string[];
  messages: string[];
  /** The messages without fields that legitimately vary (timestamps, durations). */
  normalized: unknown[];
}

async function play(impl: keyof typeof implementations, scenario: Scenario): Promise<Outcome> {
  const rec = recorder();
  const built = scenario(rec.note);
  const stream = loggedStream(rec.note, scriptedStreamFn(built.script));
  const { run, continue: cont } = implementations[impl];
  const messages =
    built.prompts === null
      ? await cont(built.context, built.config, rec.sink, built.signal, stream)
      : await run(built.prompts, built.context, built.config, rec.sink, built.signal, stream);
  return { log: rec.log, messages: messages.map(summary), normalized: messages.map(normalize) };
}

function normalize(message: AgentMessage): unknown {
  return JSON.parse(
    JSON.stringify(message, (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value)),
  );
}

const answer = (value: string) => ({ content: [text(value)] });
const calls = (...names: string[]) => ({ content: names.map((name) => toolCall(name)) });
const batches = (...list: AgentMessage[][]) => {
  let i = 0;
  return async () => list[i++] ?? [];
};
const decl = (t: AgentTool) => ({ name: t.name, description: t.description, parameters: t.parameters });

/** Hooks every scenario logs, so the differential also pins when queues and turn hooks are called. */
function queueHooks(note: (entry: string) => void, steering: AgentMessage[][] = [], followUps: AgentMessage[][] = []) {
  return {
    getSteeringMessages: logged(note, "getSteeringMessages", batches(...steering)),
    getFollowUpMessages: logged(note, "getFollowUpMessages", batches(...followUps)),
  };
}

const scenarios: Record<string, Scenario> = {
  "plain answer": (note) => ({
    prompts: [user("hi")],
    context: { messages: [] },
    config: baseConfig({ ...queueHooks(note), finishTurn: logged(note, "finishTurn", async () => undefined) }),
    script: [answer("hello there")],
  }),

  "parallel tools": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("a"), tool("b"), tool("c")] },
    config: baseConfig({
      ...queueHooks(note),
      beforeToolCall: async ({ toolCall: call }) => (note(`hook:beforeToolCall:${call.name}`), undefined),
      afterToolCall: async ({ toolCall: call }) => (note(`hook:afterToolCall:${call.name}`), undefined),
    }),
    script: [calls("a", "missing", "b", "c"), answer("done")],
  }),

  "sequential override": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("a"), tool("b", undefined, { executionMode: "sequential" })] },
    config: baseConfig({
      ...queueHooks(note),
      beforeToolCall: async ({ toolCall: call }) => (note(`hook:beforeToolCall:${call.name}`), undefined),
      afterToolCall: async ({ toolCall: call }) => (note(`hook:afterToolCall:${call.name}`), undefined),
    }),
    script: [calls("a", "b"), answer("done")],
  }),

  "steering at start": (note) => ({
    prompts: [user("hi")],
    context: { messages: [] },
    config: baseConfig({ ...queueHooks(note, [[user("steer first")]]) }),
    script: [answer("ok")],
  }),

  "steering mid-run": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note, [[], [user("steer a")], [user("steer b")]]) }),
    script: [calls("read"), answer("after tools"), answer("after steering")],
  }),

  "follow-ups": (note) => ({
    prompts: [user("hi")],
    context: { messages: [] },
    config: baseConfig({ ...queueHooks(note, [], [[user("follow 1")], [user("follow 2"), user("follow 3")]]) }),
    script: [answer("one"), answer("two"), answer("three")],
  }),

  "finishTurn end": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note), finishTurn: logged(note, "finishTurn", async () => ({ action: "end" as const })) }),
    script: [calls("read"), answer("never")],
  }),

  "finishTurn continue": (note) => {
    let n = 0;
    return {
      prompts: [user("hi")],
      context: { messages: [] },
      config: baseConfig({
        ...queueHooks(note),
        finishTurn: logged(note, "finishTurn", async () => (n++ < 2 ? { action: "continue" as const } : undefined)),
      }),
      script: [answer("one"), answer("two"), answer("three"), answer("never")],
    };
  },

  "prepareNextTurn messages": (note) => {
    let n = 0;
    return {
      prompts: [user("hi")],
      context: { messages: [], tools: [tool("read")] },
      config: baseConfig({
        ...queueHooks(note),
        prepareNextTurn: logged(note, "prepareNextTurn", async () => (n++ === 0 ? { messages: [user("prepared"), system("Be brief.")] } : undefined)),
        prepareRequest: logged(note, "prepareRequest", async () => undefined),
      }),
      script: [calls("read"), answer("done")],
    };
  },

  truncation: (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note) }),
    script: [{ content: [text("partial"), toolCall("read", { path: "a" }), toolCall("read", {}, "second")], stopReason: "length" }, answer("done")],
  }),

  "error response": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note), finishTurn: logged(note, "finishTurn", async () => ({ action: "continue" as const })) }),
    script: [{ content: [text("oops"), toolCall("read")], stopReason: "error", errorMessage: "overloaded" }],
  }),

  "blocked call": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("a"), tool("b"), tool("c")] },
    config: baseConfig({
      ...queueHooks(note),
      beforeToolCall: async ({ toolCall: call }) =>
        call.name === "a" ? { block: true, reason: "no a" } : call.name === "b" ? { block: true, terminate: true } : undefined,
    }),
    script: [calls("a", "b", "c"), answer("done")],
  }),

  "every call terminates": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("a", async () => ok("a", { terminate: true })), tool("b")] },
    config: baseConfig({ ...queueHooks(note), afterToolCall: async () => ({ terminate: true }) }),
    script: [calls("a", "b"), answer("never")],
  }),

  "validation failure": (note) => ({
    prompts: [user("hi")],
    context: {
      messages: [],
      tools: [tool("read", undefined, { parameters: { type: "object", properties: { path: { type: "string" }, n: { type: "integer" } }, required: ["path"] } })],
    },
    config: baseConfig({ ...queueHooks(note) }),
    script: [{ content: [toolCall("read", { n: "x" }), toolCall("read", { path: 5, n: "7" }, "coerced")] }, answer("done")],
  }),

  "tool declaration": (note) => {
    const read = tool("read");
    const grep = tool("grep");
    const write = tool("write");
    let n = 0;
    return {
      prompts: [system("Be brief."), user("hi")],
      context: { messages: [system("You help.", { toolsAdded: [{ ...decl(read), description: "old" }, decl(grep)] })], tools: [read, grep] },
      config: baseConfig({
        ...queueHooks(note),
        prepareNextTurn: logged(note, "prepareNextTurn", async (turn: AgentTurnContext) =>
          n++ === 0 ? { context: { messages: turn.context.messages, tools: [read, write] } } : undefined,
        ),
      }),
      script: [calls("grep"), calls("write"), answer("done")],
    };
  },

  "abort during parallel preflight": (note) => {
    const controller = new AbortController();
    const logTool = (name: string) => tool(name, async () => (note(`exec:${name}`), ok(name)));
    return {
      prompts: [user("hi")],
      context: { messages: [], tools: [logTool("a"), logTool("b"), logTool("c")] },
      signal: controller.signal,
      config: baseConfig({
        ...queueHooks(note),
        beforeToolCall: async ({ toolCall: call }) => {
          note(`hook:beforeToolCall:${call.name}`);
          if (call.name === "b") controller.abort();
          return undefined;
        },
        finishTurn: logged(note, "finishTurn", async () => undefined),
        prepareNextTurn: logged(note, "prepareNextTurn", async () => undefined),
      }),
      script: [calls("a", "b", "c"), answer("never")],
    };
  },

  "abort while a tool runs": (note) => {
    const controller = new AbortController();
    return {
      prompts: [user("hi")],
      context: {
        messages: [],
        tools: [
          tool("watch", async (_id, _params, signal) => {
            note("exec:watch");
            controller.abort();
            return ok(`watch saw aborted=${signal?.aborted}`);
          }),
          tool("next", async () => (note("exec:next"), ok("next"))),
        ],
      },
      signal: controller.signal,
      config: baseConfig({ ...queueHooks(note), toolExecution: "sequential" }),
      script: [calls("watch", "next"), answer("never")],
    };
  },

  "afterToolCall overrides and updates": (note) => {
    let late: ((r: ReturnType<typeof ok>) => void) | undefined;
    return {
      prompts: [user("hi")],
      context: {
        messages: [],
        tools: [
          tool("rich", async (_id, _params, _signal, onUpdate) => {
            onUpdate?.(ok("progress"));
            late = onUpdate;
            return { content: [{ type: "text", text: "raw" }], details: { a: 1 }, structuredContent: { x: 1 } };
          }),
          // Finishes clearly after "rich", so completion order does not hinge on microtask timing.
          tool("flag", async () => (await wait(20), ok("flag done"))),
        ],
      },
      config: baseConfig({
        ...queueHooks(note),
        afterToolCall: async ({ toolCall: call }) => {
          late?.(ok("late"));
          return call.name === "rich" ? { content: [{ type: "text", text: "rewritten" }] } : { isError: true, details: { why: "policy" } };
        },
      }),
      script: [calls("rich", "flag"), answer("done")],
    };
  },

  "setup error and arguments error": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note) }),
    script: [{ content: [{ type: "toolCall", name: "read", argumentsError: "Unexpected end of JSON input" }] }, { setupError: "bad key" }],
  }),

  "prepareRequest and prepareNextTurn replace state": (note) => {
    let r = 0;
    let t = 0;
    return {
      prompts: [user("hi")],
      context: { messages: [], tools: [tool("read")] },
      config: baseConfig({
        ...queueHooks(note),
        reasoning: "medium",
        prepareRequest: logged(note, "prepareRequest", async ({ context }: { context: AgentContext }) =>
          r++ === 0 ? { context: { messages: [user("note"), ...context.messages], tools: context.tools }, thinkingLevel: "low" as const } : undefined,
        ),
        prepareNextTurn: logged(note, "prepareNextTurn", async (turn: AgentTurnContext) =>
          t++ === 0 ? { context: { messages: turn.context.messages.slice(1), tools: turn.context.tools }, thinkingLevel: "high" as const } : undefined,
        ),
      }),
      script: [calls("read"), answer("done")],
    };
  },

  "terminating batch with a follow-up": (note) => ({
    prompts: [user("hi")],
    context: { messages: [], tools: [tool("a", async () => ok("a", { terminate: true }))] },
    config: baseConfig({ ...queueHooks(note, [], [[user("more")]]) }),
    script: [calls("a"), answer("after follow-up")],
  }),

  "continue with a steering system message": (note) => ({
    prompts: null,
    context: { messages: [user("q")], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note, [[system("Switch to terse mode."), user("steer")]]) }),
    script: [answer("done")],
  }),

  continue: (note) => ({
    prompts: null,
    context: { messages: [user("q")], tools: [tool("read")] },
    config: baseConfig({ ...queueHooks(note, [[user("steer")]]) }),
    script: [calls("read"), answer("done")],
  }),
};

describe("reference differential (pi-agent-core 1.6.0 as a black box)", () => {
  it.each(Object.keys(scenarios))("%s: same events, hook calls and messages", async (name) => {
    const [ref, ours] = [await play("reference", scenarios[name]), await play("ours", scenarios[name])];
    expect(ours.log).toEqual(ref.log);
    expect(ours.messages).toEqual(ref.messages);
    expect(ours.normalized).toEqual(ref.normalized);
  });
});
