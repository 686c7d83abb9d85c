/**
 * SPEC R67 (abort grace, `abortGraceMs`), with R29, R55, R56 and R13: after the run's signal
 * aborts, tools and hooks still running when the grace runs out (on the injected clock) are
 * abandoned: a call settles with `Operation aborted (the tool did not stop within N ms)`, an
 * abandoned hook or stream function ends the run aborted; late outcomes are dropped.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import {
  Agent,
  AgentInputError,
  createAgentRunLogic,
  defaultConvertToLlm,
  runAgentLoop,
  scriptedModel,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  type AgentToolResult,
  type AssistantMessageEventStream,
  type Clock,
  type StreamFn,
} from "../../src/index.js";
import { assistantMessage, baseConfig, logEntry, ok, recorder, structureProblems, summary, tool, user } from "./helpers.js";
import { manualClock } from "../support/manual-clock.js";

const GRACE = 500;
const TOOL_TEXT = `Operation aborted (the tool did not stop within ${GRACE} ms)`;
const abandoned = (what: string) => `Operation aborted (${what} did not stop within ${GRACE} ms)`;


/** Lets queued promise jobs and I/O callbacks run (no time passes on the run's clock). */
const ticks = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await ticks(1);
  if (!condition()) throw new Error("condition never held");
}

/** Never settles, whatever its signal says. */
const never = <T>() => new Promise<T>(() => {});

/** A tool that ignores its signal: it settles only if the test calls `finish`. */
function stubborn(name: string, extra: Partial<AgentTool> = {}) {
  const state: { started: boolean; signal?: AbortSignal; finish?: (value: AgentToolResult) => void; update?: (partial: AgentToolResult) => void } = { started: false };
  const agentTool = tool(
    name,
    (_id, _args, signal, onUpdate) => {
      state.started = true;
      state.signal = signal;
      state.update = onUpdate as never;
      return new Promise<AgentToolResult>((resolve) => (state.finish = resolve));
    },
    extra,
  );
  return { tool: agentTool, state };
}

const answer = (value: string) => ({ content: [text(value)] });
const calls = (...names: string[]) => ({ content: names.map((name, i) => toolCall(name, {}, `${name}${i}`)) });

interface Started {
  rec: ReturnType<typeof recorder>;
  clock: ReturnType<typeof manualClock>;
  controller: AbortController;
  done: Promise<AgentMessage[]>;
  ended: () => boolean;
}

function start(args: { tools?: AgentTool[]; config?: Partial<AgentLoopConfig>; streamFn: StreamFn; grace?: number | null }): Started {
  const rec = recorder();
  const clock = manualClock();
  const controller = new AbortController();
  const grace = args.grace === undefined ? GRACE : args.grace;
  let finished = false;
  const done = runAgentLoop(
    [user("go")],
    { messages: [], tools: args.tools ?? [] },
    baseConfig({ ...(grace === null ? {} : { abortGraceMs: grace }), ...args.config }),
    rec.sink,
    controller.signal,
    args.streamFn,
    { clock: clock.clock },
  ).finally(() => (finished = true));
  return { rec, clock, controller, done, ended: () => finished };
}

/** Aborts, checks the grace timer, and lets it run out: nothing happens a millisecond before it. */
async function abortAndRunOutGrace(run: Started): Promise<AgentMessage[]> {
  const before = run.rec.log.length;
  run.controller.abort();
  await ticks();
  expect(run.clock.timers.map((timer) => timer.ms)).toEqual([GRACE]);
  run.clock.advance(GRACE - 1);
  await ticks();
  expect(run.rec.log.slice(before)).toEqual([]);
  expect(run.ended()).toBe(false);
  run.clock.advance(1);
  return run.done;
}

const agentEnd = (events: AgentEvent[]) => events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
const head = ["agent_start", "turn_start", "message_start:user(go)", "message_end:user(go)", "message_start:assistant"];
/** With tools, the run first declares them (R30). */
const toolHead = ["agent_start", "turn_start", "message_start:system", "message_end:system", "message_start:user(go)", "message_end:user(go)", "message_start:assistant"];

describe("R67: abort grace", () => {
  it("R67: a parallel call whose tool never settles and ignores its signal settles at the grace with the abandoned-tool result; the batch finishes and the run ends aborted", async () => {
    const hang = stubborn("hang");
    const run = start({ tools: [tool("quick"), hang.tool], streamFn: scriptedStreamFn([calls("quick", "hang"), answer("never")]) });
    await until(() => hang.state.started);
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log).toEqual([
      ...toolHead,
      "message_end:assistant(toolUse)",
      "tool_start:quick",
      "tool_start:hang",
      "tool_end:quick",
      "tool_end:hang!",
      "message_start:toolResult(quick)",
      "message_end:toolResult(quick)",
      "message_start:toolResult(hang!)",
      "message_end:toolResult(hang!)",
      "turn_end:assistant(toolUse)+2",
      // R29: the turn finishes and the next request, made with the aborted signal, answers aborted.
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:6",
    ]);
    expect(messages.map(summary).slice(2, 5)).toEqual(["assistant(toolUse)[call quick|call hang]", "toolResult(quick):quick done", `toolResult(hang!):${TOOL_TEXT}`]);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
    expect(hang.state.signal?.aborted).toBe(true);
    expect(structureProblems(run.rec.events)).toEqual([]);
  });

  it("R67: in a sequential batch the abandoned call settles with the abandoned-tool result and the later calls get `Operation aborted` (R29)", async () => {
    const hang = stubborn("hang");
    const later = stubborn("later");
    const run = start({
      tools: [hang.tool, later.tool],
      config: { toolExecution: "sequential" },
      streamFn: scriptedStreamFn([calls("hang", "later"), answer("never")]),
    });
    await until(() => hang.state.started);
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log).toEqual([
      ...toolHead,
      "message_end:assistant(toolUse)",
      "tool_start:hang",
      "tool_end:hang!",
      "message_start:toolResult(hang!)",
      "message_end:toolResult(hang!)",
      "tool_start:later",
      "tool_end:later!",
      "message_start:toolResult(later!)",
      "message_end:toolResult(later!)",
      "turn_end:assistant(toolUse)+2",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:6",
    ]);
    expect(messages.map(summary).slice(3, 5)).toEqual([`toolResult(hang!):${TOOL_TEXT}`, "toolResult(later!):Operation aborted"]);
    expect(later.state.started).toBe(false);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
  });

  it("R67: a tool that settles after it was abandoned: its outcome and updates are dropped, no second result", async () => {
    const hang = stubborn("hang");
    const run = start({ tools: [hang.tool], streamFn: scriptedStreamFn([calls("hang"), answer("never")]) });
    await until(() => hang.state.started);
    const messages = await abortAndRunOutGrace(run);
    const count = run.rec.events.length;
    hang.state.update!(ok("late progress"));
    hang.state.finish!(ok("late result"));
    await ticks();
    expect(run.rec.events.length).toBe(count);
    expect(run.rec.events.filter((event) => event.type === "tool_execution_end")).toHaveLength(1);
    expect(messages.filter((message) => message.role === "toolResult").map(summary)).toEqual([`toolResult(hang!):${TOOL_TEXT}`]);
  });

  it("R67: an afterToolCall that never settles is abandoned like the tool: the call settles with the abandoned-tool result", async () => {
    let finalizing = false;
    const run = start({
      tools: [tool("quick")],
      config: { afterToolCall: () => ((finalizing = true), never()) },
      streamFn: scriptedStreamFn([calls("quick"), answer("never")]),
    });
    await until(() => finalizing);
    const messages = await abortAndRunOutGrace(run);
    expect(messages.filter((message) => message.role === "toolResult").map(summary)).toEqual([`toolResult(quick!):${TOOL_TEXT}`]);
    expect(run.rec.log.slice(-9)).toEqual([
      "tool_end:quick!",
      "message_start:toolResult(quick!)",
      "message_end:toolResult(quick!)",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:5",
    ]);
  });

  it("R67: a finishTurn that never settles ends the run: an aborted assistant message naming it, turn_end, agent_end{reason: aborted}", async () => {
    let finishing = false;
    const run = start({ config: { finishTurn: () => ((finishing = true), never()) }, streamFn: scriptedStreamFn([answer("hello")]) });
    await until(() => finishing);
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log).toEqual([
      ...head,
      "message_end:assistant(stop)",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:3",
    ]);
    expect(messages.map(summary)).toEqual(["user(go)", "assistant(stop)[hello]", `assistant(aborted)[]:${abandoned("finishTurn")}`]);
    expect(agentEnd(run.rec.events)).toMatchObject({ reason: "aborted", messages });
    expect(structureProblems(run.rec.events)).toEqual([]);
  });

  it("R67: a transformContext that never settles ends the run before any request", async () => {
    let requests = 0;
    let transforming = false;
    const run = start({
      config: { transformContext: () => ((transforming = true), never()) },
      streamFn: (...args) => (requests++, scriptedStreamFn([answer("never")])(...args)),
    });
    await until(() => transforming);
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(go)",
      "message_end:user(go)",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:2",
    ]);
    expect(messages.map(summary)).toEqual(["user(go)", `assistant(aborted)[]:${abandoned("transformContext")}`]);
    expect(requests).toBe(0);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
  });

  it("R67, R55: a beforeToolCall that never settles (parallel) ends the run; every started call gets its end and result first, an immediate result keeps its own", async () => {
    const run = start({
      tools: [tool("a"), tool("b"), tool("c")],
      config: { beforeToolCall: ({ toolCall: call }) => (call.name === "b" ? never() : Promise.resolve(undefined)) },
      streamFn: scriptedStreamFn([calls("missing", "a", "b", "c"), answer("never")]),
    });
    await until(() => run.rec.log.includes("tool_start:b"));
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log).toEqual([
      ...toolHead,
      "message_end:assistant(toolUse)",
      "tool_start:missing",
      "tool_end:missing!",
      "tool_start:a",
      "tool_start:b",
      // The grace ran out while b's beforeToolCall ran; c had not started.
      "tool_end:a!",
      "tool_end:b!",
      "message_start:toolResult(missing!)",
      "message_end:toolResult(missing!)",
      "message_start:toolResult(a!)",
      "message_end:toolResult(a!)",
      "message_start:toolResult(b!)",
      "message_end:toolResult(b!)",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:7",
    ]);
    expect(messages.slice(3).map(summary)).toEqual([
      "toolResult(missing!):Tool missing not found",
      "toolResult(a!):Operation aborted",
      "toolResult(b!):Operation aborted",
      `assistant(aborted)[]:${abandoned("beforeToolCall")}`,
    ]);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
    expect(structureProblems(run.rec.events)).toEqual([]);
  });

  it("R67, R55: a beforeToolCall that never settles (sequential) ends the run after the started call's result", async () => {
    const run = start({
      tools: [tool("a"), tool("b")],
      config: { toolExecution: "sequential", beforeToolCall: ({ toolCall: call }) => (call.name === "b" ? never() : Promise.resolve(undefined)) },
      streamFn: scriptedStreamFn([calls("a", "b"), answer("never")]),
    });
    await until(() => run.rec.log.includes("tool_start:b"));
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log.slice(toolHead.length)).toEqual([
      "message_end:assistant(toolUse)",
      "tool_start:a",
      "tool_end:a",
      "message_start:toolResult(a)",
      "message_end:toolResult(a)",
      "tool_start:b",
      "tool_end:b!",
      "message_start:toolResult(b!)",
      "message_end:toolResult(b!)",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:6",
    ]);
    expect(messages.slice(3).map(summary)).toEqual(["toolResult(a):a done", "toolResult(b!):Operation aborted", `assistant(aborted)[]:${abandoned("beforeToolCall")}`]);
  });

  it("R67, R56: a stream function that never ends after `start`: the open message is closed (aborted) first, then the aborted failure message", async () => {
    const partial = assistantMessage([{ type: "text", text: "half" }]);
    let lateDelta!: () => void;
    const stalled: AssistantMessageEventStream = {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: { ...partial, content: [] } };
        yield { type: "text_start", contentIndex: 0, partial: { ...partial, content: [{ type: "text", text: "" }] } };
        yield { type: "text_delta", contentIndex: 0, delta: "half", partial };
        // Ignores the signal: only the test could move it on.
        await new Promise<void>((resolve) => (lateDelta = resolve));
        yield { type: "text_delta", contentIndex: 0, delta: " more", partial: { ...partial, content: [{ type: "text", text: "half more" }] } };
      },
      result: () => never(),
    };
    const run = start({ streamFn: () => stalled });
    await until(() => run.rec.events.filter((event) => event.type === "message_update").length === 2);
    const messages = await abortAndRunOutGrace(run);
    expect(run.rec.log).toEqual([
      ...head,
      "message_end:assistant(aborted)",
      "message_start:assistant",
      "message_end:assistant(aborted)",
      "turn_end:assistant(aborted)+0",
      "agent_end:3",
    ]);
    const text = abandoned("the stream function");
    expect(messages.map(summary)).toEqual(["user(go)", `assistant(aborted)[half]:${text}`, `assistant(aborted)[]:${text}`]);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
    expect(structureProblems(run.rec.events)).toEqual([]);
    // Its late deltas are dropped.
    const count = run.rec.events.length;
    lateDelta();
    await ticks();
    expect(run.rec.events.length).toBe(count);
  });

  it("R67, R70: a streamed call still running when the grace runs out (the stream function ignoring its signal too) gets the abandoned-tool result", async () => {
    const hang = stubborn("hang", { isConcurrencySafe: () => true });
    const call = { type: "toolCall" as const, id: "hang0", name: "hang", arguments: {} };
    const streaming: AssistantMessageEventStream = {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: assistantMessage([]) };
        yield { type: "toolcall_start", contentIndex: 0, partial: assistantMessage([{ ...call }]) };
        yield { type: "toolcall_end", contentIndex: 0, toolCall: call, partial: assistantMessage([{ ...call }]) };
        // Ignores the signal: it never ends.
        await never();
      },
      result: () => never(),
    };
    const run = start({ tools: [hang.tool], config: { streamingToolExecution: true }, streamFn: () => streaming });
    await until(() => hang.state.started);
    await abortAndRunOutGrace(run);
    const ends = run.rec.events.filter((event) => event.type === "tool_execution_end").map((event) => (event.result.content[0] as { text: string }).text);
    expect(ends).toEqual([TOOL_TEXT]);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
    expect(structureProblems(run.rec.events)).toEqual([]);
  });

  it("R67: a hook that settles late after it was abandoned changes nothing", async () => {
    let release!: (value: { action: "continue" }) => void;
    const run = start({
      config: { finishTurn: () => new Promise((resolve) => (release = resolve)) },
      streamFn: scriptedStreamFn([answer("hello"), answer("again")]),
    });
    await until(() => release !== undefined);
    const messages = await abortAndRunOutGrace(run);
    const count = run.rec.events.length;
    release({ action: "continue" });
    await ticks();
    expect(run.rec.events.length).toBe(count);
    expect(messages.map(summary).at(-1)).toBe(`assistant(aborted)[]:${abandoned("finishTurn")}`);
  });

  it("R67: jobs that start after the grace ran out are not abandoned: they get the aborted signal, and the grace is not restarted", async () => {
    const hang = stubborn("hang");
    let release!: () => void;
    let finishSignal: AbortSignal | undefined;
    const run = start({
      tools: [hang.tool],
      config: {
        // Waits for the test the first time (after the batch); the aborted request's turn is not held.
        finishTurn: (_turn, signal) =>
          finishSignal ? Promise.resolve(undefined) : ((finishSignal = signal), new Promise((resolve) => (release = () => resolve(undefined)))),
      },
      streamFn: scriptedStreamFn([calls("hang"), answer("never")]),
    });
    await until(() => hang.state.started);
    run.controller.abort();
    await ticks();
    run.clock.advance(GRACE);
    await until(() => release !== undefined);
    expect(finishSignal?.aborted).toBe(true);
    expect(run.clock.timers).toEqual([]);
    run.clock.advance(10 * GRACE);
    await ticks();
    expect(run.ended()).toBe(false);
    release();
    await run.done;
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
  });

  it("R67: without abortGraceMs an abort waits for the tool as before: no timer, the run ends only when the tool settles, with its outcome", async () => {
    const hang = stubborn("hang");
    const run = start({ grace: null, tools: [hang.tool], streamFn: scriptedStreamFn([calls("hang"), answer("never")]) });
    await until(() => hang.state.started);
    run.controller.abort();
    await ticks();
    expect(run.clock.timers).toEqual([]);
    run.clock.advance(60_000);
    await ticks();
    expect(run.ended()).toBe(false);
    hang.state.finish!(ok("finally"));
    const messages = await run.done;
    expect(messages.filter((message) => message.role === "toolResult").map(summary)).toEqual(["toolResult(hang):finally"]);
    expect(agentEnd(run.rec.events).reason).toBe("aborted");
  });

  it("R67: an abortGraceMs that is not a duration is refused at the call with a typed error", async () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "500"]) {
      const call = () => runAgentLoop([user("go")], { messages: [] }, baseConfig({ abortGraceMs: bad as number }), () => {}, undefined, scriptedStreamFn([answer("x")]));
      await expect(call()).rejects.toThrow(AgentInputError);
      await expect(call()).rejects.toThrow(/config\.abortGraceMs must be a finite number of milliseconds/);
    }
  });

  it("R67: without an abort the grace never starts", async () => {
    const run = start({ tools: [tool("quick")], streamFn: scriptedStreamFn([calls("quick"), answer("done")]) });
    const messages = await run.done;
    expect(run.clock.timers).toEqual([]);
    expect(summary(messages.at(-1)!)).toBe("assistant(stop)[done]");
    expect(agentEnd(run.rec.events).reason).toBe("completed");
  });
});

describe("R67, R13: abort grace across a restore", () => {
  const options = (clock: Clock, finishTurn: AgentLoopConfig["finishTurn"]) => ({
    streamFn: scriptedStreamFn([answer("hello")]),
    tools: [],
    config: { model: scriptedModel, convertToLlm: defaultConvertToLlm, abortGraceMs: 1_000, finishTurn },
    clock,
  });

  it("R67, R13: a run persisted during the grace resumes it with the time that was left", async () => {
    const first = manualClock();
    let finishing = 0;
    const hangingFinish = () => (finishing++, never<undefined>());
    const run = createActor(createAgentRunLogic(options(first.clock, hangingFinish)), { input: { messages: [], prompts: [user("go")] } });
    run.start();
    await until(() => finishing === 1);
    // An embedded run is aborted by its `run.abort` event.
    run.send({ type: "run.abort" });
    await ticks();
    expect(first.timers.map((timer) => timer.ms)).toEqual([1_000]);
    first.advance(300);
    const saved = JSON.stringify(run.getPersistedSnapshot());
    run.stop();
    expect(first.timers).toEqual([]);

    const second = manualClock(1_300);
    const restored = createActor(createAgentRunLogic(options(second.clock, hangingFinish)), { snapshot: JSON.parse(saved), input: { messages: [] } });
    const events: AgentEvent[] = [];
    restored.on("*", (event) => void events.push(event as AgentEvent));
    let ended = false;
    const output = toPromise(restored).finally(() => (ended = true));
    restored.start();
    await until(() => finishing === 2);
    expect(second.timers.map((timer) => timer.ms)).toEqual([700]);
    second.advance(699);
    await ticks();
    expect(ended).toBe(false);
    second.advance(1);
    const added = await output;
    expect(added.map(summary)).toEqual(["user(go)", "assistant(stop)[hello]", "assistant(aborted)[]:Operation aborted (finishTurn did not stop within 1000 ms)"]);
    expect(events.map(logEntry)).toEqual(["message_start:assistant", "message_end:assistant(aborted)", "turn_end:assistant(aborted)+0", "agent_end:3"]);
  });

  it("R67, R13: an aborted run whose snapshot does not say when the abort came gets the whole grace", async () => {
    const first = manualClock();
    let finishing = 0;
    const hangingFinish = () => (finishing++, never<undefined>());
    const run = createActor(createAgentRunLogic(options(first.clock, hangingFinish)), { input: { messages: [], prompts: [user("go")] } });
    run.start();
    await until(() => finishing === 1);
    run.send({ type: "run.abort" });
    first.advance(300);
    const saved = JSON.parse(JSON.stringify(run.getPersistedSnapshot()));
    run.stop();
    const worker = saved.children.steps.snapshot;
    expect(worker.grace).toEqual({ abortedAt: 1_000, expired: false });
    delete worker.grace;

    const second = manualClock(1_300);
    const restored = createActor(createAgentRunLogic(options(second.clock, hangingFinish)), { snapshot: saved, input: { messages: [] } });
    const output = toPromise(restored);
    restored.start();
    await until(() => finishing === 2);
    expect(second.timers.map((timer) => timer.ms)).toEqual([1_000]);
    second.advance(1_000);
    expect(summary((await output).at(-1)!)).toBe("assistant(aborted)[]:Operation aborted (finishTurn did not stop within 1000 ms)");
  });

  it("R67, R13: a run persisted after its grace ran out does not start it again", async () => {
    const first = manualClock();
    const hang = stubborn("hang");
    let release: (() => void) | undefined;
    let holding = true;
    // The first turn's finishTurn waits for the test (in each process); later turns are not held.
    const finishTurn = () => (holding ? new Promise<undefined>((resolve) => (release = () => ((holding = false), resolve(undefined)))) : Promise.resolve(undefined));
    const tooled = (clock: Clock) => ({
      ...options(clock, finishTurn),
      tools: [hang.tool],
      streamFn: scriptedStreamFn((request) =>
        request.context.messages.some((message) => message.role === "toolResult") ? answer("never") : calls("hang"),
      ),
    });
    const run = createActor(createAgentRunLogic(tooled(first.clock)), { input: { messages: [], prompts: [user("go")] } });
    run.start();
    await until(() => hang.state.started);
    run.send({ type: "run.abort" });
    await ticks();
    first.advance(1_000);
    // The abandoned call settled; finishTurn started after the grace and is waiting.
    await until(() => release !== undefined);
    const saved = JSON.stringify(run.getPersistedSnapshot());
    run.stop();

    release = undefined;
    const second = manualClock(2_000);
    const restored = createActor(createAgentRunLogic(tooled(second.clock)), { snapshot: JSON.parse(saved), input: { messages: [] } });
    const output = toPromise(restored);
    restored.start();
    await until(() => release !== undefined);
    expect(second.timers).toEqual([]);
    release!();
    const added = await output;
    expect(added.filter((message) => message.role === "toolResult").map(summary)).toEqual(["toolResult(hang!):Operation aborted (the tool did not stop within 1000 ms)"]);
    expect(summary(added.at(-1)!)).toMatch(/^assistant\(aborted\)/);
  });
});

describe("R67: through the Agent", () => {
  it("R67, R54: abort() with a tool that never settles: waitForIdle() resolves within the grace, isStreaming is false, the next prompt() works", async () => {
    const hang = stubborn("hang");
    let requests = 0;
    const script = scriptedStreamFn([calls("hang"), answer("never"), answer("second run")]);
    const clock = manualClock();
    const agent = new Agent({
      initialState: { model: scriptedModel, tools: [hang.tool] },
      streamFn: (...args) => (requests++, script(...args)),
      abortGraceMs: GRACE,
      clock: clock.clock,
    });

    const first = agent.prompt("go");
    await until(() => hang.state.started);
    expect(agent.state.isStreaming).toBe(true);
    agent.abort();
    await ticks();
    expect(clock.timers.map((timer) => timer.ms)).toEqual([GRACE]);
    let idle = false;
    const waited = agent.waitForIdle().then(() => (idle = true));
    clock.advance(GRACE - 1);
    await ticks();
    expect(idle).toBe(false);
    clock.advance(1);
    await waited;
    await first;
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.state.messages.filter((message) => message.role === "toolResult").map(summary)).toEqual([`toolResult(hang!):${TOOL_TEXT}`]);
    expect(agent.lastEndReason).toBe("aborted");

    await agent.prompt("again");
    expect(summary(agent.state.messages.at(-1)!)).toBe("assistant(stop)[second run]");
    expect(agent.lastEndReason).toBe("completed");
    expect(requests).toBe(3);
  });
});
