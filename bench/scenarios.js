// Shared scenarios for the benchmark: the same stream function, tools and sink feed both loops.

const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

export const model = {
  id: "bench", name: "bench", api: "bench", provider: "bench", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 1e5,
};

/** A minimal, allocation-light stream: start, the given content events, done. */
function streamOf(content, stopReason, deltas = 0) {
  const message = { role: "assistant", content, api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason, timestamp: 0 };
  return {
    async *[Symbol.asyncIterator]() {
      yield { type: "start", partial: message };
      if (deltas > 0) {
        yield { type: "text_start", contentIndex: 0, partial: message };
        for (let i = 0; i < deltas; i++) yield { type: "text_delta", contentIndex: 0, delta: "x", partial: message };
        yield { type: "text_end", contentIndex: 0, content: "", partial: message };
      }
      yield { type: "done", reason: stopReason, message };
    },
    result: async () => message,
  };
}

/** (a) 5 turns: 4 with 3 parallel tool calls, then a final text answer. */
export function toolTurnsStream(turns = 5, tools = 3) {
  let request = 0;
  return () => {
    const turn = request++ % turns;
    if (turn === turns - 1) return streamOf([{ type: "text", text: "done" }], "stop");
    const calls = [];
    for (let i = 0; i < tools; i++) calls.push({ type: "toolCall", id: `c${turn}_${i}`, name: `tool${i}`, arguments: { n: i } });
    return streamOf(calls, "toolUse");
  };
}

/** (b), (c) one response with `count` text deltas. */
export function deltaStream(count) {
  return () => streamOf([{ type: "text", text: "x".repeat(count) }], "stop", count);
}

/**
 * (b) with many blocks (issue 40): one response of `blocks` text blocks, each opened, grown by
 * `deltas` deltas and closed, appended to the live partial as a provider does (so an update's
 * message has as many blocks as the response so far).
 */
export function manyBlocksStream(blocks, deltas = 3) {
  return () => {
    const message = { role: "assistant", content: [], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: "stop", timestamp: 0 };
    return {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: message };
        for (let b = 0; b < blocks; b++) {
          const block = { type: "text", text: "" };
          message.content.push(block);
          yield { type: "text_start", contentIndex: b, partial: message };
          for (let i = 0; i < deltas; i++) {
            block.text += "x";
            yield { type: "text_delta", contentIndex: b, delta: "x", partial: message };
          }
          yield { type: "text_end", contentIndex: b, content: block.text, partial: message };
        }
        yield { type: "done", reason: "stop", message };
      },
      result: async () => message,
    };
  };
}

/**
 * A provider's text stream of `deltas` deltas growing one block in place; `spaced`: each delta
 * arrives in a macrotask of its own (after a `setImmediate`), as a network stream's do, so a
 * per-delta fixed cost is paid per delta rather than amortized over a burst (issue 40 item 4).
 */
export function growingTextStream(deltas, spaced = false) {
  return () => {
    const message = { role: "assistant", content: [], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: "stop", timestamp: 0 };
    return {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: message };
        const block = { type: "text", text: "" };
        message.content.push(block);
        yield { type: "text_start", contentIndex: 0, partial: message };
        for (let i = 0; i < deltas; i++) {
          if (spaced) await new Promise(setImmediate);
          block.text += "x";
          yield { type: "text_delta", contentIndex: 0, delta: "x", partial: message };
        }
        yield { type: "text_end", contentIndex: 0, content: block.text, partial: message };
        yield { type: "done", reason: "stop", message: { ...message, content: message.content.map((b) => ({ ...b })) } };
      },
      result: async () => message,
    };
  };
}

/**
 * `agents` Agents of `AgentClass`, each with one listener counting text deltas, each given one
 * prompt answered by a `growingTextStream(deltas, spaced)`, all at once; throws unless every delta
 * reached its listener.
 */
export async function agentStreams(AgentClass, agents, deltas, spaced = false) {
  let counted = 0;
  const count = (event) => {
    if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") counted++;
  };
  const runs = [];
  for (let i = 0; i < agents; i++) {
    const agent = newAgent(AgentClass, growingTextStream(deltas, spaced));
    agent.subscribe(count);
    runs.push(agent.prompt(`prompt ${i}`));
  }
  await Promise.all(runs);
  if (counted !== agents * deltas) throw new Error(`bench: ${counted} deltas reached the listeners, expected ${agents * deltas}`);
}

export function benchTools(count = 3) {
  const tools = [];
  for (let i = 0; i < count; i++) {
    tools.push({
      name: `tool${i}`, label: `tool${i}`, description: `tool ${i}`,
      parameters: { type: "object", properties: { n: { type: "number" } } },
      execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
    });
  }
  return tools;
}

export const convertToLlm = (messages) => messages;

export function transcript(size) {
  const messages = [];
  for (let i = 0; i < size; i++) {
    messages.push(i % 2 === 0
      ? { role: "user", content: `message ${i}`, timestamp: i }
      : { role: "assistant", content: [{ type: "text", text: `reply ${i}` }], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: "stop", timestamp: i });
  }
  return messages;
}

export const prompt = () => [{ role: "user", content: "go", timestamp: 0 }];

export const turnTools = benchTools();
export const turnConfig = { model, convertToLlm };

/** (a): `runs` runs of 5 turns x 3 parallel zero-latency tools, one after another. */
export async function runToolTurns(loop, runs) {
  for (let i = 0; i < runs; i++) {
    await loop(prompt(), { messages: [], tools: turnTools }, turnConfig, () => {}, undefined, toolTurnsStream());
  }
}

/** (a) as Agent prompts (issue 40 item 2): `runs` new Agents one after another, each given one prompt of (a). */
export async function agentToolTurns(AgentClass, runs) {
  for (let i = 0; i < runs; i++) {
    const agent = new AgentClass({ initialState: { model, tools: turnTools }, streamFn: toolTurnsStream(), convertToLlm });
    await agent.prompt("go");
    if (agent.state.messages.length !== 19) throw new Error(`bench (a) on an Agent: ${agent.state.messages.length} messages, expected 19 (the leading system message, the prompt, 17 of the run)`);
  }
}

// --- Sessions at scale (issue 19): (f), (g), (h) drive both Agent classes the same way. ---

/**
 * A one-turn text answer; each request gets its own message object (as a provider would), so a
 * transcript's heap is real and not one shared object.
 */
export function answerStream() {
  let request = 0;
  return () => {
    const message = { role: "assistant", content: [{ type: "text", text: `answer ${request++}` }], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: "stop", timestamp: 0 };
    return {
      async *[Symbol.asyncIterator]() {
        yield { type: "start", partial: message };
        yield { type: "done", reason: "stop", message };
      },
      result: async () => message,
    };
  };
}

/** An Agent of `AgentClass` (ours or the reference's) on the bench model and a one-turn answer stream. */
export const newAgent = (AgentClass, streamFn = answerStream()) => new AgentClass({ initialState: { model }, streamFn });

/** (f) `count` prompts one after another on one Agent; resolves with each thousand's time (ms). */
export async function promptsOnOneAgent(AgentClass, count) {
  const agent = newAgent(AgentClass);
  const laps = [];
  let lap = performance.now();
  for (let i = 1; i <= count; i++) {
    await agent.prompt(`prompt ${i}`);
    if (i % 1000 === 0) {
      const now = performance.now();
      laps.push(now - lap);
      lap = now;
    }
  }
  if (agent.state.messages.length !== 2 * count) throw new Error(`bench (f): ${agent.state.messages.length} messages, expected ${2 * count}`);
  return laps;
}

/** (h) `count` Agents, each given one prompt, all at once; resolves when every one settled. */
export async function concurrentPrompts(AgentClass, count) {
  const agents = [];
  for (let i = 0; i < count; i++) agents.push(newAgent(AgentClass));
  const start = performance.now();
  await Promise.all(agents.map((agent, i) => agent.prompt(`prompt ${i}`)));
  const elapsed = performance.now() - start;
  for (const agent of agents) if (agent.state.messages.length !== 2) throw new Error("bench (h): an Agent did not get its answer");
  return elapsed;
}

/**
 * The run machine's part of (f): `count` one-turn runs through `runAgentLoop`, one after another,
 * each starting from the transcript the runs before it left (the messages are appended in place:
 * both loops copy the transcript they are given).
 */
export async function promptsThroughLoop(loop, count) {
  const messages = [];
  const stream = answerStream();
  const laps = [];
  let lap = performance.now();
  for (let i = 1; i <= count; i++) {
    const added = await loop([{ role: "user", content: `prompt ${i}`, timestamp: 0 }], { messages, tools: [] }, turnConfig, () => {}, undefined, stream);
    for (const message of added) messages.push(message);
    if (i % 1000 === 0) {
      const now = performance.now();
      laps.push(now - lap);
      lap = now;
    }
  }
  return laps;
}

/** The run machine's part of (h): `count` one-turn runs through `runAgentLoop` at once. */
export async function concurrentLoopRuns(loop, count) {
  const stream = answerStream();
  const runs = [];
  for (let i = 0; i < count; i++) runs.push(loop([{ role: "user", content: `prompt ${i}`, timestamp: 0 }], { messages: [], tools: [] }, turnConfig, () => {}, undefined, stream));
  await Promise.all(runs);
}

// --- (e) issue 18: tools that start while the model streams (SPEC R70), on real timers. ---
// Scaled: 1 s of the scenario is E_SCALE_MS here (100 ms: the whole scenario takes 0.5 s).

export const E_SCALE_MS = Number(process.env.BENCH_E_SCALE_MS ?? 100);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A response that streams text for `streamS` seconds (a delta every 0.1 s) with one `read` call
 * completing at each of `callsAtS`, then a final answer streaming for `answerS`.
 */
export function timedToolStream({ streamS = 3, callsAtS = [0.5, 1.0, 1.5], answerS = 0.5 } = {}) {
  let request = 0;
  return () => {
    const first = request++ === 0;
    const message = { role: "assistant", content: [], api: "bench", provider: "bench", model: "bench", usage: usage(), stopReason: first ? "toolUse" : "stop", timestamp: 0 };
    const text = { type: "text", text: "" };
    message.content.push(text);
    const durationS = first ? streamS : answerS;
    const steps = [];
    for (let t = 0.1; t < durationS - 1e-9; t += 0.1) steps.push({ at: t, kind: "delta" });
    if (first) callsAtS.forEach((at, i) => steps.push({ at, kind: "call", i }));
    steps.sort((x, y) => x.at - y.at);
    return {
      async *[Symbol.asyncIterator]() {
        const start = performance.now();
        const until = async (s) => {
          const wait = s * E_SCALE_MS - (performance.now() - start);
          if (wait > 0) await sleep(wait);
        };
        yield { type: "start", partial: message };
        yield { type: "text_start", contentIndex: 0, partial: message };
        for (const step of steps) {
          await until(step.at);
          if (step.kind === "delta") {
            text.text += "x";
            yield { type: "text_delta", contentIndex: 0, delta: "x", partial: message };
            continue;
          }
          const call = { type: "toolCall", id: `e${step.i}`, name: "read", arguments: { n: step.i } };
          const index = message.content.push(call) - 1;
          yield { type: "toolcall_start", contentIndex: index, partial: message };
          yield { type: "toolcall_end", contentIndex: index, toolCall: call, partial: message };
        }
        await until(durationS);
        const final = { ...message, content: message.content.slice() };
        yield { type: "done", reason: final.stopReason, message: final };
      },
      result: async () => message,
    };
  };
}

/** (e)'s tool: a read of `toolS` seconds, safe to run alongside others. */
export function timedReadTool(toolS = 1.5) {
  return {
    name: "read", label: "read", description: "a timed read",
    parameters: { type: "object", properties: { n: { type: "number" } } },
    isConcurrencySafe: () => true,
    execute: async () => (await sleep(toolS * E_SCALE_MS), { content: [{ type: "text", text: "ok" }], details: {} }),
  };
}

/** (e): one run of the scenario; resolves to its wall time in ms. */
export async function timedToolRun(loop, { streaming, callsAtS }) {
  const config = { model, convertToLlm, ...(streaming ? { streamingToolExecution: true } : {}) };
  const start = performance.now();
  await loop(prompt(), { messages: [], tools: [timedReadTool()] }, config, () => {}, undefined, timedToolStream({ callsAtS }));
  return performance.now() - start;
}
