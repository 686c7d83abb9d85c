import { describe, expect, it } from "vitest";
import type { AgentMessage, JsonObject, AssistantMessage, CompactRequest, Message, SystemMessage, ToolResultMessage, UserMessage } from "../../src/types.js";
import { AgentInputError } from "../../src/boundary/errors.js";
import { replayTranscript } from "../../src/transcript/index.js";
import { scriptedModel, scriptedStreamFn, text } from "../../src/providers/scripted.js";
import { emptyUsage } from "../../src/providers/assistant-stream.js";
import { anthropicModel } from "../../src/providers/anthropic/models.js";
import { buildRequest } from "../../src/providers/anthropic/request.js";
import { defaultConvertToLlm } from "../../src/index.js";
import {
  CompactionError,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  estimateTokens,
  isCompactionSummary,
  streamCompletion,
  SUMMARY_HEADER,
  summarizingCompactor,
  unpairedToolMessages,
} from "../../src/recovery/index.js";

// ---------------------------------------------------------------------------------------------
// Transcript builders
// ---------------------------------------------------------------------------------------------

let clock = 0;
const tick = () => ++clock;

const user = (content: string): UserMessage => ({ role: "user", content, timestamp: tick() });
const system = (content: string, extra: Partial<SystemMessage> = {}): SystemMessage => ({ role: "system", content, ...extra, timestamp: tick() });
const tool = (name: string) => ({ name, description: `the ${name} tool`, parameters: { type: "object", properties: {} } });

function assistant(words: string, calls: { id: string; name: string; args?: JsonObject }[] = [], usage: Partial<AssistantMessage["usage"]> = {}): AssistantMessage {
  return {
    role: "assistant",
    content: [
      { type: "text", text: words },
      ...calls.map((call) => ({ type: "toolCall" as const, id: call.id, name: call.name, arguments: call.args ?? {} })),
    ],
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage: { ...emptyUsage(), ...usage },
    stopReason: calls.length > 0 ? "toolUse" : "stop",
    timestamp: tick(),
  };
}

function result(id: string, name: string, output: string, isError = false): ToolResultMessage {
  return { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: output }], isError, timestamp: tick() };
}

/** One turn: a user message, an assistant message with `calls` parallel calls, their results, a final answer. */
function turn(n: number, calls: number, pad = ""): AgentMessage[] {
  const ids = Array.from({ length: calls }, (_, i) => ({ id: `t${n}c${i}`, name: i % 2 ? "write" : "read", args: { path: `f${n}-${i}` } }));
  return [
    user(`turn ${n} request${pad}`),
    ...(calls > 0 ? [assistant(`turn ${n} working`, ids), ...ids.map((call) => result(call.id, call.name, `turn ${n} output ${call.id}${pad}`))] : []),
    assistant(`turn ${n} answer${pad}`),
  ];
}

// ---------------------------------------------------------------------------------------------
// A fake `complete` that records its inputs
// ---------------------------------------------------------------------------------------------

interface Recorded {
  messages: Message[];
  maxTokens: number | undefined;
}

function reply(words: string, overrides: Partial<AssistantMessage> = {}): AssistantMessage {
  return { ...assistant(words), usage: emptyUsage(), ...overrides };
}

function fakeComplete(answer: (index: number, messages: Message[]) => AssistantMessage | Promise<AssistantMessage> = (i) => reply(`summary ${i + 1}`)) {
  const calls: Recorded[] = [];
  const complete: CompactRequest["complete"] = async (messages, options) => {
    calls.push({ messages, maxTokens: options?.maxTokens });
    return answer(calls.length - 1, messages);
  };
  return { complete, calls };
}

function request(messages: AgentMessage[], complete: CompactRequest["complete"]): CompactRequest {
  return { messages, model: scriptedModel, reason: "overflow", estimatedTokens: estimateTokens(messages), complete };
}

const signal = () => new AbortController().signal;
const userText = (messages: Message[]) => (messages[1] as UserMessage).content as string;
const conversationOf = (messages: Message[]) => /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(userText(messages))![1];

// ---------------------------------------------------------------------------------------------

describe("R62: the summarizing compactor", () => {
  it("R62: parallel tool calls — the last turns stay verbatim, no tool result is orphaned, prompt and tools replay unchanged", async () => {
    const head = system("You are a coding agent.", { toolsAdded: [tool("read"), tool("write")] });
    const t1 = turn(1, 3);
    const added = system("Also use the shell.", { toolsAdded: [tool("shell")], sections: { style: "terse" } });
    const t2 = turn(2, 1);
    const t3 = turn(3, 3);
    const t4 = turn(4, 3);
    const transcript = [head, ...t1, added, ...t2, ...t3, ...t4];
    expect(unpairedToolMessages(transcript)).toEqual({ orphanedResults: [], unansweredCalls: [] });
    const { complete, calls } = fakeComplete();

    const compacted = await summarizingCompactor()(request(transcript, complete), signal());

    expect(compacted).toHaveLength(2 + t3.length + t4.length);
    // The tail is the very same messages, in order.
    compacted.slice(2).forEach((message, i) => expect(message).toBe([...t3, ...t4][i]));
    expect(compacted[1]).toEqual({ role: "user", content: `${SUMMARY_HEADER}\n\nsummary 1`, timestamp: t2.at(-1)!.timestamp });
    expect(isCompactionSummary(compacted[1])).toBe(true);
    expect(unpairedToolMessages(compacted)).toEqual({ orphanedResults: [], unansweredCalls: [] });
    // The older system messages collapse into one, so the next request sees the same prompt and tools.
    expect(compacted[0]).toEqual({
      role: "system",
      content: "You are a coding agent.\n\nAlso use the shell.",
      sections: { style: "terse" },
      toolsAdded: [tool("read"), tool("write"), tool("shell")],
      timestamp: head.timestamp,
    });
    const before = replayTranscript(transcript);
    const after = replayTranscript(compacted);
    expect(after.systemPrompt).toBe(before.systemPrompt);
    expect([...after.tools.values()]).toEqual([...before.tools.values()]);
    // One request (everything fits a 100k chunk): instructions, then the older turns as text.
    expect(calls).toHaveLength(1);
    expect(calls[0].maxTokens).toBe(8_192);
    expect(calls[0].messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(conversationOf(calls[0].messages)).toBe(
      [
        "[user]\nturn 1 request",
        '[assistant]\nturn 1 working\n[tool call read id=t1c0] {"path":"f1-0"}\n[tool call write id=t1c1] {"path":"f1-1"}\n[tool call read id=t1c2] {"path":"f1-2"}',
        "[tool result read id=t1c0]\nturn 1 output t1c0",
        "[tool result write id=t1c1]\nturn 1 output t1c1",
        "[tool result read id=t1c2]\nturn 1 output t1c2",
        "[assistant]\nturn 1 answer",
        "[user]\nturn 2 request",
        '[assistant]\nturn 2 working\n[tool call read id=t2c0] {"path":"f2-0"}',
        "[tool result read id=t2c0]\nturn 2 output t2c0",
        "[assistant]\nturn 2 answer",
      ].join("\n\n"),
    );
  });

  it("R62: a user message between a call and its result moves the cut to an earlier turn", async () => {
    const early = [user("a"), assistant("ok a")];
    const b = [user("b"), assistant("calling", [{ id: "x", name: "read" }])];
    const steer = user("steer while the tool runs");
    const rest = [result("x", "read", "x out"), assistant("done b")];
    const last = [user("d"), assistant("ok d")];
    const transcript = [...early, ...b, steer, ...rest, ...last];
    const { complete } = fakeComplete();

    // keepTurns 2 would cut before `steer`, between call x and its result: the cut moves to `b`.
    const compacted = await summarizingCompactor({ keepTurns: 2 })(request(transcript, complete), signal());

    expect(compacted).toEqual([{ role: "user", content: `${SUMMARY_HEADER}\n\nsummary 1`, timestamp: early[1].timestamp }, ...b, steer, ...rest, ...last]);
    expect(unpairedToolMessages(compacted)).toEqual({ orphanedResults: [], unansweredCalls: [] });
  });

  it("R62: older turns are summarized in chunks that fit, each request carrying the previous summary", async () => {
    const pad = " lorem ipsum dolor sit amet".repeat(4);
    const turns = Array.from({ length: 8 }, (_, i) => turn(i + 1, 2, pad));
    const transcript = turns.flat();
    const chunkTokens = 650;
    const { complete, calls } = fakeComplete((i) => reply(`rolling summary after chunk ${i + 1}`));

    const compacted = await summarizingCompactor({ chunkTokens, maxSummaryTokens: 64, keepTurns: 2 })(request(transcript, complete), signal());

    // Greedy on turn boundaries: two turns fit a chunk, a third would not.
    expect(calls.map((call) => conversationOf(call.messages).match(/turn \d+ request/g))).toEqual([
      ["turn 1 request", "turn 2 request"],
      ["turn 3 request", "turn 4 request"],
      ["turn 5 request", "turn 6 request"],
    ]);
    calls.forEach((call, i) => {
      expect(call.maxTokens).toBe(64);
      expect(estimateTokens(call.messages)).toBeLessThanOrEqual(chunkTokens);
      const prompt = userText(call.messages);
      if (i === 0) expect(prompt).not.toContain("<summary>");
      else expect(prompt).toContain(`<summary>\nrolling summary after chunk ${i}\n</summary>`);
      // Chunks close on turn boundaries: each starts with a turn's user message.
      expect(conversationOf(call.messages)).toMatch(/^\[user\]\nturn \d+ request/);
    });
    // Every older turn went to exactly one chunk, in order.
    const sent = calls.map((call) => conversationOf(call.messages)).join("\n\n");
    const older = turns.slice(0, 6).flat();
    expect(sent.match(/turn \d+ request/g)).toEqual(older.filter((m) => (m as Message).role === "user").map((m) => (m as UserMessage).content.toString().replace(pad, "")));
    expect(sent.match(/\[tool result \w+ id=\w+\]/g)).toHaveLength(12);
    expect(compacted).toEqual([
      { role: "user", content: `${SUMMARY_HEADER}\n\nrolling summary after chunk ${calls.length}`, timestamp: turns[5].at(-1)!.timestamp },
      ...turns[6],
      ...turns[7],
    ]);
  });

  it("R62: a turn larger than a chunk is split between its messages, and a message larger than a chunk is cut", async () => {
    const huge = "x".repeat(10_000);
    const big = [user("read the log"), assistant("reading", [{ id: "log", name: "read" }]), result("log", "read", huge), assistant("the log is long")];
    const transcript = [...big, ...turn(2, 0), ...turn(3, 0)];
    const chunkTokens = 300;
    const { complete, calls } = fakeComplete();

    const compacted = await summarizingCompactor({ chunkTokens, maxSummaryTokens: 32 })(request(transcript, complete), signal());

    calls.forEach((call) => expect(estimateTokens(call.messages)).toBeLessThanOrEqual(chunkTokens));
    expect(calls.map((call) => conversationOf(call.messages).split("\n")[0])).toEqual(["[user]", "[tool result read id=log]", "[assistant]"]);
    expect(conversationOf(calls[1].messages)).toMatch(/^\[tool result read id=log\]\nx+\n\[… \d+ characters omitted\]$/);
    expect(compacted.slice(1)).toEqual([...turn(2, 0), ...turn(3, 0)].map((m) => ({ ...m, timestamp: expect.any(Number) })));
    expect(unpairedToolMessages(compacted)).toEqual({ orphanedResults: [], unansweredCalls: [] });
  });

  it("R62: a chunk size that leaves no room for conversation is a typed error, before any request", async () => {
    const { complete, calls } = fakeComplete();
    const run = summarizingCompactor({ chunkTokens: 50 })(request([...turn(1, 0), ...turn(2, 0), ...turn(3, 0)], complete), signal());
    await expect(run).rejects.toMatchObject({ name: "CompactionError", kind: "window_too_small" });
    expect(calls).toHaveLength(0);
  });

  it("R62: a second compaction rolls the earlier summary into the new one", async () => {
    const first = await summarizingCompactor()(request([...turn(1, 1), ...turn(2, 0), ...turn(3, 0)], fakeComplete(() => reply("first summary")).complete), signal());
    const { complete, calls } = fakeComplete(() => reply("second summary"));
    const second = await summarizingCompactor()(request([...first, ...turn(4, 0)], complete), signal());
    expect(conversationOf(calls[0].messages)).toContain(`[user]\n${SUMMARY_HEADER}\n\nfirst summary`);
    expect(second).toHaveLength(1 + 2 * 2);
    expect(second[0]).toMatchObject({ role: "user", content: `${SUMMARY_HEADER}\n\nsecond summary` });
  });

  it("R62: keepTurns 0 summarizes every turn", async () => {
    const transcript = [...turn(1, 1), ...turn(2, 0)];
    const compacted = await summarizingCompactor({ keepTurns: 0 })(request(transcript, fakeComplete().complete), signal());
    expect(compacted).toEqual([{ role: "user", content: `${SUMMARY_HEADER}\n\nsummary 1`, timestamp: transcript.at(-1)!.timestamp }]);
  });
});

describe("R62: nothing to compact", () => {
  it("R62: too few turns — the same transcript comes back and no request is made", async () => {
    const transcript = [system("prompt"), ...turn(1, 3), ...turn(2, 1)];
    const { complete, calls } = fakeComplete();
    await expect(summarizingCompactor({ keepTurns: 2 })(request(transcript, complete), signal())).resolves.toBe(transcript);
    await expect(summarizingCompactor({ keepTurns: 3 })(request(transcript, complete), signal())).resolves.toBe(transcript);
    expect(calls).toHaveLength(0);
  });

  it("R62: a turn resumed by an output-limit recovery message counts as one turn", async () => {
    const truncated: AssistantMessage = { ...assistant("half an ans"), stopReason: "length" };
    const recovery: UserMessage = { ...user("Resume where you stopped."), recovery: "output_limit" };
    const transcript = [user("q1"), truncated, recovery, assistant("wer"), ...turn(2, 0)];
    const { complete, calls } = fakeComplete();
    await expect(summarizingCompactor({ keepTurns: 2 })(request(transcript, complete), signal())).resolves.toBe(transcript);
    expect(calls).toHaveLength(0);
  });

  it("R62: only messages the summary cannot see (app-defined ones) before the kept turns — unchanged", async () => {
    const note = { role: "note", text: "ui only", timestamp: tick() } as unknown as AgentMessage;
    const transcript = [note, ...turn(1, 0), ...turn(2, 0)];
    const { complete, calls } = fakeComplete();
    await expect(summarizingCompactor()(request(transcript, complete), signal())).resolves.toBe(transcript);
    expect(calls).toHaveLength(0);
  });
});

describe("R62: a compactor that cannot summarize throws a typed error", () => {
  const transcript = () => [...turn(1, 3), ...turn(2, 0), ...turn(3, 0)];

  it("R62: an error message from complete", async () => {
    const failure = reply("", { content: [], stopReason: "error", errorMessage: "529 overloaded_error" });
    const run = summarizingCompactor()(request(transcript(), fakeComplete(() => failure).complete), signal());
    await expect(run).rejects.toBeInstanceOf(CompactionError);
    await expect(run).rejects.toMatchObject({ kind: "model_error", response: failure, message: "Compaction failed: the summary request failed: 529 overloaded_error" });
  });

  it("R62: an aborted response, an empty answer, a rejecting complete, a non-message", async () => {
    const cases: [() => Promise<AssistantMessage>, string][] = [
      [async () => reply("", { stopReason: "aborted", errorMessage: "Request was aborted" }), "aborted"],
      [async () => reply("  "), "empty_summary"],
      [() => Promise.reject(new Error("socket hang up")), "request_failed"],
      [async () => ({ nope: true }) as unknown as AssistantMessage, "request_failed"],
    ];
    for (const [answer, kind] of cases) {
      await expect(summarizingCompactor()(request(transcript(), fakeComplete(answer).complete), signal())).rejects.toMatchObject({ name: "CompactionError", kind });
    }
  });

  it("R62: a summary cut by the output limit is kept as it is (its thinking and tool calls ignored)", async () => {
    const cutShort = reply("", {
      stopReason: "length",
      content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "The user wanted" }, { type: "toolCall", id: "z", name: "read", arguments: {} }],
    });
    const compacted = await summarizingCompactor()(request(transcript(), fakeComplete(() => cutShort).complete), signal());
    expect(compacted[0]).toMatchObject({ role: "user", content: `${SUMMARY_HEADER}\n\nThe user wanted` });
    expect(unpairedToolMessages(compacted)).toEqual({ orphanedResults: [], unansweredCalls: [] });
  });

  it("R62: a failure in a later chunk discards the partial summaries", async () => {
    const turns = Array.from({ length: 6 }, (_, i) => turn(i + 1, 1, " padding".repeat(30)));
    const { complete, calls } = fakeComplete((i) => (i === 1 ? reply("", { stopReason: "error", errorMessage: "boom" }) : reply(`s${i}`)));
    await expect(summarizingCompactor({ chunkTokens: 300, maxSummaryTokens: 32 })(request(turns.flat(), complete), signal())).rejects.toMatchObject({ kind: "model_error" });
    expect(calls).toHaveLength(2);
  });

  it("R62: invalid options are refused when the compactor is built", () => {
    expect(() => summarizingCompactor({ keepTurns: -1 })).toThrow(AgentInputError);
    expect(() => summarizingCompactor(null as unknown as undefined)).toThrow(/options must be an object/);
    expect(() => summarizingCompactor({ chunkTokens: 0 })).toThrow(/chunkTokens must be an integer ≥ 1, got 0/);
    expect(() => summarizingCompactor({ maxSummaryTokens: 1.5 })).toThrow(AgentInputError);
    expect(() => summarizingCompactor({ instructions: " " })).toThrow(/instructions must be a non-empty string/);
  });

  it("R62: a model without a context window needs chunkTokens", async () => {
    const req = { ...request(transcript(), fakeComplete().complete), model: { ...scriptedModel, contextWindow: 0 } };
    await expect(summarizingCompactor()(req, signal())).rejects.toMatchObject({ kind: "window_too_small", message: expect.stringContaining("set chunkTokens") });
    await expect(summarizingCompactor({ chunkTokens: 1_000 })(req, signal())).resolves.toHaveLength(1 + 4);
  });
});

describe("R62: compaction honours the abort signal", () => {
  const transcript = () => [...turn(1, 3), ...turn(2, 0), ...turn(3, 0)];

  it("R62: an already aborted signal — no request", async () => {
    const controller = new AbortController();
    controller.abort();
    const { complete, calls } = fakeComplete();
    await expect(summarizingCompactor()(request(transcript(), complete), controller.signal)).rejects.toMatchObject({ name: "CompactionError", kind: "aborted" });
    expect(calls).toHaveLength(0);
  });

  it("R62: an abort during a request that never settles rejects at once", async () => {
    const controller = new AbortController();
    let started!: () => void;
    const requested = new Promise<void>((resolve) => (started = resolve));
    const complete: CompactRequest["complete"] = () => {
      started();
      return new Promise(() => {});
    };
    const run = summarizingCompactor()(request(transcript(), complete), controller.signal);
    await requested;
    controller.abort(new Error("user pressed Escape"));
    await expect(run).rejects.toMatchObject({ kind: "aborted", message: "Compaction aborted", cause: new Error("user pressed Escape") });
  });

  it("R62: an abort between chunks stops before the next request", async () => {
    const controller = new AbortController();
    const turns = Array.from({ length: 6 }, (_, i) => turn(i + 1, 1, " padding".repeat(30)));
    const { complete, calls } = fakeComplete((i) => {
      controller.abort();
      return reply(`s${i}`);
    });
    await expect(summarizingCompactor({ chunkTokens: 300, maxSummaryTokens: 32 })(request(turns.flat(), complete), controller.signal)).rejects.toMatchObject({ kind: "aborted" });
    expect(calls).toHaveLength(1);
  });
});

describe("R62: with a real StreamFn (the scripted model)", () => {
  it("R62: complete built with streamCompletion drives the stream function; its requests are the chunks", async () => {
    const model = scriptedStreamFn([
      { content: [text("Earlier: the user asked for turns 1–3; files were read.")], usage: { input: 120, output: 14 } },
      { content: [text("Earlier: turns 1–6 done; all files read and written.")], usage: { input: 150, output: 15 } },
      { content: [text("unused")] },
    ]);
    const controller = new AbortController();
    const turns = Array.from({ length: 7 }, (_, i) => turn(i + 1, 3, " padding".repeat(10)));
    const transcript = turns.flat();
    const req: CompactRequest = {
      messages: transcript,
      model: scriptedModel,
      reason: "threshold",
      estimatedTokens: estimateTokens(transcript),
      complete: streamCompletion(model, scriptedModel, { apiKey: "sk-test", signal: controller.signal, temperature: 0 }),
    };

    const compacted = await summarizingCompactor({ keepTurns: 1, chunkTokens: 800, maxSummaryTokens: 100 })(req, controller.signal);

    // Six older turns, three per chunk.
    expect(model.calls).toHaveLength(2);
    model.calls.forEach((call) => expect(estimateTokens(call.context.messages)).toBeLessThanOrEqual(800));
    expect(model.calls.map((call) => conversationOf(call.context.messages).match(/turn \d+ request/g))).toEqual([
      ["turn 1 request", "turn 2 request", "turn 3 request"],
      ["turn 4 request", "turn 5 request", "turn 6 request"],
    ]);
    expect(model.calls.map((call) => call.options)).toEqual([
      { temperature: 0, maxTokens: 100 },
      { temperature: 0, maxTokens: 100 },
    ]);
    expect(model.calls.every((call) => call.hadApiKey)).toBe(true);
    expect(model.calls.map((call) => call.context.messages.map((m) => m.role))).toEqual([
      ["system", "user"],
      ["system", "user"],
    ]);
    expect(userText(model.calls[1].context.messages)).toContain("<summary>\nEarlier: the user asked for turns 1–3; files were read.\n</summary>");
    expect(compacted).toEqual([
      { role: "user", content: `${SUMMARY_HEADER}\n\nEarlier: turns 1–6 done; all files read and written.`, timestamp: turns[5].at(-1)!.timestamp },
      ...turns[6],
    ]);
    expect(unpairedToolMessages(compacted)).toEqual({ orphanedResults: [], unansweredCalls: [] });
  });

  it("R62: a scripted overload and a throwing stream function become typed errors", async () => {
    const transcript = [...turn(1, 1), ...turn(2, 0), ...turn(3, 0)];
    const overloaded = scriptedStreamFn([{ stopReason: "error", errorMessage: "529 overloaded" }]);
    const throwing = scriptedStreamFn([{ throws: { message: "fetch failed" } }]);
    for (const [fn, message] of [
      [overloaded, "Compaction failed: the summary request failed: 529 overloaded"],
      [throwing, "Compaction failed: the summary request failed: fetch failed"],
    ] as const) {
      const complete = streamCompletion(fn, scriptedModel, { signal: signal() });
      await expect(summarizingCompactor()(request(transcript, complete), signal())).rejects.toMatchObject({ kind: "model_error", message });
    }
  });
});

describe("R62: the token estimate", () => {
  it("R62: the last response's usage plus the characters added since, / 4", () => {
    const transcript: AgentMessage[] = [
      user("x".repeat(400)),
      assistant("y".repeat(40), [], { input: 1_000, output: 50, cacheRead: 200, cacheWrite: 10 }),
      user("z".repeat(398)), // 398 chars
      assistant("w", [{ id: "c", name: "read", args: { p: 1 } }]), // no usage yet (error-free, zero): "w" + "read" + '{"p":1}' = 12 chars
      result("c", "read", "r".repeat(20)), // 20 + "read" = 24 chars
    ];
    expect(estimateTokens(transcript)).toBe(1_260 + Math.ceil((398 + 12 + 24) / 4));
  });

  it("R62: without any usage, every character counts; an error response with zero usage is skipped", () => {
    const failed: AssistantMessage = { ...assistant("oops"), stopReason: "error", errorMessage: "prompt is too long" };
    expect(estimateTokens([user("a".repeat(10)), failed])).toBe(Math.ceil((10 + 4) / 4));
    const withUsage = [user("a"), assistant("b", [], { input: 500, output: 5 }), user("c".repeat(8)), failed];
    expect(estimateTokens(withUsage)).toBe(505 + Math.ceil((8 + 4) / 4));
  });

  it("R62: usageFrom ignores the kept messages' stale usage after a replacement", () => {
    const stale = assistant("kept answer", [], { input: 150_000, output: 100 });
    const replaced = [{ role: "user", content: `${SUMMARY_HEADER}\n\nshort`, timestamp: 1 } as UserMessage, user("q"), stale];
    expect(estimateTokens(replaced)).toBe(150_100);
    const chars = SUMMARY_HEADER.length + 2 + 5 + 1 + "kept answer".length;
    expect(estimateTokens(replaced, { usageFrom: replaced.length })).toBe(Math.ceil(chars / 4));
    const fresh = assistant("next", [], { input: 900, output: 10 });
    expect(estimateTokens([...replaced, fresh], { usageFrom: replaced.length })).toBe(910);
  });

  it("R62: system messages count their tools and sections; an image counts 1,200 tokens", () => {
    const decl = tool("read");
    const sys = system("abcd", { sections: { a: "12345678" }, toolsAdded: [decl] });
    expect(estimateTokens([sys])).toBe(Math.ceil((4 + 8 + JSON.stringify([decl]).length) / 4));
    const picture: UserMessage = { role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: 1 };
    expect(estimateTokens([picture])).toBe(1_200);
  });
});

describe("R62: what the Anthropic provider makes of it", () => {
  const claude = anthropicModel("claude-sonnet-4-5");

  it("R62: a summary request declares no tools; the compacted transcript keeps every tool_use with its tool_result", async () => {
    const head = system("You are a coding agent.", { toolsAdded: [tool("read"), tool("write")] });
    const transcript = [head, ...turn(1, 3), ...turn(2, 1), ...turn(3, 3), ...turn(4, 2)];
    const { complete, calls } = fakeComplete();
    const compacted = await summarizingCompactor()({ ...request(transcript, complete), model: claude }, signal());

    const summaryRequest = buildRequest(claude, calls[0].messages, { maxTokens: calls[0].maxTokens, promptCaching: false });
    expect(summaryRequest.tools).toBeUndefined();
    expect(summaryRequest.system).toBe(DEFAULT_SUMMARY_INSTRUCTIONS);
    expect(summaryRequest.messages.map((m) => m.role)).toEqual(["user"]);
    expect(summaryRequest.max_tokens).toBe(8_192);

    const next = buildRequest(claude, defaultConvertToLlm(compacted), { promptCaching: false });
    expect(next.tools?.map((t) => (t as { name: string }).name)).toEqual(["read", "write"]);
    // Alternating roles; the summary merges into the first kept user message.
    expect(next.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
    const blocks = next.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
    const uses = blocks.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
    const results = blocks.filter((b) => b.type === "tool_result").map((b) => (b as { tool_use_id: string }).tool_use_id);
    expect(uses).toEqual(["t3c0", "t3c1", "t3c2", "t4c0", "t4c1"]);
    expect(results).toEqual(uses);
    expect(blocks.filter((b) => b.type === "tool_result").every((b) => !JSON.stringify(b).includes("No result provided"))).toBe(true);
  });
});
